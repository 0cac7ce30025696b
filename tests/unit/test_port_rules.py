"""Each rule has one home: workspace confinement is domain/workspace.py `resolve`, and `@path`
mentions and transcript chips follow it exactly (property test over paths built from `..`,
symlinks in and out, absolute paths)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import workspace
from sightline.domain.errors import Refused
from sightline.domain.mentions import parse_mentions
from sightline.mentions.build_parts import build_context_parts
from sightline.ui.chips import REFERENCE, reference_finder

SEGMENTS = ["..", ".", "sub", "a.txt", "in.txt", "link", "out.txt", "ws"]


def tree(base: Path) -> Path:
    ws = base / "ws"
    if ws.exists():
        return ws
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("A")
    (ws / "sub" / "in.txt").write_text("IN")
    (base / "out.txt").write_text("OUT")
    (ws / "link").symlink_to(base)  # leads out
    (ws / "sub" / "link").symlink_to(ws)  # stays in
    return ws


def tool_allows(ws: Path, raw: str) -> bool:
    try:
        return workspace.resolve(str(ws), raw).is_file()
    except Refused:
        return False


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tree(tmp_path_factory.mktemp("rules"))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5), st.booleans())
def test_read_tools_mentions_and_chips_share_one_confinement(
    ws: Path, parts: list[str], absolute: bool
) -> None:
    raw = "/".join(parts)
    if absolute:
        raw = str(ws / raw)
    # Each feature's own syntax picks the path out of the text; the rule then is the same.
    mentioned = [m for m in parse_mentions(f"@{raw} ") if m.kind == "file"]
    if mentioned:
        attached = build_context_parts(f"@{raw} ", {}, ws)
        assert bool(attached) == tool_allows(ws, mentioned[0].value), raw
    ref = REFERENCE.search(f"see {raw}:1 ")
    if ref:
        chips = reference_finder(str(ws))(f"see {raw}:1 ")
        assert bool(chips) == tool_allows(ws, ref.group(1)), raw


def test_a_mention_may_pass_through_dotdot_when_it_ends_inside(ws: Path) -> None:
    assert build_context_parts("@sub/../a.txt", {}, ws) == ['<file path="a.txt">\nA\n</file>']
    assert build_context_parts("@../out.txt", {}, ws) == []
    assert build_context_parts("@link/out.txt", {}, ws) == []
