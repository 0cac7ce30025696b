"""Re-anchoring a selection inside Neovim: moved → found, duplicated/edited/deleted → refused."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.lua_helper import lua_helper


def setup_buf(nv: Any, lines: list[str]) -> int:
    nv.api.buf_set_lines(0, 0, -1, False, lines)
    return int(nv.api.get_current_buf().number)


def rng(buf: int, sr: int, sc: int, er: int, ec: int) -> dict[str, int]:
    return {"buffer": buf, "start_row": sr, "start_col": sc, "end_row": er, "end_col": ec}


@pytest.mark.parametrize("watch", [True, False], ids=["mirrored", "unmirrored"])
def test_moved_text_is_found_at_its_single_new_place(nvim: Any, watch: bool) -> None:
    buf = setup_buf(nvim, ["alpha", "def f():", "    return 1", "omega"])
    r = rng(buf, 1, 4, 2, 8)  # "f():\n    retu"
    text = "f():\n    retu"
    if watch:
        nvim.exec_lua("require('sightline.port.scope').watch(...)", buf)
    nvim.api.buf_set_lines(buf, 0, 0, False, ["# new", "# lines"])
    got = lua_helper(nvim, "probes.anchor", r, text, watch)
    assert got == rng(buf, 3, 4, 4, 8)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ("duplicate", "ambiguous"),
        ("edit", "missing"),
        ("delete", "missing"),
    ],
)
def test_changed_text_is_refused(nvim: Any, edit: str, why: str) -> None:
    buf = setup_buf(nvim, ["alpha", "target line here", "omega"])
    r, text = rng(buf, 1, 0, 1, 11), "target line"
    nvim.exec_lua("require('sightline.port.scope').watch(...)", buf)
    if edit == "duplicate":
        nvim.api.buf_set_lines(buf, 0, 0, False, ["target line again"])
    elif edit == "edit":
        nvim.api.buf_set_text(buf, 1, 0, 1, 6, ["TARGET"])
    else:
        nvim.api.buf_set_lines(buf, 1, 2, False, [])
    assert lua_helper(nvim, "probes.anchor", r, text, False)["error"] == why


def test_text_still_in_place_wins_even_if_repeated_elsewhere(nvim: Any) -> None:
    buf = setup_buf(nvim, ["same", "same"])
    assert lua_helper(nvim, "probes.anchor", rng(buf, 1, 0, 1, 4), "same", True) == rng(
        buf, 1, 0, 1, 4
    )


def test_mirror_tracks_random_edits(nvim: Any) -> None:
    rand = random.Random(7)
    buf = setup_buf(nvim, [f"line {i}" for i in range(50)])
    nvim.exec_lua("require('sightline.port.scope').watch(...)", buf)
    for _ in range(60):
        count = len(nvim.api.buf_get_lines(buf, 0, -1, False))
        a = rand.randrange(count)
        b = min(count, a + rand.randrange(3))
        new = [f"n{rand.randrange(99)}" for _ in range(rand.randrange(3))]
        if b - a == count and not new:
            new = ["only"]
        nvim.api.buf_set_lines(buf, a, b, False, new)
        if rand.random() < 0.2:
            nvim.command("undo")
    mirror = nvim.exec_lua(
        "local s = require('sightline.port.scope') return s._mirror_lines(...)", buf
    )
    assert mirror == nvim.api.buf_get_lines(buf, 0, -1, False)


def test_replace_is_one_undo_step_and_returns_the_new_range(nvim: Any) -> None:
    buf = setup_buf(nvim, ["keep", "old one", "old two", "keep"])
    nvim.command("let &undolevels = &undolevels")
    got = nvim.exec_lua(
        "return require('sightline.port.scope').replace(...).range",
        rng(buf, 1, 0, 2, 7),
        "old one\nold two",
        "new\nlines\nhere",
    )
    assert got == rng(buf, 1, 0, 3, 4)
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["keep", "new", "lines", "here", "keep"]
    got2 = nvim.exec_lua(
        "return require('sightline.port.scope').replace(...).range",
        got,
        "new\nlines\nhere",
        "second",
    )
    assert got2 == rng(buf, 1, 0, 1, 6)
    nvim.command("undo")
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["keep", "new", "lines", "here", "keep"]
    nvim.command("undo")
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["keep", "old one", "old two", "keep"]
