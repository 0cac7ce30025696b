"""The pane as people use it: keys typed with a screen attached, what they see asserted.

Covers issue 9 items 4 (the pane's windows), 5 (refusals and failures where the user looks)
and 6 (terminal size, review bar, compare hints, draft, hint, Markdown, live tokens).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from tests.agent_util import TURN_TIMEOUT_S, claude, idle, send, wait_pending
from tests.conftest import status, transcript, wait_for, wait_idle
from tests.fakeapi import FakeAnthropic, fake_api, hold, text, tool_use
from tests.lua_helper import lua_helper
from tests.screen import Screen

__all__ = ["fake_api"]


def pane_wins(nv: Any) -> dict[str, int]:
    return dict(lua_helper(nv, "windows.pane_roles"))


def composer_lines(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def normal(nv: Any) -> None:
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")


def bars(nv: Any) -> str:
    wins = pane_wins(nv)
    return " ".join(str(nv.api.win_get_option(w, "winbar")) for w in wins.values())


# -- item 4: the pane's windows show the pane's buffers and nothing else ------------------


def test_e_file_in_the_pane_is_refused_and_chat_never_types_into_that_file(
    nvim: Any, screen: Screen, isolated_env: Path
) -> None:
    other = isolated_env / "other.txt"
    other.write_text("keep me\n")
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="the composer in Insert mode")
    normal(nvim)
    wins = pane_wins(nvim)
    for role in ("composer", "transcript"):
        nvim.api.set_current_win(wins[role])
        nvim.input(":e other.txt<CR>")
        screen.wait_text("E1513")  # 'winfixbuf': the window keeps its buffer
        assert nvim.api.win_get_buf(wins[role]).vars["sightline_role"] == role
    # With 'winfixbuf' turned off by hand the file opens there; the pane is then closed.
    nvim.api.set_current_win(wins["composer"])
    nvim.input(":setlocal nowinfixbuf<CR>:e other.txt<CR>")
    wait_for(lambda: nvim.api.get_current_buf().name.endswith("other.txt"))
    obuf = nvim.api.get_current_buf()
    tick = obuf.vars["changedtick"]
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("typed for the agent")
    screen.wait_text("typed for the agent")
    assert list(obuf[:]) == ["keep me"] and obuf.vars["changedtick"] == tick
    assert composer_lines(nvim) == ["typed for the agent"]
    new = pane_wins(nvim)
    assert new["composer"] != wins["composer"]  # never the window that shows the file
    assert nvim.api.win_is_valid(wins["composer"])  # and the user's window is not closed
    assert nvim.api.win_get_buf(wins["composer"]).handle == obuf.handle
    assert other.read_text() == "keep me\n"


def test_a_window_split_off_the_pane_shows_a_new_buffer_with_the_users_options(
    nvim: Any, screen: Screen
) -> None:
    nvim.command("set number")  # the user's own choice in the editor
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="the composer in Insert mode")
    normal(nvim)
    wins = pane_wins(nvim)
    for role in ("transcript", "composer"):
        nvim.api.set_current_win(wins[role])
        nvim.input(":vnew<CR>")
        wait_for(lambda: nvim.api.get_current_win().handle not in wins.values(), what=":vnew")
        nvim.input("ione<CR>two<CR>three<Esc>")
        screen.wait_text("three")
        opts = {
            name: nvim.eval("&" + name)
            for name in ("foldmethod", "foldenable", "winbar", "winfixbuf", "conceallevel")
        }
        assert opts == {
            "foldmethod": "manual",
            "foldenable": 1,
            "winbar": "",
            "winfixbuf": 0,
            "conceallevel": 0,
        }, role
        assert nvim.eval("&number") == 1 and nvim.call("foldclosed", 1) == -1
        nvim.input(":q!<CR>")
        wait_for(lambda: nvim.api.get_current_win().handle in wins.values(), what="back")
    # The pane's own windows keep theirs.
    assert nvim.api.win_get_option(wins["transcript"], "foldmethod") == "expr"
    assert nvim.api.win_get_option(wins["transcript"], "winfixbuf") is True


# -- item 6: the terminal size ----------------------------------------------------------


def test_at_80_columns_the_editor_stays_usable_and_a_resize_refits_the_pane(
    nvim_factory: Any, screen_factory: Any
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "pane": {"width": 70}})
    screen = screen_factory(nv, 80, 24)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    wins = pane_wins(nv)
    editor = nv.call("win_getid", 1)
    assert editor not in wins.values()
    assert nv.api.win_get_width(editor) >= 40
    assert nv.api.win_get_width(wins["transcript"]) == 80 - 40 - 1
    screen.resize(120, 30)
    wait_for(lambda: nv.api.win_get_width(wins["transcript"]) == 70, what="the wider pane")
    screen.resize(60, 20)
    wait_for(lambda: nv.api.win_get_width(wins["transcript"]) == 20, what="the narrow pane")
    assert nv.api.win_get_width(editor) >= 39


def test_review_bar_at_80_columns_keeps_what_waits_and_the_keys(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "a_rather_long_file_name.txt").write_text("one\n")
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 80, 24)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    edit = {"path": "a_rather_long_file_name.txt", "old_string": "one", "new_string": "two"}
    fake_api.script(tool_use("propose_edit", edit), text("done"))
    nv.input("change it<C-s>")
    wait_pending(nv)
    # 32 columns: the summary is shortened at a word (the transcript has it whole), the keys
    # go to the composer's bar, and nothing of lower priority follows a shortened part.
    screen.wait_text("ga accept  gr reject  gd compare")  # in the composer's bar
    col = nv.call("win_screenpos", pane_wins(nv)["transcript"])[1] - 1
    row, at = screen.wait_text("● edit …")
    assert at == col  # the summary starts the bar
    assert screen.lines()[row][col:].rstrip() == "● edit …"
    screen.wait_text("✎ edit a_rather_long_file_name.")
    normal(nv)
    nv.input("ga")
    idle(nv)
    assert (isolated_env / "a_rather_long_file_name.txt").read_text() == "two\n"


def test_a_narrow_idle_bar_keeps_the_provider_and_leaves_out_the_tail_whole(
    nvim_factory: Any, screen_factory: Any
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}})
    screen = screen_factory(nv, 60, 20)  # a 20-column pane: "sightline · echo · 2 in" is too wide
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nv.input("hello<C-s>")
    idle(nv)
    col = nv.call("win_screenpos", pane_wins(nv)["transcript"])[1] - 1
    row, at = screen.wait_text("sightline · echo")
    assert at == col  # the bar starts with the name and the provider, never "<…"
    width = nv.api.win_get_width(pane_wins(nv)["transcript"])
    bar = screen.lines()[row][col : col + width]
    assert bar.rstrip() == "sightline · echo"  # the token counts left out whole, nothing cut


# -- item 6: the compare view ---------------------------------------------------------------


def test_compare_view_hints_its_keys_and_has_a_readable_tab_label(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "src").mkdir()
    (isolated_env / "src" / "app.py").write_text("x = 1\n")
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 120, 30)
    edit = {"path": "src/app.py", "old_string": "x = 1", "new_string": "x = 2"}
    fake_api.script(tool_use("propose_edit", edit), text("done"))
    send(nv, "change it")
    wait_pending(nv)
    nv.input(":Sightline compare<CR>")
    screen.wait_text("after: edit it, then ga accept · gr reject")
    screen.wait_text("before src/app.py (read-only)")
    screen.wait_text("app.py · after (proposal")  # the tab's label
    assert screen.find("sightline://") is None
    nv.input("gr")
    idle(nv)


# -- item 6: the composer ---------------------------------------------------------------------


def test_up_keeps_the_unsent_draft_and_down_brings_it_back(nvim: Any, screen: Screen) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("sent before<C-s>")
    screen.wait_text("echo: sent before")
    wait_idle(nvim)
    nvim.input("half a thought")
    normal(nvim)
    nvim.input("<Up>")
    wait_for(lambda: composer_lines(nvim) == ["sent before"], what="the sent prompt")
    nvim.input("<Down>")
    wait_for(lambda: composer_lines(nvim) == ["half a thought"], what="the draft back")
    screen.wait_text("half a thought")
    # In a draft of several lines, <Up> below its first line moves the cursor.
    nvim.input("ocontinued<Esc>")
    wait_for(lambda: composer_lines(nvim) == ["half a thought", "continued"])
    nvim.input("<Up>")
    wait_for(lambda: nvim.api.win_get_cursor(0)[0] == 1)
    assert composer_lines(nvim) == ["half a thought", "continued"]


def test_an_empty_composer_hints_how_to_send_without_buffer_text(nvim: Any, screen: Screen) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_text("Ask the agent · <C-s> sends")
    assert composer_lines(nvim) == [""]
    nvim.input("x")
    screen.wait_for(lambda s: s.find("Ask the agent") is None, what="the hint gone")
    nvim.input("<BS>")
    screen.wait_text("Ask the agent")


# -- item 6: Markdown ------------------------------------------------------------------------------


def test_transcript_renders_markdown_but_not_notes(nvim: Any, screen: Screen) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("say **bold** and `code`<CR>```lua<CR>local x = 1<CR>```<C-s>")
    screen.wait_text("echo: say")
    wait_idle(nvim)
    normal(nvim)
    nvim.input("<C-w>k")  # the cursor's line is concealed too (concealcursor)
    row, col = screen.wait_text("say bold and code")
    # The reply's last Markdown is painted up to 66 ms after its text (markdown.lua RENDER_MS).
    screen.wait_for(
        lambda s: s.find("**bold**") is None and s.find("```") is None, what="markers hidden"
    )
    assert "strong" in screen.group_at(row, col + 4)
    krow, kcol = screen.wait_text("local x = 1")
    # The lua parser, injected: `local` is a keyword (linked to Statement by default). The
    # injection is painted on a later redraw than the text: wait for it.
    keyword = ("Statement", "@keyword.lua", "@keyword")
    screen.wait_for(
        lambda s: s.group_at(krow, kcol) in keyword,
        what=f"`local` as a keyword (painted {screen.group_at(krow, kcol)!r})",
    )
    # A note is not Markdown: a path with __init__ keeps its underscores.
    nvim.exec_lua(
        "require('sightline.ui.pane').apply({start = vim.api.nvim_buf_line_count("
        "require('sightline.ui.pane').buffers().transcript),"
        " lines = {'• read_file src/__init__.py'},"
        " hls = {}, chips = {}, md = {}, folds = {}})"
    )
    screen.wait_text("• read_file src/__init__.py")


# -- item 5: refusals and failures where the user looks -------------------------------


def test_an_empty_send_from_insert_mode_is_refused_in_the_pane(nvim: Any, screen: Screen) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("<C-s>")
    screen.wait_text("✗ nothing to send")
    assert screen.mode == "insert" and nvim.api.get_mode()["mode"] == "i"
    nvim.input("now something<C-s>")
    screen.wait_text("echo: now something")
    screen.wait_for(lambda s: s.find("nothing to send") is None, what="the note cleared")


def test_a_send_while_a_turn_runs_is_queued_in_the_pane(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic
) -> None:
    """Issue 22 turned the refusal into a queue (tests/nvim/test_steer.py has the rest)."""
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 120, 30)
    fake_api.script(hold(after_events=4, of=text("slow reply")), text("second reply"))
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nv.input("first<C-s>")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the held stream")
    nv.input("second<C-s>")
    screen.wait_text("◌ queued (sent when the turn ends): second")
    assert composer_lines(nv) == [""]  # taken: it is kept as queued
    assert nv.api.get_mode()["mode"] == "i"
    fake_api.release()
    screen.wait_text("second reply")
    idle(nv)


def test_change_with_agent_under_echo_from_visual_mode_is_refused_in_the_pane(
    nvim: Any, screen: Screen
) -> None:
    nvim.api.buf_set_lines(0, 0, -1, False, ["alpha", "beta", "gamma"])
    nvim.input("Vj\\sc")
    # One screen line, no hit-enter prompt to answer; the whole refusal is in the pane.
    last = screen.wait_for(
        lambda s: "needs a model provider" in s.lines()[-1] and s.lines()[-1].rstrip(),
        what="the refusal on the message line",
    )
    assert last == "sightline: Change with Agent needs a model provider… (see the pane)"
    screen.wait_text("the echo provider")
    assert screen.find("Press ENTER") is None and not nvim.api.get_mode()["blocking"]
    wins = pane_wins(nvim)
    assert "transcript" in wins and nvim.api.get_current_win().handle not in wins.values()
    assert nvim.api.get_mode()["mode"] == "n"
    assert status(nvim)["state"] == "stopped"  # the refusal started nothing


def test_a_core_crash_while_typing_in_the_composer_shows_in_the_pane(
    nvim: Any, screen: Screen
) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("hi<C-s>")
    screen.wait_text("echo: hi")
    wait_idle(nvim)
    pid = int(nvim.exec_lua("return require('sightline.host').request('core.ping').pid"))
    nvim.input("typing on")
    screen.wait_text("typing on")
    os.kill(pid, signal.SIGKILL)
    screen.wait_text("the core exited")
    assert nvim.api.get_mode()["mode"] == "i"
    assert composer_lines(nvim) == ["typing on"]


def test_a_refused_tool_call_is_marked_failed_with_its_reason(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 160, 30)
    edit = {"path": "../../etc/passwd", "old_string": "root", "new_string": "toor"}
    fake_api.script(tool_use("propose_edit", edit), text("sorry"))
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nv.input("edit it<C-s>")
    idle(nv)
    row, col = screen.wait_text("✗ propose_edit ../../etc/passwd — ")
    assert "outside the" in screen.row(row)  # the reason the model was told, wrapped
    (line,) = [t for t in transcript(nv) if t.startswith("✗ propose_edit")]
    assert "outside the workspace" in line
    assert screen.group_at(row, col + 2) in ("SightlineError", "ErrorMsg")
    assert "• propose_edit ../../etc/passwd" not in transcript(nv)


def test_command_output_is_in_the_transcript_folded_with_its_tail_shown(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 120, 40)
    fake_api.script(tool_use("run_command", {"command": "seq 1 30"}), text("counted"))
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nv.input("count<C-s>")
    wait_pending(nv)
    normal(nv)
    nv.input("ga")
    idle(nv)
    screen.wait_text("▸ 24 more lines of output (zo shows them)")
    screen.wait_text("  30")
    assert screen.find("  12 ") is None
    nv.input("<C-w>k")
    wait_for(lambda: nv.api.get_current_win().handle == pane_wins(nv)["transcript"])
    row = transcript(nv).index("  1") + 1
    nv.api.win_set_cursor(0, (row, 0))
    nv.input("zo")
    screen.wait_text("  12")


def test_g_question_mark_shows_the_configured_keys_and_not_one_turned_off(
    nvim_factory: Any, screen_factory: Any
) -> None:
    nv = nvim_factory(
        {"provider": {"name": "echo"}, "pane": {"keys": {"regenerate": False, "edit": "E"}}}
    )
    screen = screen_factory(nv, 200, 30)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nv.input("<Esc>g?")
    screen.wait_text("<C-s> send · <CR> send (Normal) · <M-CR> send, steering the turn")
    screen.wait_text("E edit your message")
    text = screen.text()
    assert "regenerate" not in text  # turned off: not listed
    assert "e edit your message" not in text
    nv.input("g?")
    screen.wait_for(lambda s: s.find("E edit your message") is None, what="the list hidden")
