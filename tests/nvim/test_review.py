"""The review gate: proposals, accept / reject / compare / autoaccept, applying and saving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import (
    claude,
    decide,
    edit,
    idle,
    lines,
    only_result,
    send,
    tool_results,
    wait_pending,
)
from tests.conftest import capture_notify, status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.lua_helper import lua_helper

__all__ = ["fake_api"]

SOURCE = "# café\ndef total(xs):\n    return sum(xs)\n\nprint(total([1, 2]))\n"


def propose(path: str, old: str, new: str, **kw: Any) -> Any:
    return tool_use("propose_edit", {"path": path, "old_string": old, "new_string": new}, **kw)


def test_accept_applies_one_ranged_change_saves_and_one_undo_restores(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    lua_helper(nv, "probes.record_proposals")
    buf = edit(nv, path)
    # Marks and extmarks outside the change must stay put: no whole-buffer replace.
    ns = nv.exec_lua("return vim.api.nvim_create_namespace('test')")
    mark = nv.api.buf_set_extmark(buf, ns, 4, 2, {})
    nv.api.win_set_cursor(0, [5, 3])
    fake_api.script(propose("app.py", "return sum(xs)", "return sum(xs) + 1"), text("done"))
    send(nv)
    st = wait_pending(nv)
    assert st["pending"] == "edit app.py (+1 −1)"
    assert lines(nv, buf) == SOURCE.splitlines()  # nothing changes before the decision
    shown = transcript(nv)
    assert "-    return sum(xs)" in shown and "+    return sum(xs) + 1" in shown
    winbar = nv.exec_lua("return vim.wo[vim.fn.bufwinid(...)].winbar", buf) or ""
    assert winbar == ""  # the review bar lives in the pane, not in the editor window
    (event,) = nv.exec_lua("return _G.proposals")
    assert event["path"] == "app.py" and event["kind"] == "edit"
    assert event["summary"] == "edit app.py (+1 −1)" and isinstance(event["id"], int)

    decide(nv, "accept")
    idle(nv)
    after = SOURCE.replace("return sum(xs)", "return sum(xs) + 1")
    assert lines(nv, buf) == after.splitlines()
    assert path.read_text() == after
    assert nv.api.buf_get_option(buf, "modified") is False
    assert only_result(fake_api)["content"] == "accepted: app.py was changed and saved."
    assert nv.api.buf_get_extmark_by_id(buf, ns, mark, {}) == [4, 2]
    assert nv.api.win_get_cursor(0) == [5, 3]

    nv.command("undo")
    assert lines(nv, buf) == SOURCE.splitlines()
    assert nv.call("undotree")["seq_cur"] == 0  # exactly one undo step


def test_review_bar_in_the_pane_names_the_keys(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "a.txt").write_text("one\n")
    nv = claude(nvim_factory, fake_api)
    nv.command("Sightline chat")
    fake_api.script(propose("a.txt", "one", "two"), text("done"))
    send(nv)
    wait_pending(nv)
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    win = nv.call("bufwinid", tbuf)
    cwin = nv.call(
        "bufwinid", nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    )

    def bars() -> str:  # a narrow pane puts the keys in the composer's bar
        return str(nv.api.win_get_option(win, "winbar") + nv.api.win_get_option(cwin, "winbar"))

    bar = wait_for(lambda: "accept" in (b := bars()) and b)
    assert "edit a.txt (+1 −1)" in bar
    assert "ga accept" in bar and "gr reject" in bar and "gd compare" in bar
    nv.api.set_current_win(win)
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n")
    nv.input("gr")
    idle(nv)
    assert (isolated_env / "a.txt").read_text() == "one\n"


def test_a_file_not_loaded_is_loaded_edited_listed_and_saved(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "closed.py"
    path.write_text("a = 1\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(propose("closed.py", "a = 1", "a = 2"), text("done"))
    send(nv)
    wait_pending(nv)
    buf = nv.call("bufnr", str(path))
    assert buf > 0 and nv.api.buf_get_option(buf, "buflisted") is False
    nv.command("Sightline accept")
    idle(nv)
    assert path.read_text() == "a = 2\n"
    assert nv.api.buf_get_option(buf, "buflisted") is True


def test_reject_changes_nothing_and_the_model_is_told_why(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    fake_api.script(propose("app.py", "sum(xs)", "0"), text("ok"))
    send(nv)
    wait_pending(nv)
    nv.command("Sightline reject keep the sum please")
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] is True
    assert result["content"] == "rejected by the user: keep the sum please"
    assert lines(nv, buf) == SOURCE.splitlines() and path.read_text() == SOURCE
    assert nv.call("undotree")["seq_last"] == 0
    assert "✗ rejected by the user: keep the sum please" in transcript(nv)
    # The proposal and its outcome are kept with the conversation.
    conv = nv.exec_lua("return require('sightline.host').status().conversation_path")
    nv.command("Sightline reset")
    assert nv.exec_lua("return require('sightline').open_conversation(...)", conv)
    shown = wait_for(lambda: "+    return 0" in (t := transcript(nv)) and t)
    assert "✎ edit app.py (+1 −1)" in shown
    assert "✗ propose_edit app.py — rejected by the user: keep the sum please" in shown
    assert "✗ rejected by the user: keep the sum please" in shown


def test_ambiguous_or_missing_old_string_is_refused_with_its_count(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "dup.py").write_text("x = 1\nx = 1\nx = 1\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        propose("dup.py", "x = 1", "x = 2"),
        propose("dup.py", "y = 1", "x = 2"),
        text("ok"),
    )
    send(nv)
    idle(nv)
    many, none = only_result(fake_api, 1), only_result(fake_api, 2)
    assert many["is_error"] and "occurs 3 times in dup.py" in many["content"]
    assert none["is_error"] and "occurs 0 times" in none["content"]
    assert (isolated_env / "dup.py").read_text() == "x = 1\nx = 1\nx = 1\n"


def test_unsaved_user_changes_are_kept_and_never_written(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    nv.api.buf_set_lines(buf, 0, 1, False, ["# my unsaved note"])
    fake_api.script(propose("app.py", "sum(xs)", "sum(xs) * 2"), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf)[0] == "# my unsaved note"
    assert lines(nv, buf)[2] == "    return sum(xs) * 2"
    assert path.read_text() == SOURCE  # the user's unsaved work was not written
    assert nv.api.buf_get_option(buf, "modified") is True
    assert "had unsaved changes of the user" in only_result(fake_api)["content"]
    nv.command("undo")
    assert lines(nv, buf)[0] == "# my unsaved note" and lines(nv, buf)[2] == "    return sum(xs)"


@pytest.mark.parametrize("buftype", ["", "nofile"])
def test_a_buffer_without_a_file_is_never_saved(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, buftype: str
) -> None:
    path = isolated_env / "draft.txt"
    nv = claude(nvim_factory, fake_api)
    nv.command("enew")
    nv.command(f"file {path}")
    buf = int(nv.api.get_current_buf().number)
    nv.api.buf_set_option(buf, "buftype", buftype)
    nv.api.buf_set_lines(buf, 0, -1, False, ["draft one"])
    fake_api.script(propose("draft.txt", "one", "two"), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["draft two"]
    assert not path.exists()
    assert "has no file, so it was not saved" in only_result(fake_api)["content"]


def test_edit_that_went_stale_before_accept_is_refused(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    fake_api.script(propose("app.py", "return sum(xs)", "return 0"), text("ok"))
    send(nv)
    wait_pending(nv)
    nv.api.buf_set_lines(buf, 0, 0, False, ["    return sum(xs)"])  # now it occurs twice
    user_version = lines(nv, buf)
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and "changed since the proposal" in result["content"]
    assert "occurs 2 times" in result["content"]
    assert lines(nv, buf) == user_version and path.read_text() == SOURCE


def test_edit_applies_where_old_string_moved_to(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    fake_api.script(propose("app.py", "print(total([1, 2]))", "print(total([3]))"), text("ok"))
    send(nv)
    wait_pending(nv)
    nv.api.buf_set_lines(buf, 0, 0, False, ["import sys", ""])  # moves the text down
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf)[-1] == "print(total([3]))" and lines(nv, buf)[0] == "import sys"
    assert "had unsaved changes" in only_result(fake_api)["content"]


def test_file_changed_on_disk_under_unsaved_changes_is_not_overwritten(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    nv.api.buf_set_lines(buf, 0, 0, False, ["import os"])  # the user's unsaved text
    fake_api.script(propose("app.py", "sum(xs)", "len(xs)"), text("ok"))
    send(nv)
    wait_pending(nv)
    path.write_text(SOURCE + "# changed elsewhere, and longer\n")
    decide(nv, "accept")
    idle(nv)
    assert path.read_text() == SOURCE + "# changed elsewhere, and longer\n"
    assert "changed on disk since it was loaded" in only_result(fake_api)["content"]
    assert lines(nv, buf)[0] == "import os" and lines(nv, buf)[3] == "    return len(xs)"


def test_unchangeable_buffers_are_refused_up_front(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "locked.txt"
    path.write_text("locked\n")
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    nv.api.buf_set_option(buf, "modifiable", False)
    fake_api.script(propose("locked.txt", "locked", "open"), text("ok"))
    send(nv)
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and "not modifiable" in result["content"]
    assert path.read_text() == "locked\n"


def test_propose_create_writes_the_new_file_and_refuses_existing_ones(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "exists.txt").write_text("old\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        tool_use("propose_create", {"path": "exists.txt", "content": "new\n"}),
        tool_use("propose_create", {"path": "pkg/new.py", "content": "x = 1\ny = 2"}),
        text("ok"),
    )
    send(nv)
    st = wait_pending(nv)
    assert st["pending"] == "create pkg/new.py (+2 −0)"
    first = only_result(fake_api, 1)
    assert first["is_error"] and "exists" in first["content"]
    decide(nv, "accept")
    idle(nv)
    new = isolated_env / "pkg" / "new.py"
    assert new.read_text() == "x = 1\ny = 2\n"
    assert only_result(fake_api, 2)["content"] == "accepted: pkg/new.py was created and saved."
    buf = nv.call("bufnr", str(new))
    assert nv.api.buf_get_option(buf, "buflisted") is True
    assert (isolated_env / "exists.txt").read_text() == "old\n"


def test_compare_view_edits_are_what_gets_applied(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    fake_api.script(propose("app.py", "return sum(xs)", "return sum(xs) or 0"), text("ok"))
    send(nv)
    wait_pending(nv)
    nv.command("Sightline compare")
    assert nv.call("tabpagenr", "$") == 2
    wins = nv.api.tabpage_list_wins(nv.api.get_current_tabpage())
    assert len(wins) == 2 and all(nv.api.win_get_option(w, "diff") for w in wins)
    before_buf, after_buf = (w.buffer for w in wins)
    assert "before" in before_buf.name and "after" in after_buf.name
    assert before_buf.options["modifiable"] is False
    assert list(before_buf[:]) == SOURCE.splitlines()
    assert after_buf[2] == "    return sum(xs) or 0"
    assert nv.api.buf_get_option(after_buf.number, "filetype") == "python"
    after_buf[2] = "    return sum(xs, start=0)"  # the user's own take on the proposal
    after_buf[0] = "# café (reviewed)"
    nv.command("Sightline accept")
    idle(nv)
    got = lines(nv, buf)
    assert got[0] == "# café (reviewed)" and got[2] == "    return sum(xs, start=0)"
    assert path.read_text().splitlines() == got
    assert "edited your proposal in the compare view" in only_result(fake_api)["content"]
    assert nv.call("tabpagenr", "$") == 1
    assert not nv.api.buf_is_valid(after_buf.number)
    nv.command("undo")
    assert lines(nv, buf) == SOURCE.splitlines()


def test_compare_with_nothing_pending_is_refused(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    nv.command("Sightline compare")
    assert "nothing to compare" in notes()[0]["msg"]
    assert "compare" in nv.call("getcompletion", "Sightline comp", "cmdline")


def test_autoaccept_applies_edits_but_commands_still_ask(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    marker = isolated_env / "ran"
    nv = claude(nvim_factory, fake_api)
    nv.command("Sightline autoaccept on")
    assert status(nv)["autoaccept"] is True
    fake_api.script(
        propose("app.py", "sum(xs)", "max(xs)"),
        tool_use("run_command", {"command": f"touch {marker}"}),
        text("ok"),
    )
    send(nv)
    st = wait_pending(nv)
    assert st["pending"].startswith("run: touch")
    assert path.read_text() == SOURCE.replace("sum(xs)", "max(xs)")
    assert only_result(fake_api, 1)["content"] == "accepted: app.py was changed and saved."
    decide(nv, "reject")
    idle(nv)
    assert not marker.exists()
    assert tool_results(fake_api, 2)[0]["content"].startswith("denied by the user")


def test_stop_while_a_proposal_waits_rejects_it(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    fake_api.script(propose("app.py", "sum(xs)", "0"), text("never sent"))
    send(nv)
    wait_pending(nv)
    nv.command("Sightline compare")
    nv.command("Sightline stop")
    idle(nv)
    assert path.read_text() == SOURCE
    wait_for(lambda: nv.call("tabpagenr", "$") == 1, what="the compare view to close")
    send(nv, "next")
    idle(nv)
    (result,) = tool_results(fake_api, 1)
    assert result["is_error"] and "stopped by the user" in result["content"]


@pytest.mark.parametrize("autoread", [True, False])
def test_a_file_changed_on_disk_under_no_unsaved_changes_is_reloaded_then_edited_and_saved(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, autoread: bool
) -> None:
    # Whatever 'autoread' says: the buffer holds nothing unsaved, so the file is what counts.
    path = isolated_env / "app.py"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    nv.api.set_option("autoread", autoread)
    buf = edit(nv, path)
    fake_api.script(propose("app.py", "sum(xs)", "len(xs)"), text("ok"))
    send(nv)
    wait_pending(nv)
    path.write_text("# edited elsewhere\n" + SOURCE)
    decide(nv, "accept")
    idle(nv)
    expected = "# edited elsewhere\n" + SOURCE.replace("sum(xs)", "len(xs)")
    assert path.read_text() == expected  # nothing on disk was lost
    assert lines(nv, buf) == expected.splitlines()


def test_a_file_open_in_another_neovim_is_refused(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "shared.txt"
    path.write_text("shared\n")
    other = nvim_factory({"provider": {"name": "echo"}})
    other.command("set updatecount=200 swapfile")  # the harness starts with -n
    other.command(f"edit {path}")
    assert other.call("swapname", "%")
    nv = claude(nvim_factory, fake_api)
    nv.command("set updatecount=200 swapfile")
    fake_api.script(propose("shared.txt", "shared", "mine"), text("ok"))
    send(nv)
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and "open in another Neovim" in result["content"]
    assert path.read_text() == "shared\n"
