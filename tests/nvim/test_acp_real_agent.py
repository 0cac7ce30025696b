"""A published ACP agent end to end: the real Gemini CLI from npm (tests/gemini_cli.py) behind
the pane of a child Neovim configured as the README says (`agent = 'gemini'`, the preset),
its model a loopback fake of the Gemini API (tests/fakegemini.py). Nothing reaches the network.

One scripted model turn makes the agent read a file (its read_file → our fs/read_text_file,
served from the buffer), propose an edit (replace → fs/write_text_file → the review gate,
accepted with the user's key in the pane) and reveal a range (its MCP client → sightline's
MCP server, injected in session/new → a highlight on screen).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_util import AgentLog, acp_nvim
from tests.agent_util import TURN_TIMEOUT_S, idle, lines, send, wait_pending
from tests.conftest import status, transcript, wait_for
from tests.fakegemini import FakeGemini, call, reply, text
from tests.gemini_cli import FOREIGN_ENV, VERSION, gemini_bin_dir, gemini_home
from tests.screen import Screen

pytestmark = pytest.mark.timeout(300)

GEMINI_KEY = "fake-gemini-key-7731"
# The CLI's first start (node loading its 100 MB bundle, MCP discovery) is slow on a loaded
# machine; waits return as soon as their condition holds.
AGENT_TIMEOUT_S = 90.0

APP = "def total(xs):\n    return sum(xs)\n\n\nprint(total([1, 2]))\n"
NOTES = "notes on disk\n"
UNSAVED = "the user's unsaved note"
# The name Gemini CLI gives an MCP tool: mcp_<server>_<tool>.
REVEAL = "mcp_sightline_reveal_editor_range"


@pytest.fixture
def gemini_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    for var in FOREIGN_ENV:  # the user's own Google settings stay out of the agent's way
        monkeypatch.delenv(var, raising=False)
    with FakeGemini(GEMINI_KEY) as server:
        yield server
        assert not server.errors, server.errors[0]


def gemini_env(api: FakeGemini, tmp_path: Path, workspace: Path) -> dict[str, str]:
    """What a user of the preset has: `gemini` on PATH, a key; here a home of its own and the
    fake's address instead of Google's."""
    home = gemini_home(tmp_path, trusted=workspace)
    return {
        "PATH": f"{gemini_bin_dir()}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "GEMINI_API_KEY": GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": api.base_url,
    }


def _declared(body: Any) -> list[str]:
    return [f["name"] for t in body.get("tools", []) for f in t.get("functionDeclarations", [])]


def _replace(path: str, old: str, new: str) -> Any:
    args = {"file_path": path, "instruction": "Tidy up.", "old_string": old, "new_string": new}
    return call("replace", args)


def accept(nv: Any, screen: Screen, pane_win: Any) -> None:
    """The user's key in the pane: Normal mode, then `ga`."""
    assert nv.api.get_current_win() == pane_win
    screen.wait_text("ga accept")
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    nv.input("ga")
    wait_for(lambda: status(nv)["state"] != "awaiting_decision", TURN_TIMEOUT_S, "the accept")


def idle_for(nv: Any) -> None:
    wait_for(lambda: status(nv)["state"] == "idle", AGENT_TIMEOUT_S, "the turn to end")


def _responses(body: Any) -> list[dict[str, Any]]:
    last = body["contents"][-1]
    return [p["functionResponse"] for p in last["parts"] if "functionResponse" in p]


def test_gemini_cli_reads_the_buffer_edits_through_the_gate_and_reveals(
    nvim_factory: Any,
    screen_factory: Any,
    gemini_api: FakeGemini,
    isolated_env: Path,
    tmp_path: Path,
) -> None:
    app, notes = isolated_env / "app.py", isolated_env / "notes.md"
    app.write_text(APP)
    notes.write_text(NOTES)
    env = gemini_env(gemini_api, tmp_path, isolated_env)
    gemini_api.script(
        reply(text("Let me look at your notes."), call("read_file", {"file_path": "notes.md"})),
        reply(_replace("notes.md", UNSAVED, UNSAVED + " (checked)")),
        reply(_replace("app.py", "    return sum(xs)", "    return sum(xs, 0)")),
        reply(call(REVEAL, {"file_path": "app.py", "start_line": 1, "end_line": 2})),
        reply(text("Done: the sum starts at 0, see the highlighted lines.")),
    )
    nv = nvim_factory({"provider": {"name": "acp", "agent": "gemini"}}, env)
    screen: Screen = screen_factory(nv, 140, 36)
    nv.command(f"edit {notes}")
    notes_buf = nv.api.get_current_buf().number
    nv.input(f"ggcc{UNSAVED}<Esc>")  # an unsaved change, typed as a user types it
    wait_for(lambda: lines(nv, notes_buf) == [UNSAVED], what="the typed note")
    nv.command(f"split {app}")
    app_buf = nv.api.get_current_buf().number
    editor_win = nv.api.get_current_win()
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="the composer in Insert mode")
    pane_win = nv.api.get_current_win()
    nv.input("tidy up app.py<C-s>")

    # a) the first proposal: replace read notes.md through fs/read_text_file, from the buffer
    assert wait_pending(nv, AGENT_TIMEOUT_S)["pending"] == "edit notes.md (+1 −1)"
    first, second = gemini_api.wait_for_requests(2, TURN_TIMEOUT_S)[:2]
    assert REVEAL in _declared(first.body)  # the injected MCP server's tool
    (read,) = _responses(second.body)
    # The CLI's own read_file (0.61.0) reads the disk itself, not through the client (its
    # processSingleFileContent ignores the file system service): the model saw the disk text.
    assert read["name"] == "read_file" and NOTES.strip() in json.dumps(read["response"])
    # Its replace reads through the client: old_string is only in the unsaved buffer text.
    assert "+" + UNSAVED + " (checked)" in transcript(nv)
    accept(nv, screen, pane_win)
    wait_for(lambda: lines(nv, notes_buf) == [UNSAVED + " (checked)"], what="notes edited")

    # b) the second proposal: the clean app.py, accepted the same way
    assert wait_pending(nv, AGENT_TIMEOUT_S)["pending"] == "edit app.py (+1 −1)"
    third = gemini_api.wait_for_requests(3, TURN_TIMEOUT_S)[2]
    (edited,) = _responses(third.body)
    assert edited["name"] == "replace" and "error" not in edited["response"], edited
    assert lines(nv, app_buf) == APP.splitlines() and app.read_text() == APP  # not yet
    cursor = nv.api.win_get_cursor(editor_win)
    accept(nv, screen, pane_win)

    # c) the reveal through sightline's MCP server: a highlight on the screen's cells
    row, col = screen.wait_text("def total(xs):")
    screen.wait_for(
        lambda s: s.group_at(row, col) == "SightlineReveal", AGENT_TIMEOUT_S, "the reveal band"
    )
    idle_for(nv)
    assert "Done: the sum starts at 0" in "\n".join(transcript(nv))
    assert nv.api.get_current_win() == pane_win
    assert nv.api.win_get_cursor(editor_win) == cursor

    # the edits: one undo step each; the saved file and the unsaved one per the save rule
    assert lines(nv, app_buf) == (APP.replace("sum(xs)", "sum(xs, 0)")).splitlines()
    assert app.read_text() == APP.replace("sum(xs)", "sum(xs, 0)")  # clean buffer: saved
    assert notes.read_text() == NOTES  # the user's unsaved changes are never written
    assert nv.api.buf_get_option(notes_buf, "modified")
    nv.api.set_current_win(editor_win)
    nv.input("u")
    wait_for(lambda: lines(nv, app_buf) == APP.splitlines(), what="u restores app.py")
    nv.command(f"buffer {notes_buf}")
    nv.input("u")
    wait_for(lambda: lines(nv, notes_buf) == [UNSAVED], what="u restores the note")

    # what went to the model: every request valid, the key only in its header
    assert [r.rejected for r in gemini_api.requests] == [None] * len(gemini_api.requests)
    assert all(GEMINI_KEY not in json.dumps(r.body) for r in gemini_api.requests)
    assert all(r.headers.get("x-goog-api-key") == GEMINI_KEY for r in gemini_api.requests)
    assert GEMINI_KEY not in screen.text() and GEMINI_KEY not in "\n".join(transcript(nv))
    assert gemini_api.pending == 0
    shown = transcript(nv)
    assert not any("changed on disk by the agent" in ln for ln in shown)
    assert not any("did not start sightline's MCP server" in ln for ln in shown)
    # each location once per tool call, and no second copy of a diff the gate showed
    assert shown.count("  ↳ notes.md:1") == 2 and shown.count("  ↳ app.py:1") == 1, shown
    assert not any(ln.startswith("  diff ") for ln in shown), shown


def chosen(log: AgentLog) -> list[str]:
    return [str(r["chosen"]) for r in log.entries("permission_result")]


def _own(tool: str, n: int) -> dict[str, Any]:
    return {
        "permission": {"id": f"p{n}", "title": f"{tool} (sightline MCP Server)", "kind": "other"}
    }


def test_sightline_tools_are_allowed_by_the_built_in_kind_rule_without_asking(
    nvim_factory: Any, tmp_path: Path
) -> None:
    """Gemini CLI asks permission for every MCP tool; for sightline's own the answer is the
    built-in agent's: views always, navigation only where the turn may act."""
    turn = [_own("reveal_editor_range", 1), _own("go_to_position", 2), _own("reveal_attachment", 3)]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn, turn])
    send(nv, "show me")
    idle(nv)
    assert chosen(log) == ["yes", "yes", "yes"]
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    send(nv, "show me in plan mode")
    idle(nv)
    assert chosen(log)[3:] == ["yes", "no", "yes"]
    assert "✗ refused permission: go_to_position (sightline MCP Server)" in "\n".join(
        transcript(nv)
    )


def test_checkhealth_shows_the_installed_gemini_cli(
    nvim_factory: Any, gemini_api: FakeGemini, isolated_env: Path, tmp_path: Path
) -> None:
    env = gemini_env(gemini_api, tmp_path, isolated_env)
    nv = nvim_factory({"provider": {"name": "acp", "agent": "gemini"}}, env)
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert f"gemini-cli {VERSION}" in text, text
    assert "embeddedContext yes" in text and "loadSession yes" in text
    assert "Change with Agent: available" in text
    assert GEMINI_KEY not in text


def test_in_a_folder_gemini_does_not_trust_the_pane_says_reveal_is_missing(
    nvim_factory: Any, gemini_api: FakeGemini, isolated_env: Path, tmp_path: Path
) -> None:
    """Gemini CLI (folder trust on, as by default) starts no stdio MCP server in an untrusted
    folder, silently: the pane says so instead of the agent lacking reveal unexplained."""
    env = gemini_env(gemini_api, tmp_path, isolated_env)
    gemini_home(tmp_path, trusted=None)  # the same home, no folder trusted
    gemini_api.script(reply(text("Hello.")))
    nv = nvim_factory({"provider": {"name": "acp", "agent": "gemini"}}, env)
    send(nv, "hi")
    idle_for(nv)
    (request,) = gemini_api.streamed()
    assert REVEAL not in _declared(request.body)
    shown = "\n".join(transcript(nv))
    assert "Hello." in shown
    assert "did not start sightline's MCP server" in shown and "trust" in shown
