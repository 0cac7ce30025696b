"""Chips in the transcript: references the agent writes and the selection note navigate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.chips import reference_finder
from tests.conftest import transcript, wait_for, wait_idle
from tests.fakeapi import FakeAnthropic, fake_api, text

__all__ = ["fake_api"]

REVEAL_MARKS = """
local buf = vim.fn.bufnr(...)
if buf < 0 then return {} end
local ns = vim.api.nvim_create_namespace('sightline.reveal')
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {details = true})) do
  if m[4].hl_group == 'SightlineReveal' then table.insert(out, {m[2], m[4].end_row}) end
end
return out
"""


def test_finder_only_marks_existing_workspace_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    find = reference_finder(str(tmp_path))
    line = "see src/app.py:3-5 and src/none.py:2, also ../etc/passwd:1 and src/app.py:0"
    chips = find(line)
    assert [c[2] for c in chips] == [{"file_path": "src/app.py", "start_line": 3, "end_line": 5}]
    col, end_col, _ = chips[0]
    assert line.encode()[col:end_col] == b"src/app.py:3-5"


def test_finder_marks_at_mentions_of_existing_files(tmp_path: Path) -> None:
    (tmp_path / "my notes.md").write_text("x\n")
    find = reference_finder(str(tmp_path))
    line = "é read @my\\ notes.md and @missing.md, not @ext:tools"
    (chip,) = find(line)
    col, end_col, target = chip
    assert line.encode()[col:end_col] == b"@my\\ notes.md"
    assert target == {"file_path": "my notes.md", "start_line": 1, "end_line": 1}


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
    twin = nv.exec_lua("return vim.fn.bufwinid(require('sightline.pane').buffers().transcript)")
    nv.api.set_current_win(twin)
    row = chip_rows(nv, "app.py:30-32")
    col = transcript(nv)[row - 1].index("app.py")
    nv.api.win_set_cursor(twin, (row, col))
    nv.input("<CR>")
    marks = wait_for(lambda: nv.exec_lua(REVEAL_MARKS, "app.py"), what="the reveal band")
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
    twin = nv.exec_lua("return vim.fn.bufwinid(require('sightline.pane').buffers().transcript)")
    nv.api.set_current_win(twin)
    nv.api.win_set_cursor(twin, (chip_rows(nv, "about m.py:3"), 0))
    nv.input("<CR>")
    marks = wait_for(lambda: nv.exec_lua(REVEAL_MARKS, "m.py"), what="the reveal band")
    assert marks[0][0] == 4
