"""A tool call's line names what it is about: a built-in tool by the argument it declares, an
MCP tool by all its arguments in short (the server gets them all), secrets left out."""

from __future__ import annotations

from sightline.domain import secrets
from sightline.tools.registry import LABEL_CHARS, call_label


def test_an_mcp_call_is_labelled_by_its_arguments_in_short() -> None:
    label = call_label("mcp__docs__search", {"query": "review gate", "limit": 3})
    assert label == 'mcp__docs__search query="review gate", limit=3'
    assert call_label("mcp__docs__list", {}) == "mcp__docs__list"
    long = call_label("mcp__docs__search", {"query": "x" * 500, "text": "line one\nline two"})
    assert "\n" not in long and len(long) <= len("mcp__docs__search ") + LABEL_CHARS
    assert long.startswith('mcp__docs__search query="xxx') and "…" in long


def test_an_mcp_call_never_shows_a_secret() -> None:
    secrets.register("sk-label-secret-0042")
    label = call_label(
        "mcp__api__call",
        {"api_key": "abc", "Authorization": "Bearer x", "body": "uses sk-label-secret-0042"},
    )
    assert label == 'mcp__api__call api_key=…, Authorization=…, body="uses [REDACTED]"'


def test_a_built_in_tool_keeps_its_declared_argument() -> None:
    assert call_label("read_file", {"path": "src/app.py", "junk": "x"}) == "read_file src/app.py"
    assert call_label("unknown_tool", {"path": "a"}) == "unknown_tool"
