"""One editor window (issue 21 item 4): `@buffer`, a reveal's peek and go_to_position all act in
the most recently used normal window of the tab that is not the pane, the dialog or a float —
not in the largest one, nor in whichever a buffer's `lastused` second happens to name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import claude, idle
from tests.conftest import wait_for
from tests.fakeapi import FakeAnthropic, fake_api

__all__ = ["fake_api"]


def lines(label: str) -> str:
    return "".join(f"{label} line {i}\n" for i in range(1, 41))


def test_the_pane_acts_in_the_window_the_user_left_last_even_when_it_is_the_small_one(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, isolated_env: Path
) -> None:
    for name in ("big", "small", "far"):
        (isolated_env / f"{name}.txt").write_text(lines(name))
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 160, 40)
    nv.command("edit big.txt")
    big = nv.api.get_current_win().handle
    nv.command("botright split small.txt | resize 6")
    small = nv.api.get_current_win().handle
    # The user works in the small window, then opens the pane and steps from its transcript
    # back to the composer (so the previous window is the pane's own).
    nv.input("3G")
    nv.input("\\ss")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    composer = nv.api.get_current_win().handle
    nv.input("<Esc><C-w>k")
    wait_for(lambda: nv.api.get_current_win().handle != composer, what="the transcript")
    nv.input("<C-w>j")
    wait_for(lambda: nv.api.get_current_win().handle == composer, what="back in the composer")

    nv.input(":Sightline reveal far.txt 30 32<CR>")
    screen.wait_text("far line 30")
    over = nv.exec_lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do "
        "  if vim.w[w].sightline_role == 'reveal_peek' then "
        "    return vim.api.nvim_win_get_config(w).win "
        "  end "
        "end"
    )
    # The peek lies over the window the user used last, where they look.
    assert over == small
    row, _ = screen.find("far line 30") or (0, 0)
    top = nv.call("win_screenpos", small)[0] - 1
    assert top <= row < top + nv.api.win_get_height(small)
    assert nv.api.win_get_buf(big).name.endswith("big.txt")  # the other window is untouched

    # `@buffer` sends the same window's buffer.
    nv.input("iwhat is this? @buffer<Esc><CR>")
    idle(nv)
    (req,) = fake_api.wait_for_requests(1)
    part = req.body["messages"][0]["content"][1]["text"]
    assert part.startswith('<buffer path="small.txt">\n')
    assert nv.api.get_current_win().handle == composer
