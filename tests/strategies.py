"""Hypothesis strategies for RPC params and config values: odd text, deep nesting, anything."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.effective_config import EFFECTIVE, merged

surrogates = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1)


odd_text = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(max_codepoint=0x7F), max_size=40),
    st.builds(lambda a, b: a + "\0" + b, st.text(max_size=8), st.text(max_size=8)),
    st.builds(lambda a, s: a + s, st.text(max_size=8), surrogates),
    st.sampled_from([4097, 5000, 70_000, (1 << 20) + 1, (1 << 22) + 1]).map(lambda n: "x" * n),
)


def nested(depth: int) -> Any:
    value: Any = []
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    odd_text,
    st.binary(max_size=16),
)


json_like = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)


anything = st.one_of(json_like, st.sampled_from([100, 5000, 50_000]).map(nested))


def config_values() -> st.SearchStrategy[Any]:
    provider = st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["echo", "nope", ""]) | anything,
            "model": st.sampled_from(["m"]) | anything,
            "max_tokens": st.sampled_from([1, 8192, 0, -1, 1.5, 2**60]) | anything,
            "base_url": anything,
            "api_key_cmd": st.sampled_from(["true", ["echo", "k"], []]) | anything,
            "timeout_ms": st.sampled_from([1, 0.5, 1e300, float("nan"), 2**40]) | anything,
            "retries": st.integers(-2, 12) | anything,
        },
    )
    section = st.dictionaries(
        st.sampled_from(
            ["max_file_bytes", "max_total_bytes", "max_iterations", "command_timeout_ms"]
        ),
        st.integers(-1, 1 << 20) | anything,
    )
    config = st.fixed_dictionaries(
        {},
        optional={
            "provider": provider | anything,
            "mentions": section | anything,
            "tools": section | anything,
            "autoaccept": st.booleans() | anything,
            "pane": anything,
        },
    )
    # The Lua side sends the whole effective config: mostly that with fuzzed values over it
    # (so valid configs are reached), and sometimes keys missing or anything at all.
    return config.map(lambda over: merged(EFFECTIVE, over)) | config | anything
