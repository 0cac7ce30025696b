"""`:qa` while an edit waits is refused as Vim refuses to quit with unsaved changes (E162
naming what waits); `:qa!` quits; once decided, `:qa` quits. A waiting command does not
hold the quit (nothing would be lost)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from tests.agent_util import (
    TURN_TIMEOUT_S,
    claude,
    core_pid,
    decide,
    edit,
    idle,
    send,
    wait_pending,
)
from tests.conftest import wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.processes import gone
from tests.screen import Screen

__all__ = ["fake_api"]


def propose(nv: Any, fake_api: FakeAnthropic, ws: Path) -> int:
    path = ws / "f.txt"
    path.write_text("one\ntwo\n")
    buf = edit(nv, path)
    edit_args = {"path": "f.txt", "old_string": "two", "new_string": "TWO"}
    fake_api.script(tool_use("propose_edit", edit_args), text("done"))
    send(nv)
    wait_pending(nv)
    return buf


def alive(nv: Any) -> bool:
    return bool(nv.eval("1"))


def test_quitting_while_an_edit_waits_is_refused_naming_it(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 160, 30)
    buf = propose(nv, fake_api, isolated_env)
    editor = nv.api.get_current_win()
    nv.input(":qa<CR>")
    screen.wait_text('E162: No write since last change for buffer "sightline://edit f.txt')
    nv.input("<CR>")
    assert alive(nv)
    # The window shows what it showed, not the guard.
    wait_for(lambda: nv.api.win_get_buf(editor).number == buf, what="the editor window's file")
    nv.input(":wqa<CR>")
    screen.wait_text("edit f.txt (+1 −1) waits for your decision: :Sightline accept")
    assert alive(nv)
    assert nv.api.buf_get_lines(buf, 0, -1, False) == ["one", "two"]
    decide(nv, "reject")
    idle(nv)
    wait_for(lambda: nv.exec_lua("return require('sightline.ui.quitguard').buffer()") is None)
    pid = core_pid(nv)
    with contextlib.suppress(Exception):  # Neovim ends
        nv.command("qa")
    wait_for(lambda: gone(pid), TURN_TIMEOUT_S, "Neovim and its core to end")


def test_qa_bang_quits_while_an_edit_waits(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    propose(nv, fake_api, isolated_env)
    pid = core_pid(nv)
    with contextlib.suppress(Exception):
        nv.command("qa!")
    wait_for(lambda: gone(pid), TURN_TIMEOUT_S, "Neovim and its core to end")
