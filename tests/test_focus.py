"""The agent never redirects the user's keystrokes (issue 9 item 4): go_to_position while the
user types in the composer, is on the command line or has the focus in the pane keeps the
window and mode, moves only the editor window's cursor and sets '< '> for `gv`.

Every test types what the user types with a UI attached and asserts what must not change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import claude, idle, only_result
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, hold, reply, text, tool_use

__all__ = ["fake_api"]

SOURCE = "".join(f"line {i} of the source\n" for i in range(1, 41))

STATE = r"""
local api = vim.api
local buf = vim.fn.bufnr(...)
return {
  win = api.nvim_get_current_win(), mode = api.nvim_get_mode().mode,
  tick = api.nvim_buf_get_changedtick(buf), lines = api.nvim_buf_get_lines(buf, 0, -1, true),
}
"""


def composer_text(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.pane').buffers().composer")
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def editor_win(nv: Any) -> int:
    return int(nv.exec_lua("return require('sightline.reveal').editor_window()"))


def start_with_source(
    nvim_factory: Any, fake_api: FakeAnthropic, ws: Path, screen_factory: Any
) -> tuple[Any, Any]:
    (ws / "src.txt").write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 200, 40)
    nv.command("edit src.txt")
    screen.wait_text("line 1 of the source")
    return nv, screen


def test_go_to_position_while_typing_in_the_composer_keeps_focus_and_mode(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, screen = start_with_source(nvim_factory, fake_api, isolated_env, screen_factory)
    source_win = nv.api.get_current_win().handle
    goto = {"file_path": "src.txt", "line": 20, "column": 2, "end_line": 22, "end_column": 4}
    fake_api.script(hold(of=tool_use("go_to_position", goto)), reply(text("There it is.")))
    nv.input("\\ss")  # the chat mapping, <Leader>ss
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    composer = nv.api.get_current_win().handle
    nv.input("show me<C-s>")
    fake_api.wait_for_requests(1)
    before = nv.exec_lua(STATE, "src.txt")
    # The user starts the next message while the model is still answering.
    nv.input("and then")
    wait_for(lambda: composer_text(nv) == ["and then"], what="the first typed words")
    fake_api.release()
    result = only_result(fake_api)
    nv.input(" keep going")
    wait_for(lambda: composer_text(nv) == ["and then keep going"], what="the rest of the words")
    idle(nv)
    after = nv.exec_lua(STATE, "src.txt")
    # Where the keys go did not change: the window, the mode, the file.
    assert after == before and after["win"] == composer and after["mode"] == "i"
    assert after["lines"] == SOURCE.splitlines()
    # The editor window's cursor moved; the model and the user are told how to get there.
    assert nv.api.win_get_cursor(source_win) == [20, 1]
    assert result.get("is_error") is None
    content = result["content"]
    assert content.startswith("OK (kept the focus where it was (Insert mode in the composer)")
    assert "gv there selects 20:2–22:4" in content
    note = next(line for line in transcript(nv) if "kept the focus" in line)
    assert "gv there selects 20:2–22:4" in note
    screen.wait_text("20:2–22:4")
    # gv in the editor window selects the range the model named.
    nv.input("<Esc><C-w>h")
    wait_for(lambda: nv.api.get_current_win().handle == source_win, what="the editor window")
    nv.input("gv")
    wait_for(lambda: nv.api.get_mode()["mode"] == "v", what="Visual mode after gv")
    assert nv.eval("getpos('v')[1:2]") == [20, 2]
    assert nv.api.win_get_cursor(0) == [22, 3]
    screen.wait_for(lambda s: s.mode == "visual", what="the UI in Visual mode")
