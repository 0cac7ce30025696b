"""The agent never redirects the user's keystrokes (issue 9 item 4): go_to_position while the
user types in the composer, is on the command line or has the focus in the pane keeps the
window and mode, moves only the editor window's cursor and sets '< '> for `gv`.

Every test types what the user types with a UI attached and asserts what must not change."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from mcp import ClientSession

from tests.agent_util import API_KEY, TURN_TIMEOUT_S, claude, idle, only_result, wait_pending
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, hold, reply, text, tool_use
from tests.lua_helper import lua_helper
from tests.mcp_util import listening, server_params, text_of, with_session
from tests.screen import Screen

__all__ = ["fake_api", "listening"]

SOURCE = "".join(f"line {i} of the source\n" for i in range(1, 41))


def composer_text(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
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
    before = lua_helper(nv, "windows.buffer_state", "src.txt")
    # The user starts the next message while the model is still answering.
    nv.input("and then")
    wait_for(lambda: composer_text(nv) == ["and then"], what="the first typed words")
    fake_api.release()
    result = only_result(fake_api)
    nv.input(" keep going")
    wait_for(lambda: composer_text(nv) == ["and then keep going"], what="the rest of the words")
    idle(nv)
    after = lua_helper(nv, "windows.buffer_state", "src.txt")
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


def test_go_to_position_on_the_command_line_runs_the_users_command_where_they_typed_it(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, screen = start_with_source(nvim_factory, fake_api, isolated_env, screen_factory)
    goto = {"file_path": "src.txt", "line": 30, "end_line": 31}
    fake_api.script(hold(of=tool_use("go_to_position", goto)), reply(text("Done.")))
    nv.input("\\ss")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input("where<C-s>")
    fake_api.wait_for_requests(1)
    # Back to the file, half-way through a command when the model's call arrives.
    nv.input("<Esc><C-w>h5G:s/of/OF/")
    screen.wait_text(":s/of/OF/")
    source_win = nv.api.get_current_win().handle
    fake_api.release()
    content = only_result(fake_api)["content"]
    assert content == (
        "OK (kept the focus and the cursor where they were (the command line over src.txt): "
        "gv there selects lines 30–31)"
    )
    assert nv.api.get_mode()["mode"] == "c" and nv.api.get_current_win().handle == source_win
    nv.input("g<CR>")
    idle(nv)
    lines = nv.api.buf_get_lines(0, 0, -1, False)
    assert lines[4] == "line 5 OF the source" and lines[29] == "line 30 of the source"
    assert nv.api.win_get_cursor(0)[0] == 5
    nv.input("gv")
    wait_for(lambda: nv.api.get_mode()["mode"] == "V", what="linewise Visual mode after gv")
    assert nv.eval("getpos('v')[1]") == 30 and nv.api.win_get_cursor(0)[0] == 31


def test_go_to_position_while_selecting_in_the_transcript_keeps_the_selection(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, screen = start_with_source(nvim_factory, fake_api, isolated_env, screen_factory)
    source_win = nv.api.get_current_win().handle
    goto = {"file_path": "src.txt", "line": 10, "end_line": 12}
    fake_api.script(reply(text("first answer")), hold(of=tool_use("go_to_position", goto)))
    fake_api.script(reply(text("Done.")))
    nv.input("\\ss")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input("hello<C-s>")
    idle(nv)
    nv.input("again<C-s>")
    fake_api.wait_for_requests(2)
    # The user selects in the transcript (Visual mode in the pane) while the model answers.
    nv.input("<Esc><C-w>kggVj")
    wait_for(lambda: nv.api.get_mode()["mode"] == "V", what="Visual mode in the transcript")
    pane_win, selecting = nv.api.get_current_win().handle, nv.eval("getpos('v')")
    fake_api.release()
    content = only_result(fake_api, 2)["content"]
    assert content.startswith("OK (kept the focus where it was (the transcript)")
    assert nv.api.get_mode()["mode"] == "V" and nv.api.get_current_win().handle == pane_win
    assert nv.eval("getpos('v')") == selecting
    assert nv.api.win_get_cursor(source_win) == [10, 0]
    idle(nv)
    screen.wait_text("gv there selects lines 10–12")  # the note, in the transcript
    nv.input("<Esc><C-w>h")
    wait_for(lambda: nv.api.get_current_win().handle == source_win, what="the editor window")
    nv.input("gv")
    wait_for(lambda: nv.api.get_mode()["mode"] in ("v", "V"), what="Visual mode after gv")
    assert nv.eval("getpos('v')[1]") == 10 and nv.api.win_get_cursor(0)[0] == 12


def test_go_to_position_through_mcp_while_the_user_types(listening: tuple[str, Any]) -> None:
    sock, nv = listening
    screen = Screen.attach(nv, 120, 30)
    try:
        code_win = nv.api.get_current_win().handle
        tick = nv.api.buf_get_changedtick(nv.api.get_current_buf())
        nv.input("\\ssfirst ")  # the chat mapping, then typing in the composer
        wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
        screen.wait_text("first ")
        composer = nv.api.get_current_win().handle

        async def goto(session: ClientSession) -> Any:
            return await session.call_tool(
                "go_to_position",
                {"file_path": "code.txt", "line": 50, "column": 3, "end_line": 52},
            )

        text, is_error = text_of(with_session(server_params(["--server", sock]), goto))
        assert not is_error
        assert text.startswith("OK (kept the focus where it was (Insert mode in the composer)")
        nv.input("read line 50")
        screen.wait_text("first read line 50")
        assert nv.api.get_current_win().handle == composer
        assert nv.api.get_mode()["mode"] == "i"
        assert nv.api.win_get_cursor(code_win) == [50, 2]
        code_buf = nv.api.win_get_buf(code_win)
        assert nv.api.buf_get_changedtick(code_buf) == tick
        nv.input("<Esc><C-w>hgv")
        wait_for(lambda: nv.api.get_mode()["mode"] == "V", what="linewise Visual after gv")
        assert nv.eval("getpos('v')[1]") == 50 and nv.api.win_get_cursor(0)[0] == 52
    finally:
        screen.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_refused_connection_is_reported_as_such(
    nvim_factory: Any, isolated_env: Path, screen_factory: Any
) -> None:
    port = closed_port()
    provider = {"name": "anthropic", "base_url": f"http://127.0.0.1:{port}", "retries": 0}
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": API_KEY})
    screen = screen_factory(nv, 200, 30)
    nv.input("\\sshello<C-s>")
    expected = f"Could not connect to 127.0.0.1:{port}: connection refused"
    screen.wait_text(expected, timeout=TURN_TIMEOUT_S)
    assert not screen.find("lost mid-reply")
    assert any(line.startswith("✗ " + expected) for line in transcript(nv))


# --- issue 10 §8: what the transcript names is what the call does ---------------------------


def test_propose_create_with_a_tilde_means_the_home_directory(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    # HOME is the workspace's parent: `~/x` is outside, `~/ws/new.txt` inside.
    home = isolated_env.parent
    nv = nvim_factory(
        {"provider": {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}},
        env={"ANTHROPIC_API_KEY": API_KEY, "HOME": str(home)},
    )
    screen = screen_factory(nv, 200, 30)
    fake_api.script(
        tool_use("propose_create", {"path": "~/x", "content": "outside\n"}),
        tool_use("propose_create", {"path": f"~/{isolated_env.name}/new.txt", "content": "in\n"}),
        text("done"),
    )
    nv.input("\\ssmake files<C-s>")
    pending = wait_pending(nv)
    refused = only_result(fake_api, 1)
    assert refused["is_error"] is True
    assert refused["content"].startswith(f"~/x ({home}/x): outside the workspace")
    assert not (isolated_env / "~").exists() and not (home / "x").exists()
    assert "new.txt" in pending["pending"] and "~" not in pending["pending"], pending
    screen.wait_text(f"• propose_create ~/{isolated_env.name}/new.txt")
    nv.input("<Esc><C-w>kga")  # accept, from the transcript
    idle(nv)
    assert (isolated_env / "new.txt").read_text() == "in\n"
    assert not (isolated_env / "~").exists()


def test_an_argument_replace_selection_ignores_does_not_label_it(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    (isolated_env / "app.py").write_text("one\ntwo\n")
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 200, 30)
    nv.command("edit app.py")
    fake_api.script(
        tool_use("replace_selection", {"text": "TWO", "path": "../../etc/passwd"}), text("ok")
    )
    nv.input("jV\\scupper<C-s>")
    wait_pending(nv)
    screen.wait_text("• replace_selection")
    assert "• replace_selection" in transcript(nv)
    assert not any("passwd" in line for line in transcript(nv))
    assert not screen.find("passwd")
    nv.command("Sightline reject")
    idle(nv)
