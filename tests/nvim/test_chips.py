"""Chips in the transcript: references the agent writes and the selection note navigate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sightline.ui.chips import attachment_id
from tests.agent_util import claude, idle, only_result, tool_names
from tests.conftest import transcript, wait_for, wait_idle
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.lua_helper import lua_helper

__all__ = ["fake_api"]


def chip_rows(nv: Any, needle: str) -> int:
    lines = transcript(nv)
    return next(i for i, line in enumerate(lines) if needle in line) + 1


def test_cr_on_agent_reference_reveals_without_moving_the_cursor(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 40)))
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": "k"})
    nv.command("edit app.py")
    fake_api.script(text("Look at app.py:30-32 for the loop."))
    nv.command("Sightline chat")
    nv.exec_lua("assert(require('sightline').send('where?'))")
    wait_idle(nv)
    editor = nv.call("win_getid", 1)
    cursor = nv.api.win_get_cursor(editor)
    nv.input("<Esc>")
    twin = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    nv.api.set_current_win(twin)
    row = chip_rows(nv, "app.py:30-32")
    col = transcript(nv)[row - 1].index("app.py")
    nv.api.win_set_cursor(twin, (row, col))
    nv.input("<CR>")
    marks = wait_for(lambda: lua_helper(nv, "marks.band", "app.py"), what="the reveal band")
    assert marks[0][0] == 29
    assert nv.api.win_get_cursor(editor) == cursor
    assert nv.api.get_current_win().handle == twin


def test_selection_chip_follows_later_edits(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "m.py").write_text("a\nb\ntarget\nc\n")
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": "k"})
    nv.command("edit m.py")
    rng = {"buffer": 0, "start_row": 2, "start_col": 0, "end_row": 2, "end_col": 6}
    nv.exec_lua("assert(require('sightline').send('why?', ...))", rng)
    wait_idle(nv)
    nv.api.buf_set_lines(0, 0, 0, False, ["new 1", "new 2"])  # the text moves down two rows
    nv.command("Sightline chat")
    nv.input("<Esc>")
    twin = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    nv.api.set_current_win(twin)
    nv.api.win_set_cursor(twin, (chip_rows(nv, "about m.py:3"), 0))
    nv.input("<CR>")
    marks = wait_for(lambda: lua_helper(nv, "marks.band", "m.py"), what="the reveal band")
    assert marks[0][0] == 4


def test_model_reveals_the_selection_chip_by_its_id(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    """Issue 9 item 11: in a scoped turn (Change with Agent) the model is told the selection's
    attachment_id and reveal_attachment (kind view: every turn kind) shows it; nothing moves."""
    (isolated_env / "m.py").write_text("".join(f"v{i} = {i}\n" for i in range(60)))
    nv = claude(nvim_factory, fake_api)
    nv.command("edit m.py")
    nv.api.win_set_cursor(0, (1, 0))
    rng = {"buffer": 0, "start_row": 40, "start_col": 0, "end_row": 41, "end_col": 7}
    chip = {**rng, "file_path": "m.py"}
    aid = attachment_id(chip, "sel")
    fake_api.script(
        tool_use("reveal_attachment", {"attachment_id": aid}),
        text("there"),
    )
    tick = nv.api.buf_get_var(0, "changedtick")
    nv.exec_lua("assert(require('sightline').send('why?', ...))", rng)
    idle(nv)
    assert "reveal_attachment" in tool_names(fake_api)
    first = fake_api.requests[0].body["messages"][0]["content"]
    assert any(f"attachment_id: {aid} = the selection" in b.get("text", "") for b in first)
    result = only_result(fake_api)
    assert result == {**result, "content": "OK"} and not result.get("is_error")
    assert lua_helper(nv, "marks.band") == [[40, 42]]
    assert nv.api.win_get_cursor(0) == [1, 0]
    assert nv.api.buf_get_var(0, "changedtick") == tick
    assert nv.api.get_mode()["mode"] == "n"


@pytest.mark.parametrize("key", ["gs", "<S-CR>"])
def test_select_key_on_a_chip_focuses_the_editor_and_selects(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, key: str
) -> None:
    """Issue 19 item 3: gs / <S-CR> always select (:help sightline-chips): the focus moves to
    the editor window, the range is selected in Visual mode, and the file the chip opened is
    named as `:edit app.py` names it (not by its absolute path)."""
    (isolated_env / "app.py").write_text("".join(f"line {i}\n" for i in range(1, 40)))
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("Look at app.py:30-32 for the loop."))
    nv.command("Sightline chat")
    nv.exec_lua("assert(require('sightline').send('where?'))")
    idle(nv)
    editor = nv.call("win_getid", 1)
    nv.input("<Esc>")
    twin = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    nv.api.set_current_win(twin)
    row = chip_rows(nv, "app.py:30-32")
    nv.api.win_set_cursor(twin, (row, transcript(nv)[row - 1].index("app.py")))
    nv.input(key)
    wait_for(lambda: nv.api.get_mode()["mode"] == "V", what="Visual mode")
    assert nv.api.get_current_win().handle == editor
    assert nv.call("bufname", "%") == "app.py"
    assert sorted([nv.call("line", "v"), nv.call("line", ".")]) == [30, 32]
    assert "app.py" in nv.exec_lua("return vim.fn.execute('ls')")
    assert str(isolated_env) not in nv.exec_lua("return vim.fn.execute('ls')")
