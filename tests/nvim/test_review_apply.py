"""port/apply.lua on its own (no core): the span the core computed lands exactly, as one
undo step, at any place of the buffer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sightline.domain import diff

CASES = {
    "append a line": ("one\ntwo\n", "one\ntwo\nthree\n"),
    "prepend a line": ("one\ntwo\n", "zero\none\ntwo\n"),
    "delete the first line": ("one\ntwo\nthree\n", "two\nthree\n"),
    "delete the last line": ("one\ntwo\nthree\n", "one\ntwo\n"),
    "join lines": ("a(\n  x\n)\n", "a(x)\n"),
    "split a line": ("a(x)\n", "a(\n  x\n)\n"),
    "multibyte": ("é = 'ü'\nñ\n", "é = 'üü'\nñ\n"),
    "empty to text": ("\n", "text\n"),
    "text to empty": ("text\n", "\n"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_anchored_span_applies_exactly_as_one_undo_step(
    nvim: Any, isolated_env: Path, case: str
) -> None:
    before, after = CASES[case]
    path = isolated_env / "f.txt"
    path.write_text(before)
    nvim.command(f"edit {path}")
    edit = diff.anchored_edit(before, after, 0, len(before))
    res = nvim.exec_lua(
        "return require('sightline.port.apply').apply(...)",
        {
            "path": str(path.resolve()),
            "anchor": edit.anchor,
            "rel_start": edit.rel_start,
            "rel_end": edit.rel_end,
            "text": edit.text,
        },
    )
    assert res == {"ok": True, "saved": True}
    assert path.read_text() == after
    nvim.command("undo")
    assert diff.buffer_text(nvim.current.buffer[:]) == before
    assert nvim.call("undotree")["seq_cur"] == 0


def test_stale_anchor_is_reported_with_its_count(nvim: Any, isolated_env: Path) -> None:
    path = isolated_env / "f.txt"
    path.write_text("x\nx\n")
    nvim.command(f"edit {path}")
    spec = {"path": str(path.resolve()), "anchor": "x", "rel_start": 0, "rel_end": 1, "text": "y"}
    assert nvim.exec_lua("return require('sightline.port.apply').apply(...)", spec) == {
        "stale": True,
        "count": 2,
    }
    assert nvim.current.buffer[:] == ["x", "x"]
