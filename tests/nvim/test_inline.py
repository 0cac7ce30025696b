"""The edit proposal in its buffer: drawn inline, decided hunk by hunk, applied as one undo step."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import diff
from tests.agent_util import claude, decide, edit, idle, lines, only_result, send, wait_pending
from tests.conftest import capture_notify, status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.screen import Screen

__all__ = ["fake_api"]

SOURCE = "".join(f"line {i}\n" for i in range(1, 13))
# Three hunks: a change (line 2), a deletion (line 6), an addition (after line 10).
OLD = "line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n"
NEW = "line 2 CHANGED\nline 3\nline 4\nline 5\nline 7\nline 8\nline 9\nline 10\nadded one\n"
FULL = SOURCE.replace(OLD, NEW)
GROUPS = {
    "SightlineHunkAdd": "DiffAdd",
    "SightlineHunkDelete": "DiffDelete",
    "SightlineHunkChange": "DiffText",
}


def propose(path: str = "f.txt", old: str = OLD, new: str = NEW) -> Any:
    return tool_use("propose_edit", {"path": path, "old_string": old, "new_string": new})


def shown(nv: Any) -> Any:
    return nv.exec_lua("return require('sightline.ui.inline').shown()")


def marks(nv: Any, buf: int) -> list[Any]:
    ns = nv.exec_lua("return require('sightline.ui.inline').ns")
    return list(nv.api.buf_get_extmarks(buf, ns, 0, -1, {}))


def buf_maps(nv: Any, buf: int) -> dict[str, str]:
    got = nv.api.buf_get_keymap(buf, "n")
    return {m["lhs"]: m.get("rhs", "") for m in got}


def start(
    nvim_factory: Any, fake_api: FakeAnthropic, ws: Path, *replies: Any, **cfg: Any
) -> tuple[Any, int, Path]:
    path = ws / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api, **cfg)
    buf = edit(nv, path)
    fake_api.script(*(replies or (propose(), text("done"))))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv), what="the proposal drawn inline")
    return nv, buf, path


def test_drawn_inline_in_every_window_with_groups_and_the_buffer_unchanged(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 80, 40)
    buf = edit(nv, path)
    # Linked by default (so the screen would name DiffAdd…): own colours name the groups.
    for i, (group, target) in enumerate(GROUPS.items()):
        assert nv.api.get_hl(0, {"name": group, "link": True}) == {"link": target}, group
        nv.api.set_hl(0, group, {"bg": f"#1{i}2{i}3{i}", "ctermbg": i + 1})
    nv.command("setlocal number")
    nv.command("vsplit")  # a second window on the same buffer, without numbers
    nv.command("setlocal nonumber")
    tick = nv.api.buf_get_var(buf, "changedtick")
    fake_api.script(propose(), text("done"))
    send(nv)
    wait_pending(nv)
    # The added line appears as a virtual line under the last removed/kept line, twice.
    screen.wait_for(lambda s: s.text().count("added one") == 2, what="the virtual line twice")
    screen.wait_for(lambda s: s.text().count("line 2 CHANGED") == 2)
    for row, line in enumerate(screen.lines()):
        for needle, group in (("added one", "SightlineHunkAdd"), ("CHANGED", "SightlineHunkAdd")):
            for col in _columns(line, needle):
                assert screen.group_at(row, col) == group, (row, line)
        for col in _columns(line, "line 6"):  # a removed line: the buffer's own, highlighted
            assert screen.group_at(row, col) == "SightlineHunkDelete", (row, line)
    # The number column (the right window has one) is coloured by the hunk's kind.
    for number, group in (("6", "SightlineHunkDelete"), ("2", "SightlineHunkChange")):
        row, col = screen.find(f" {number} line {number}") or (-1, -1)
        assert row >= 0, screen.text()
        assert screen.group_at(row, col + 1) == group
    # No sign column was opened (the rule of the reveal bar).
    assert nv.exec_lua("return vim.fn.getwininfo(vim.api.nvim_get_current_win())[1].textoff") == 0
    assert lines(nv, buf) == SOURCE.splitlines()
    assert nv.api.buf_get_var(buf, "changedtick") == tick
    assert nv.api.buf_get_option(buf, "modified") is False
    decide(nv, "reject")
    idle(nv)
    screen.wait_for(lambda s: "added one" not in s.text(), what="the drawing gone")
    assert marks(nv, buf) == []
    assert nv.api.buf_get_var(buf, "changedtick") == tick


def _columns(line: str, needle: str) -> list[int]:
    at = line.find(needle)
    return list(range(at, at + len(needle))) if at >= 0 else []


def test_partial_accept_by_keys_applies_the_chosen_hunks_as_one_undo_step(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 80, 30)
    buf = edit(nv, path)
    fake_api.script(propose(), text("done"))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv), what="the proposal drawn inline")
    assert {"]h", "[h", "\\ha", "\\hr", "\\hw", "\\hA", "\\hR"} <= set(buf_maps(nv, buf))
    nv.input("gg]h")  # typed: to the first hunk
    wait_for(lambda: nv.api.win_get_cursor(0) == [2, 0])
    nv.input("\\ha")
    wait_for(lambda: shown(nv)["hunks"][0].get("decided") == "accept")
    screen.wait_text("✔ hunk 1/3 accepted")
    nv.input("]h")
    wait_for(lambda: nv.api.win_get_cursor(0) == [6, 0])
    nv.input("\\hw")  # reject with a note, typed in a one-line prompt
    screen.wait_text("Why reject this hunk?")
    nv.input("keep line 6<CR>")
    wait_for(lambda: shown(nv)["hunks"][1].get("decided") == "reject")
    nv.input("]h")
    wait_for(lambda: nv.api.win_get_cursor(0) == [10, 0])
    assert lines(nv, buf) == SOURCE.splitlines()  # nothing applied before the last decision
    nv.input("\\ha")
    idle(nv)
    expected = SOURCE.replace("line 2\n", "line 2 CHANGED\n").replace(
        "line 10\n", "line 10\nadded one\n"
    )
    assert path.read_text() == expected
    assert marks(nv, buf) == [] and shown(nv) is None
    assert "]h" not in buf_maps(nv, buf) and "\\ha" not in buf_maps(nv, buf)
    told = only_result(fake_api)["content"]
    assert told.startswith("partly accepted: of the 3 hunks of your edit, the user applied")
    assert "applied hunks 1, 3 and" in told
    assert "rejected hunk 2 (line 6), the user's note: keep line 6" in told
    assert "keep line 6. f.txt was changed and saved.\n" in told
    assert "     2\tline 2 CHANGED" in told and "    11\tadded one" in told
    nv.command("undo")
    assert lines(nv, buf) == SOURCE.splitlines()
    assert nv.call("undotree")["seq_cur"] == 0  # the whole decision was one undo step


def test_accept_all_and_reject_all_keys_decide_the_rest(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv, _buf, path = start(nvim_factory, fake_api, isolated_env)
    nv.api.win_set_cursor(0, [6, 0])
    nv.input("\\hr")
    wait_for(lambda: shown(nv)["hunks"][1].get("decided") == "reject")
    nv.input("\\hA")
    idle(nv)
    assert path.read_text() == SOURCE.replace("line 2\n", "line 2 CHANGED\n").replace(
        "line 10\n", "line 10\nadded one\n"
    )
    assert "applied hunks 1, 3 and rejected hunk 2 (line 6)." in only_result(fake_api)["content"]


def test_reject_every_hunk_changes_nothing_and_names_the_notes(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv, buf, path = start(nvim_factory, fake_api, isolated_env)
    tick = nv.api.buf_get_var(buf, "changedtick")
    nv.exec_lua("vim.ui.input = function(_, cb) cb('not this one') end")
    nv.api.win_set_cursor(0, [2, 0])
    nv.input("\\hw")
    wait_for(lambda: shown(nv)["hunks"][0].get("decided") == "reject")
    nv.input("\\hR")
    idle(nv)
    assert path.read_text() == SOURCE
    assert nv.api.buf_get_var(buf, "changedtick") == tick
    told = only_result(fake_api)["content"]
    assert told.startswith("rejected by the user: hunk 1 (line 2), the user's note: not this one;")
    assert marks(nv, buf) == []


def test_whole_accept_from_the_pane_is_unchanged(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv, buf, path = start(nvim_factory, fake_api, isolated_env)
    decide(nv, "accept")
    idle(nv)
    assert path.read_text() == FULL
    assert only_result(fake_api)["content"] == "accepted: f.txt was changed and saved."
    assert marks(nv, buf) == []


def test_user_edits_while_hunks_wait_are_followed_or_refused(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, buf, _path = start(nvim_factory, fake_api, isolated_env)
    screen: Screen = screen_factory(nv, 80, 30)
    # An edit above the hunks: the drawing follows it (extmarks), the apply re-anchors.
    nv.api.buf_set_lines(buf, 0, 0, False, ["new top"])
    screen.wait_for(lambda s: (pos := s.find("line 2 CHANGED")) is not None and pos[0] == 3)
    assert [h["start"] for h in shown(nv)["hunks"]] == [2, 6, 10]
    nv.api.win_set_cursor(0, [1, 0])
    nv.input("]h")
    wait_for(lambda: nv.api.win_get_cursor(0) == [3, 0])
    nv.input("\\ha")
    wait_for(lambda: shown(nv)["hunks"][0].get("decided") == "accept")
    nv.input("\\hR")
    idle(nv)
    changed = SOURCE.replace("line 2\n", "line 2 CHANGED\n")
    assert lines(nv, buf) == ["new top", *changed.splitlines()]
    told = only_result(fake_api)["content"]
    assert "applied hunk 1" in told and "differs from your edit elsewhere too" in told


def test_user_edit_inside_the_proposal_refuses_it(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv, buf, _path = start(nvim_factory, fake_api, isolated_env)
    nv.api.buf_set_lines(buf, 5, 6, False, ["line 6 by the user"])
    nv.api.win_set_cursor(0, [2, 0])
    nv.input("\\ha")
    wait_for(lambda: shown(nv)["hunks"][0].get("decided") == "accept")
    nv.input("\\hR")
    idle(nv)
    assert lines(nv, buf)[5] == "line 6 by the user" and lines(nv, buf)[1] == "line 2"
    told = only_result(fake_api)["content"]
    assert told.startswith("refused: f.txt changed since the proposal")
    assert marks(nv, buf) == []


def test_a_key_the_user_mapped_is_neither_taken_nor_removed(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    nv.command("nnoremap <buffer> ]h <Cmd>let g:mine = 1<CR>")
    fake_api.script(propose(), text("done"))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv))
    assert buf_maps(nv, buf)["]h"] == "<Cmd>let g:mine = 1<CR>"
    assert buf_maps(nv, buf)["[h"] == "<Plug>(sightline-hunk-prev)"
    decide(nv, "reject")
    idle(nv)
    maps = buf_maps(nv, buf)
    assert maps.get("]h") == "<Cmd>let g:mine = 1<CR>" and "[h" not in maps


def test_no_stale_marks_after_stop(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv, buf, path = start(nvim_factory, fake_api, isolated_env)
    assert nv.exec_lua("return {require('sightline').stop()}") == [True]
    wait_for(lambda: marks(nv, buf) == [], what="the drawing gone after stop")
    assert shown(nv) is None and "]h" not in buf_maps(nv, buf)
    assert path.read_text() == SOURCE


def test_no_stale_marks_after_a_crash(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv, buf, _path = start(nvim_factory, fake_api, isolated_env)
    capture_notify(nv)
    pid = int(nv.exec_lua("return require('sightline.host').request('core.ping').pid"))
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: status(nv)["state"] == "stopped", what="the crash to be noticed")
    wait_for(lambda: marks(nv, buf) == [], what="the drawing gone after the crash")
    assert shown(nv) is None and "\\ha" not in buf_maps(nv, buf)
    assert lines(nv, buf) == SOURCE.splitlines()


def test_no_stale_marks_after_a_restart(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # Seen when tried by hand: :Sightline restart while hunks showed left them drawn.
    nv, buf, _path = start(nvim_factory, fake_api, isolated_env)
    assert marks(nv, buf) != []
    nv.command("Sightline restart")
    wait_for(lambda: marks(nv, buf) == [], what="the drawing gone after the restart")
    assert shown(nv) is None and "\\ha" not in buf_maps(nv, buf)
    assert lines(nv, buf) == SOURCE.splitlines()


def test_autoaccept_draws_nothing(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    nv.exec_lua(
        "_G.drawn = 0 local i = require('sightline.ui.inline') local show = i.show "
        "i.show = function(...) _G.drawn = _G.drawn + 1 return show(...) end"
    )
    edit(nv, path)
    fake_api.script(propose(), text("done"))
    send(nv)
    idle(nv)
    assert path.read_text() == FULL
    assert nv.exec_lua("return _G.drawn") == 0


def test_pane_keys_step_through_the_hunks_with_reveal_and_the_cursor_stays(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    screen_factory(nv, 80, 30)
    buf = edit(nv, path)
    editor_win = nv.api.get_current_win()
    nv.api.win_set_cursor(0, [12, 0])
    nv.command("Sightline chat")
    fake_api.script(propose(), text("done"))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv))
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    assert buf_maps(nv, tbuf).get("]h") == "<Plug>(sightline-hunk-look-next)"
    nv.api.set_current_win(nv.call("bufwinid", tbuf))
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n")
    pane_win = nv.api.get_current_win()
    looked = []
    for key in ("]h", "]h", "[h"):
        nv.exec_lua("require('sightline.reveal').last = nil")
        nv.input(key)
        last = wait_for(lambda: nv.exec_lua("return require('sightline.reveal').last"))
        looked.append(last["start_line"])
        assert last["buf"] == buf
    assert looked == [2, 6, 2]
    assert nv.api.get_current_win() == pane_win
    assert nv.api.win_get_cursor(editor_win) == [12, 0]
    decide(nv, "reject")
    idle(nv)
    assert "]h" not in buf_maps(nv, tbuf)


SELECTED = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"
AROUND = "header\n{}footer\n"


def test_replace_selection_partial_accept_keeps_the_scope_and_is_one_undo_step(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(AROUND.format(SELECTED))
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    new = "def f():\n    a = 10\n    b = 2\n    c = 3\n    return a * b * c"
    fake_api.script(tool_use("replace_selection", {"text": new}), text("done"))
    rng = {"buffer": buf, "start_row": 1, "start_col": 0, "end_row": 5, "end_col": 20}
    assert nv.exec_lua("return {require('sightline').send(...)}", "fix", rng) == [True]
    wait_pending(nv)
    wait_for(lambda: shown(nv))
    assert [h["start"] for h in shown(nv)["hunks"]] == [2, 5]
    tick = nv.api.buf_get_var(buf, "changedtick")
    nv.api.win_set_cursor(0, [6, 0])
    nv.input("\\hr")
    wait_for(lambda: shown(nv)["hunks"][1].get("decided") == "reject")
    assert nv.api.buf_get_var(buf, "changedtick") == tick
    nv.input("\\hA")
    idle(nv)
    want = AROUND.format(SELECTED.replace("a = 1\n", "a = 10\n"))
    assert path.read_text() == want
    told = only_result(fake_api)["content"]
    assert "applied hunk 1 and rejected hunk 2 (line 6)" in told and "     3\t    a = 10" in told
    nv.command("undo")
    assert lines(nv, buf) == AROUND.format(SELECTED).splitlines()
    assert nv.call("undotree")["seq_cur"] == 0


_LINE = st.sampled_from(["", "a", "b", "\tc", "é ü", "x" * 200])
_TEXT = st.lists(_LINE, max_size=10).map(lambda ls: "\n".join(ls) + "\n")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_TEXT, _TEXT)
def test_any_proposal_draws_one_tracker_per_hunk_and_never_changes_the_buffer(
    nvim: Any, before: str, after: str
) -> None:
    buf = nvim.api.create_buf(True, False)
    nvim.api.buf_set_lines(buf, 0, -1, False, before.split("\n")[:-1] or [""])
    tick = nvim.api.buf_get_var(buf, "changedtick")
    hunks = diff.hunks(diff.buffer_text(nvim.api.buf_get_lines(buf, 0, -1, False)), after)
    spec = {"id": 7, "buffer": buf, "path": "x", "hunks": [h.as_data() for h in hunks]}
    assert nvim.exec_lua("return require('sightline.port').show_hunks(...)", spec) is True
    got = nvim.exec_lua("return require('sightline.ui.inline').shown()")
    assert len(got["hunks"]) == len(hunks)
    assert all(isinstance(h["start"], int) for h in got["hunks"])
    nvim.exec_lua("require('sightline.port').clear_hunks(7)")
    assert marks(nvim, buf) == []
    assert nvim.api.buf_get_var(buf, "changedtick") == tick
    nvim.command(f"bwipeout! {buf.number}")


# What a decided hunk shows: in the buffer, the pane's diff and the compare view --------------

WRITTEN = SOURCE.replace("line 2\n", "line 2 CHANGED\n").replace(
    "line 10\n", "line 10\nadded one\n"
)


def _tick(nv: Any, buf: int) -> int:
    return int(nv.api.buf_get_var(buf, "changedtick"))


def _own_colours(nv: Any) -> None:
    """Own colours for the hunk groups, so that the screen names them (not DiffAdd…)."""
    for i, group in enumerate(GROUPS):
        nv.api.set_hl(0, group, {"bg": f"#1{i}2{i}3{i}", "ctermbg": i + 1})


def _row_starting(screen: Screen, text: str) -> int | None:
    """The screen row whose first cells read `text` (the editor window: column 0)."""
    for row, line in enumerate(screen.lines()):
        if line.startswith(text):
            return row
    return None


def _after_side(nv: Any) -> Any:
    return nv.exec_lua(
        "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
        "if vim.api.nvim_buf_get_name(b):find('· after', 1, true) then return b end end"
    )


def test_an_accepted_hunk_shows_its_new_text_and_a_rejected_one_its_old_until_the_end(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    # Seen by hand: accepting hunk 1 left the buffer showing the old line and a label only.
    (isolated_env / "g.txt").write_text("another file\n")
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 100, 30)
    _own_colours(nv)
    other = edit(nv, isolated_env / "g.txt")
    other_tick = _tick(nv, other)
    buf = edit(nv, path)
    tick = _tick(nv, buf)
    fake_api.script(propose(), text("done"))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv), what="the proposal drawn inline")
    nv.input("gg]h")
    wait_for(lambda: nv.api.win_get_cursor(0) == [2, 0])
    nv.input("\\ha")
    screen.wait_text("✔ hunk 1/3 accepted")
    # What will be written: the new line, still drawn under the line it replaces.
    new_row = screen.wait_for(lambda s: _row_starting(s, "line 2 CHANGED"), what="the new text")
    assert screen.group_at(new_row, 0) == "SightlineHunkAdd"
    old_row = _row_starting(screen, "line 2 ")
    assert old_row is not None and old_row == new_row - 1
    assert screen.group_at(old_row, 0) == "SightlineHunkDelete"
    nv.input("]h")
    wait_for(lambda: nv.api.win_get_cursor(0) == [6, 0])
    nv.input("\\hr")
    screen.wait_text("✗ hunk 2/3 rejected")
    kept = _row_starting(screen, "line 6")
    assert kept is not None and screen.group_at(kept, 0) != "SightlineHunkDelete"
    assert _row_starting(screen, "line 2 CHANGED") == new_row  # hunk 1 still shows
    assert lines(nv, buf) == SOURCE.splitlines() and _tick(nv, buf) == tick
    nv.input("]h")
    wait_for(lambda: nv.api.win_get_cursor(0) == [10, 0])
    nv.input("\\ha")
    idle(nv)
    assert path.read_text() == WRITTEN
    screen.wait_for(lambda s: "hunk 1/3" not in s.text(), what="the labels gone")
    nv.input("u")  # typed: the whole decision is one undo step
    wait_for(lambda: lines(nv, buf) == SOURCE.splitlines(), what="one u to undo it all")
    assert nv.call("undotree")["seq_cur"] == 0
    assert _tick(nv, other) == other_tick


def test_the_pane_diff_and_the_compare_view_show_the_hunks_decided(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    # Seen by hand: after accepting hunk 1 and rejecting hunk 2, gd showed every hunk as
    # pending, hunk 2 still on the after side; the pane's diff too.
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 120, 45)
    buf = edit(nv, path)
    editor_win = nv.api.get_current_win()
    nv.command("Sightline chat")
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    pane_win = nv.call("bufwinid", tbuf)
    pane_col = nv.api.win_get_position(pane_win)[1]

    def in_pane(s: Screen, needle: str) -> bool:
        return any(needle in line[pane_col:] for line in s.lines())

    def pane_group(s: Screen, needle: str) -> str:
        """The group that paints `needle` in the pane."""
        for row, line in enumerate(s.lines()):
            if (at := line.find(needle, pane_col)) >= 0:
                return s.group_at(row, at)
        return ""

    fake_api.script(propose(), text("done"))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv))
    screen.wait_for(lambda s: in_pane(s, "· hunk 3/3 waits"), what="the diff in the pane")
    removed = pane_group(screen, "-line 6")
    rows = len(transcript(nv))
    nv.api.set_current_win(editor_win)
    nv.input("<Esc>2G\\ha")
    wait_for(lambda: shown(nv)["hunks"][0].get("decided") == "accept")
    nv.input("6G\\hr")
    wait_for(lambda: shown(nv)["hunks"][1].get("decided") == "reject")
    screen.wait_for(
        lambda s: in_pane(s, "✔ hunk 1/3 accepted") and in_pane(s, "✗ hunk 2/3 rejected"),
        what="the pane's diff labelled",
    )
    assert in_pane(screen, "· hunk 3/3 waits")
    # The rejected hunk is muted; the accepted one keeps its colours.
    muted = pane_group(screen, "✗ hunk 2/3 rejected")  # a note's colour
    assert pane_group(screen, "-line 6") == muted != removed
    assert pane_group(screen, "-line 2") == removed
    assert len(transcript(nv)) == rows  # rewritten in place: no row below it moved
    nv.api.set_current_win(pane_win)
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n")
    nv.input("gd")
    wait_for(lambda: nv.call("tabpagenr", "$") == 2, what="the compare view")
    after = _after_side(nv)
    kept = SOURCE.replace("line 2\n", "line 2 CHANGED\n").replace(
        "line 10\n", "line 10\nadded one\n"
    )
    assert lines(nv, after) == kept.splitlines()  # hunk 2 (deleting line 6) is not there
    screen.wait_text("✔ hunk 1/3 accepted")
    screen.wait_text("✗ hunk 2/3 rejected")
    # line 6 reads on both sides now (the after side held a filler row for it).
    row, _col = screen.wait_text("line 6")
    assert screen.row(row).count("line 6") == 2, screen.text()
    nv.input("ga")  # accept the rest from the compare view
    idle(nv)
    assert path.read_text() == WRITTEN
    assert "applied hunks 1, 3 and rejected hunk 2" in only_result(fake_api)["content"]
    nv.api.set_current_win(editor_win)
    nv.input("u")
    wait_for(lambda: lines(nv, buf) == SOURCE.splitlines(), what="one u to undo it all")


def test_the_compare_view_follows_hunks_decided_while_open_and_keeps_the_users_edits(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, buf, path = start(nvim_factory, fake_api, isolated_env)
    screen: Screen = screen_factory(nv, 100, 30)
    notes = capture_notify(nv)
    nv.command("Sightline compare")
    screen.wait_text("line 2 CHANGED")
    nv.command("tabprevious")
    nv.input("2G\\hr")  # in the buffer, while the compare view is open
    wait_for(lambda: shown(nv)["hunks"][0].get("decided") == "reject")
    nv.command("tabnext")
    screen.wait_text("✗ hunk 1/3 rejected")
    assert "line 2 CHANGED" not in screen.text()
    after = _after_side(nv)
    assert lines(nv, after)[1] == "line 2"
    nv.input("u")  # the refresh is not the user's to undo: hunk 1 stays out
    assert lines(nv, after)[1] == "line 2"
    nv.input("Goedited by me<Esc>")  # the user's own take, typed on the after side
    wait_for(lambda: lines(nv, after)[-1] == "edited by me")
    nv.command("tabprevious")
    nv.input("6G\\ha")
    wait_for(lambda: any("compare view" in n["msg"] for n in notes()), what="the refusal")
    assert shown(nv)["hunks"][1].get("decided") is None  # nothing decided, nothing lost
    nv.command("tabnext")
    nv.input("ga")
    idle(nv)
    want = SOURCE.replace("line 6\n", "").replace("line 10\n", "line 10\nadded one\n")
    assert path.read_text() == want + "edited by me\n"
    told = only_result(fake_api)["content"]
    assert "rejected hunk 1 (line 2)" in told and "edited your proposal in the compare view" in told
    nv.command("undo")
    assert lines(nv, buf) == SOURCE.splitlines()


def test_a_long_diff_line_wraps_at_spaces_and_continues_past_the_marker_column(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    # Seen by hand at 80 columns: a wrapped diff line went on at the pane's first column,
    # where a diff line's marker is, reading as a line of its own.
    old = "    message = 'hello'\n"
    new = "    message = 'the quick brown fox jumps over the lazy dog and runs away again'\n"
    path = isolated_env / "f.py"
    path.write_text("def f():\n" + old + "    return message\n")
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 80, 24)
    edit(nv, path)
    nv.command("Sightline chat")
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    pane_win = nv.call("bufwinid", tbuf)
    col = nv.api.win_get_position(pane_win)[1]
    width = nv.api.win_get_width(pane_win)
    edit_call = {"path": "f.py", "old_string": old, "new_string": new}
    fake_api.script(tool_use("propose_edit", edit_call), text("done"))
    send(nv)
    wait_pending(nv)

    def pane_row(s: Screen, start: str) -> int | None:
        return next((r for r, line in enumerate(s.lines()) if line[col:].startswith(start)), None)

    first = screen.wait_for(lambda s: pane_row(s, "+    message ="), what="the diff")
    last = pane_row(screen, "     return message")  # the context line after it
    assert last is not None and last - first >= 3, screen.text()  # it wrapped twice or more
    rows = [screen.row(r)[col : col + width] for r in range(first, last)]
    for row in rows[1:]:  # continuation rows: the marker column stays blank
        assert row[0] == " " and row[1] != " ", rows
    added = screen.group_at(first, col + 1)
    assert added and all(screen.group_at(r, col + 1) == added for r in range(first, last))
    # Every break is at a space: the rows hold the line's words whole, in order.
    assert " ".join(row[1:] for row in rows).split() == new.split(), rows
