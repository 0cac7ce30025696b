"""What the pane keeps saying must still be true: a stop with nothing running is a message,
not a line of the transcript, and a new conversation starts without the old one's notes."""

from __future__ import annotations

from typing import Any

from tests.conftest import wait_for
from tests.screen import Screen


def pane_rows(nv: Any, screen: Screen) -> list[str]:
    """The screen cells of the pane's column (the transcript, its notes and its bar)."""
    col = int(
        nv.exec_lua(
            "local buf = require('sightline.ui.pane').buffers().transcript"
            " return vim.fn.win_screenpos(vim.fn.bufwinid(buf))[2]"
        )
    )
    return [line[col - 1 :] for line in screen.lines()]


def open_pane(nv: Any, screen: Screen) -> None:
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="Insert mode in the composer")
    nv.input("<Esc><C-w>p")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n")


def test_an_idle_stop_is_a_message_and_a_reset_starts_clean(nvim: Any, screen_factory: Any) -> None:
    screen: Screen = screen_factory(nvim, 120, 30)
    open_pane(nvim, screen)
    nvim.input(":Sightline stop<CR>")
    screen.wait_for(
        lambda s: "sightline: no turn is running" in s.lines()[-1], what="the one-line message"
    )
    assert not any("no turn is running" in row for row in pane_rows(nvim, screen)[:-1])
    # A refusal is said in the pane; the new conversation does not show it.
    nvim.input(":Sightline accept<CR>")
    screen.wait_for(
        lambda s: any("✗ nothing is waiting" in row for row in pane_rows(nvim, s)),
        what="the refusal in the pane",
    )
    nvim.input(":Sightline reset<CR>")
    screen.wait_for(
        lambda s: not any("nothing is waiting" in row for row in pane_rows(nvim, s)[:-1]),
        what="the new conversation without the old note",
    )


def test_the_pane_stop_key_while_idle_is_a_message(nvim: Any, screen_factory: Any) -> None:
    screen: Screen = screen_factory(nvim, 120, 30)
    open_pane(nvim, screen)
    nvim.input("<C-w>p")
    # The pane's stop key, typed: nvim_input would make <C-c> an interrupt, not a key.
    nvim.feedkeys(nvim.replace_termcodes("<C-c>", True, False, True), "mt", False)
    screen.wait_for(
        lambda s: "sightline: no turn is running" in s.lines()[-1], what="the one-line message"
    )
    assert not any("no turn is running" in row for row in pane_rows(nvim, screen)[:-1])
