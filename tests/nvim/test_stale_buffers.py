"""Stale buffers (issue 20 item 14): before any read or write of a loaded buffer through the
editor port, Neovim's view of the file is brought up to date (lua/sightline/port/buffers.lua).
An unmodified buffer whose file changed is reloaded, silently, whatever 'autoread' says; a
modified one keeps the user's text, and the model is told its file changed on disk. No
prompt appears and the user's window, cursor and mode stay as they were."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.acp_util import acp_nvim
from tests.agent_util import claude, edit, idle, lines, send, tool_results, wait_pending
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.screen import Screen

__all__ = ["fake_api"]

OLD = "def total(xs):\n    return sum(xs)\n"
NEW = "def total(values):\n    return sum(values) or 0\n"
# What Neovim shows when it asks about a file changed on disk, or waits for a key.
PROMPTS = ("W11", "W12", "W16", "E211", "Press ENTER", "[O]K", "(L)oad File")


def no_prompt(screen: Screen, nv: Any) -> None:
    shown = screen.text()
    assert not any(p in shown for p in PROMPTS), shown
    assert nv.api.get_mode()["blocking"] is False


def type_in_pane(nv: Any, keys: str) -> None:
    """Keys typed in the pane's transcript, where the review keys are."""
    win = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    nv.api.set_current_win(win)
    nv.input(keys)


def open_in_editor(nv: Any, path: Path) -> tuple[int, int]:
    """The file open in the editor window beside the pane; returns (buffer, window)."""
    buf = edit(nv, path)
    win = nv.api.get_current_win().handle
    nv.api.win_set_cursor(win, [2, 4])
    nv.command("Sightline chat")
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    return buf, win


@pytest.mark.parametrize("autoread", [True, False])
def test_a_command_that_rewrites_an_open_file_is_what_read_file_and_edits_see(
    nvim_factory: Any,
    fake_api: FakeAnthropic,
    screen_factory: Any,
    isolated_env: Path,
    autoread: bool,
) -> None:
    path = isolated_env / "app.py"
    path.write_text(OLD)
    nv = claude(nvim_factory, fake_api)
    nv.api.set_option("autoread", autoread)  # reloaded either way: nothing unsaved is lost
    screen = screen_factory(nv, 140, 30)
    buf, win = open_in_editor(nv, path)
    rewrite = f"printf '{NEW.replace(chr(10), chr(92) + 'n')}' > app.py"
    fake_api.script(
        tool_use("run_command", {"command": rewrite}),
        tool_use("read_file", {"path": "app.py"}),
        tool_use(
            "propose_edit",
            {"path": "app.py", "old_string": "sum(values) or 0", "new_string": "sum(values)"},
        ),
        text("done"),
    )
    send(nv)
    wait_pending(nv)
    type_in_pane(nv, "ga")  # run it
    wait_for(lambda: status(nv).get("pending", "").startswith("edit app.py"), 30, "the edit")
    (read,) = tool_results(fake_api, 2)
    assert "sum(values) or 0" in read["content"] and "sum(xs)" not in read["content"]
    assert "note:" not in read["content"]
    assert lines(nv, buf) == NEW.splitlines()  # the user's window shows the file too
    no_prompt(screen, nv)
    type_in_pane(nv, "ga")  # accept the edit
    idle(nv)
    (applied,) = tool_results(fake_api, 3)
    assert applied["content"] == "accepted: app.py was changed and saved."
    assert path.read_text() == NEW.replace(" or 0", "")
    assert nv.api.win_get_cursor(win) == [2, 4]
    assert nv.api.buf_get_option(buf, "buflisted") is True
    no_prompt(screen, nv)


def test_unsaved_text_is_kept_and_the_model_is_told_the_file_changed_on_disk(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(OLD)
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 140, 30)
    buf = edit(nv, path)
    nv.input("ggOimport sys<Esc>")  # the user's unsaved change
    wait_for(lambda: nv.api.buf_get_option(buf, "modified"), what="the unsaved change")
    path.write_text(NEW)  # and the file changes on disk meanwhile
    fake_api.script(
        tool_use("read_file", {"path": "app.py"}),
        tool_use(
            "propose_edit",
            {"path": "app.py", "old_string": "sum(values) or 0", "new_string": "sum(values)"},
        ),
        text("done"),
    )
    send(nv)
    idle(nv)
    (read,) = tool_results(fake_api, 1)
    assert "import sys" in read["content"]  # the editor's text, the one edits go to …
    assert "unsaved changes in the editor and the file also changed on disk" in read["content"]
    (edited,) = tool_results(fake_api, 2)
    assert edited["is_error"] and "occurs 0 times" in edited["content"]
    assert "also changed on disk" in edited["content"]  # … the loop's way out
    assert lines(nv, buf) == ["import sys", *OLD.splitlines()]
    assert nv.api.buf_get_option(buf, "modified") is True
    assert path.read_text() == NEW
    no_prompt(screen, nv)


def test_buffers_of_files_an_acp_agent_wrote_itself_show_what_it_wrote(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    names = ("same.py", "other.py", "mine.py", "hidden.py")
    same, other, mine, hidden = (isolated_env / n for n in names)
    same.write_text("aaaa\n")
    other.write_text("old\n")
    mine.write_text("x = 1\n")
    hidden.write_text("cccc\n")
    turn: list[dict[str, Any]] = [
        # Same size, the mtime put back: Neovim's stat cannot tell; the content does.
        {"disk_write": str(same), "content": "bbbb\n", "keep_mtime": True},
        {"disk_write": str(hidden), "content": "dddd\n", "keep_mtime": True},
        {"disk_write": str(other), "content": "new and longer\n"},
        {"disk_write": str(mine), "content": "x = 2\n"},
        {"say": "done"},
    ]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    bufs = [edit(nv, p) for p in (same, other, mine, hidden)]
    nv.command(f"buffer {bufs[2]}")
    nv.input("ggAmine<Esc>")  # mine.py: the user's unsaved text
    wait_for(lambda: nv.api.buf_get_option(bufs[2], "modified"), what="the unsaved change")
    nv.command(f"buffer {bufs[0]}")
    nv.input("i")  # the user types in same.py's window while the agent works
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode")
    win = nv.api.get_current_win().handle
    send(nv, "go")
    idle(nv)
    assert lines(nv, bufs[0]) == ["bbbb"] and lines(nv, bufs[1]) == ["new and longer"]
    assert lines(nv, bufs[2]) == ["x = 1mine"] and mine.read_text() == "x = 2\n"
    assert lines(nv, bufs[3]) == ["dddd"]  # shown in no window
    assert nv.call("bufwinid", bufs[3]) == -1
    assert nv.api.get_mode()["mode"] == "i" and nv.api.get_current_win().handle == win
    shown = "\n".join(transcript(nv))
    assert "open with unsaved changes, so the agent's version on disk was not loaded" in shown
    assert "mine.py" in shown.split("not loaded:")[1]


# -- the rule itself, at the port: any interleaving of user edits and disk writes ----------

SYNC = """
local path, op, arg = ...
local port = require('sightline.port')
local buf = vim.fn.bufnr(path)
if op == 'type' then
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { arg })
elseif op == 'save' then
  vim.api.nvim_buf_call(buf, function() vim.cmd('silent write!') end)
elseif op == 'known' then
  port.call(nil, 'sync_files', { path })
end
local got = port.call(nil, 'read_lines', path, 0, -1, 1000)
return { got.lines, got.modified, got.disk or vim.NIL }
"""
SECOND = 1_000_000_000


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("type"), st.sampled_from(["u1", "u2"])),
            st.tuples(st.just("save"), st.just("")),
            # A write from outside, its mtime then moved a second back or on (Neovim overlooks
            # one second at the same size), a microsecond on, or put back as it was (only the
            # content tells then: the core's snapshot does, and passes it to sync_files).
            st.tuples(
                st.just("disk"),
                st.sampled_from(["aa", "bb", "ccc"]),
                st.sampled_from([-SECOND, SECOND, 1000, 0]),
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_every_read_sees_the_file_or_is_told_the_buffer_was_kept(
    nvim: Any, tmp_path_factory: Any, ops: list[tuple[Any, ...]]
) -> None:
    path = tmp_path_factory.mktemp("sync") / "f.txt"
    path.write_text("start\n")
    nvim.exec_lua("require('sightline.port')")  # as once the core has run
    nvim.command(f"silent! %bwipeout! | edit {path}")
    disk = ["start"]  # what the file holds
    synced = True  # the file is as the buffer last read or wrote it
    for op in ops:
        if op[0] == "disk":
            before = path.stat()
            path.write_text(op[1] + "\n")
            ns = before.st_mtime_ns + op[2]
            os.utime(path, ns=(ns, ns))
            disk, synced = [op[1]], False
            how = ("known", "") if op[2] == 0 else ("read", "")
            got_lines, modified, code = nvim.exec_lua(SYNC, str(path), *how)
        else:
            got_lines, modified, code = nvim.exec_lua(SYNC, str(path), *op)
            if op[0] == "save":
                disk, synced = list(got_lines), True
        if not modified:
            assert (got_lines, code) == (disk, None), (ops, op)
            synced = True
        else:
            assert code == (None if synced else "conflict"), (ops, op)
            assert got_lines[0] in ("u1", "u2")  # the user's text is kept
    assert not nvim.api.get_mode()["blocking"]


def test_an_acp_read_of_unsaved_text_over_a_changed_file_is_refused_with_why(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "notes.md"
    path.write_text("one\n")
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"read": str(path)}, {"say": "ok"}]])
    buf = edit(nv, path)
    nv.api.buf_set_lines(buf, 0, 0, False, ["mine"])  # unsaved
    path.write_text("two, from elsewhere\n")
    send(nv, "go")
    idle(nv)
    (err,) = log.wait("read_error")
    assert "notes.md has unsaved changes in the editor and the file also changed" in err["message"]
    assert lines(nv, buf) == ["mine", "one"] and path.read_text() == "two, from elsewhere\n"


# Each port function that reads or writes through a loaded buffer, called as the core calls
# it after the file changed on disk: the one rule (port/buffers.lua) holds for every path.
PATHS = {
    "read_lines": "port.call(nil, 'read_lines', path, 0, -1, 100)",
    "read_text (@path, ACP reads)": "port.call(nil, 'read_text', path, 1000)",
    "editor_buffer (@buffer)": "port.call(nil, 'editor_buffer', 1000)",
    "find_unique (propose_edit)": "port.call(nil, 'find_unique', path, 'new', 1)",
    "load_lines (ACP writes)": "port.call(nil, 'load_lines', path)",
    "apply_edit": (
        "port.call(nil, 'apply_edit', {path = path, anchor = 'new', rel_start = 0, "
        "rel_end = 3, text = 'NEW'})"
    ),
    "reanchor_range (replace_selection)": (
        "port.call(nil, 'reanchor_range', {buffer = buf, start_row = 0, start_col = 0, "
        "end_row = 0, end_col = 3}, 'new', 1)"
    ),
    "replace_range (replace_selection)": (
        "port.call(nil, 'replace_range', {buffer = buf, start_row = 0, start_col = 0, "
        "end_row = 0, end_col = 3}, 'new', 'NEW')"
    ),
}


@pytest.mark.parametrize("call", PATHS.values(), ids=list(PATHS))
def test_every_port_path_reads_the_buffer_up_to_date(
    nvim: Any, isolated_env: Path, call: str
) -> None:
    path = isolated_env / "f.txt"
    path.write_text("old text\n")
    nvim.command("set noautoread")  # reloaded all the same: nothing unsaved is lost
    buf = edit(nvim, path)
    path.write_text("new text, longer\n")
    nvim.exec_lua(
        f"local path, buf = ... local port = require('sightline.port') _G.got = {call}",
        str(path),
        buf,
    )
    assert lines(nvim, buf)[0] in ("new text, longer", "NEW text, longer")
    assert nvim.exec_lua("return vim.inspect(_G.got)").find("old text") == -1
