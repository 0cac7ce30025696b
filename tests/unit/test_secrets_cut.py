"""Redact first, then cut (issue 20 §11): a text cut to its size limit never ends in part of a
known key, nor begins with one, on any surface that cuts — rules files, `@path`, read_file's
and grep's lines, command output and MCP results (HeadTail). Once cut, the choke points
(Request, history, transcript) redact the whole keys left."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.agent.prompt import RULES_MAX_FILE_BYTES, load_rules
from sightline.domain import secrets
from sightline.mentions import build_parts
from sightline.tools.output import HeadTail, clip_line

# The key's characters never occur in the filler, so any 8 of them in a row come from it.
KEY = "SK-CUTKEY-QWERTYZXCVBNMPLKJHGF"
FILLER = st.text(alphabet="abcdefgh ij\n.", max_size=300)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(autouse=True)
def _key() -> None:
    secrets.register(KEY)


def leaks(text: str) -> list[str]:
    """The pieces of 8+ characters of the key left in `text` once redacted."""
    shown = secrets.redact(text)
    return [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in shown]


def planted(before: str, after: str, times: int) -> str:
    return before + (KEY + after) * times


@FUZZ
@given(before=FILLER, after=FILLER, times=st.integers(1, 3), limit=st.integers(0, 400))
def test_a_cut_point_never_splits_a_key(before: str, after: str, times: int, limit: int) -> None:
    text = planted(before, after, times)
    cut = secrets.cut_point(text, limit)
    assert cut <= limit and not leaks(text[:cut])
    start = secrets.start_point(text, len(text) - limit)
    assert start >= len(text) - limit and not leaks(text[start:])
    # The head of a longer text, whose rest was not read: a key running off its end.
    head = text[: limit + 1]
    assert not leaks(head[: secrets.cut_point(head, limit, more=True)])


@FUZZ
@given(before=FILLER, after=FILLER, times=st.integers(1, 3), limit=st.integers(1, 400))
def test_a_clipped_line_never_shows_part_of_a_key(
    before: str, after: str, times: int, limit: int
) -> None:
    line = planted(before, after, times).replace("\n", " ")
    assert not leaks(clip_line(line, limit))
    assert not leaks(clip_line(line[: limit + 5], limit, len(line)))  # grep's head of a line


@FUZZ
@given(
    before=FILLER,
    after=FILLER,
    times=st.integers(1, 4),
    size=st.integers(30, 300),
    chunk=st.integers(1, 64),
)
def test_command_output_and_mcp_results_never_show_part_of_a_key(
    before: str, after: str, times: int, size: int, chunk: int
) -> None:
    data = planted(before, after, times).encode()
    sink = HeadTail(size)
    for i in range(0, len(data), chunk):
        sink.feed(data[i : i + chunk])
    assert not leaks(sink.text())


@FUZZ
@given(before=FILLER, after=FILLER, times=st.integers(1, 3), limit=st.integers(1, 400))
def test_a_mentioned_file_cut_to_its_limit_never_shows_part_of_a_key(
    before: str, after: str, times: int, limit: int
) -> None:
    data = planted(before, after, times).encode()
    assert not leaks(build_parts._decode(data[: limit + 1], limit).text)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(offset=st.integers(1, len(KEY) - 1))
def test_a_rules_file_cut_through_a_key_shows_none_of_it(tmp_path: Path, offset: int) -> None:
    # The case: the cut fell inside the key and its first characters reached the model.
    text = "x" * (RULES_MAX_FILE_BYTES - offset) + KEY + " and more"
    (tmp_path / "CLAUDE.md").write_text(text)
    (rules,) = load_rules(str(tmp_path))
    assert rules.cut and not leaks(rules.text)
