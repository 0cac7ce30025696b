"""One config schema: config.lua holds the defaults and sends the whole effective config;
Python keeps none (a missing key is refused, named)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain.config import ConfigError, CoreConfig
from sightline.providers import REGISTRY
from tests.effective_config import EFFECTIVE, core_config


def test_what_neovim_sends_is_the_effective_config(nvim: Any) -> None:
    sent = nvim.exec_lua("return require('sightline.host')._config_for_core()")
    for key, value in EFFECTIVE.items():
        if isinstance(value, dict):
            assert {k: sent[key][k] for k in value} == value, key
        else:
            assert sent[key] == value, key
    assert CoreConfig.from_dict(sent) == core_config()


def test_the_tool_schema_mirrors_the_config_schema(nvim: Any) -> None:
    """Syntax-scope kinds and reveal's duration bounds: one home (config.lua), which the
    static tool definitions and pyresolve's kinds are checked against."""
    from sightline.domain import pyresolve
    from sightline.tools import view

    lua = nvim.exec_lua(
        "local c = require('sightline.config') return {c.SYNTAX_SCOPE_KINDS, c.REVEAL_DURATION_MS,"
        " require('sightline.resolve').KINDS, c.get().reveal.duration_ms}"
    )
    kinds, duration, resolve_kinds, default = lua
    assert view.KINDS == kinds == resolve_kinds
    assert sorted(pyresolve.KINDS) == sorted(kinds)
    assert duration == view.DURATION_MS
    assert default == duration["default"]
    described = view.REVEAL_DEF["inputSchema"]["properties"]["duration_ms"]["description"]
    assert f"{duration['min']}..{duration['max']}; default {duration['default']}" in described


# -- one config check: what setup() accepts, the core accepts -----------------------------------

_NUMBERS = st.sampled_from(
    [0, 1, -1, 1.5, 100.0, 1023, 1024, 8192, 128_000, 128_001, 2**31 - 1, 2**31, 2**53 + 1]
)
_TEXTS = st.one_of(
    st.sampled_from(["", "x", "low", "medium", "high", "gemini", "http://127.0.0.1:9", "a b"]),
    st.sampled_from([4097, 5000]).map(lambda n: "m" * n),
    st.text(max_size=12),
)
_VALUES = st.one_of(_NUMBERS, _TEXTS, st.booleans(), st.lists(_TEXTS, max_size=3))
_PROVIDER_KEYS = (
    "model",
    "max_tokens",
    "base_url",
    "api_key_cmd",
    "timeout_ms",
    "retries",
    "thinking",
    "context_window",
    "agent",
    "deployment",
    "api_version",
    "entra_token_cmd",
    "region",
    "project",
)
_SERVER = st.one_of(
    st.fixed_dictionaries({"command": _TEXTS}), st.fixed_dictionaries({"url": _TEXTS})
).flatmap(
    lambda base: st.fixed_dictionaries(
        {k: st.just(v) for k, v in base.items()},
        optional={
            "args": st.lists(_TEXTS, max_size=3),
            "env": st.dictionaries(_TEXTS, _TEXTS, max_size=2),
            "kind": st.sampled_from(["read", "exec", "x"]),
            "enabled": st.booleans(),
        },
    )
)


@st.composite
def setup_opts(draw: st.DrawFn) -> dict[str, Any]:
    """A setup() table with one part near the schema's edges (a provider and one or two of
    its keys, the limits of mentions and tools, or an MCP server): one bad value anywhere
    refuses the whole table, so each example tries one thing."""
    part = draw(st.sampled_from(["provider", "limits", "mcp"]))
    if part == "provider":
        provider: dict[str, Any] = {"name": draw(st.sampled_from(sorted(REGISTRY)))}
        for key in draw(st.lists(st.sampled_from(_PROVIDER_KEYS), max_size=2, unique=True)):
            provider[key] = draw(_VALUES)
        return {"provider": provider}
    if part == "limits":
        key = draw(st.sampled_from(["max_file_bytes", "max_total_bytes"]))
        tool = draw(st.sampled_from(["command_timeout_ms", "max_iterations"]))
        return {"mentions": {key: draw(_NUMBERS)}, "tools": {tool: draw(_NUMBERS)}}
    name = draw(st.one_of(st.sampled_from(["fs", "a" * 65, "tab\there"]), st.text(max_size=8)))
    return {"mcp": {"servers": {name: draw(_SERVER)}}}


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(opts=setup_opts())
def test_a_config_setup_accepts_is_one_the_core_accepts(nvim: Any, opts: dict[str, Any]) -> None:
    """One check, at setup() time: the core never refuses later (at core.init, after the
    user's setup() said nothing) a value setup() took."""
    ok, sent = nvim.exec_lua(
        """local config = require('sightline.config')
        local cfg, err = config.build(...)
        if not cfg then return { false, err } end
        cfg.provider.name = config.provider_name(cfg)  -- as host.lua's config_for_core
        return { true, cfg }""",
        opts,
    )
    if ok:
        try:
            CoreConfig.from_dict(sent)
        except ConfigError as err:
            pytest.fail(f"setup() took {repr(opts)[:300]}; the core refused it: {err}")
    else:
        assert isinstance(sent, str) and sent.startswith("sightline.")  # named by its path


@pytest.mark.parametrize(
    ("opts", "said"),
    [
        ({"mcp": {"servers": {"fs": {"url": "ftp://h"}}}}, "sightline.mcp.servers.fs.url: exp"),
        ({"mcp": {"servers": {"fs": {"command": ""}}}}, "sightline.mcp.servers.fs.command: e"),
        ({"mcp": {"servers": {"a" * 65: {"command": "x"}}}}, "expected names of 1 to 64"),
        ({"provider": {"context_window": 10}}, "sightline.provider.context_window: expected"),
    ],
)
def test_setup_refuses_what_the_core_once_refused_at_start(
    nvim: Any, opts: dict[str, Any], said: str
) -> None:
    ok, err, _ = nvim.exec_lua("return { require('sightline.config').setup(...) }", opts)
    assert ok is False and said in err


def test_a_thinking_budget_for_an_openai_provider_is_refused_by_setup(nvim: Any) -> None:
    opts = {"provider": {"name": "ollama", "thinking": 2048}}
    ok, err, _ = nvim.exec_lua("return { require('sightline.config').setup(...) }", opts)
    assert ok is False
    assert err == (
        "sightline.provider.thinking: expected 'low', 'medium' or 'high' for the ollama "
        "provider (a token budget is for anthropic), got 2048"
    )


def test_the_lua_schema_names_the_providers_of_the_registry(nvim: Any) -> None:
    """A new provider is one module, one REGISTRY line and one line of config.lua PROVIDERS;
    what provider.thinking means to each is its capabilities', checked by setup()."""
    from sightline.providers import make_provider
    from tests.effective_config import provider_config

    lua = nvim.exec_lua("return require('sightline.config').PROVIDERS")
    assert sorted(lua) == sorted(REGISTRY)
    for name, facts in lua.items():
        provider = make_provider(provider_config(name=name))
        thinking = facts.get("thinking") if isinstance(facts, dict) else None  # {} is a list
        assert (name, thinking) == (name, provider.capabilities.thinking)
        provider.close()
    valid = nvim.exec_lua("return require('sightline.config').schema.provider.name[1]('nope')")
    assert valid is False
