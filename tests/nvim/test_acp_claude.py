"""The published Claude adapter end to end: `@zed-industries/claude-agent-acp` from npm (pinned,
tests/acp_adapters.py) behind the pane of a child Neovim configured as the README says
(`agent = 'claude'`), Claude Code's model the loopback Messages fake (tests/fakeapi.py) through
ANTHROPIC_BASE_URL. Nothing reaches the network.

The adapter writes files itself (it never calls fs/write_text_file; it gates only at
session/request_permission): its Edit's permission carries the diff, reviewed inline in the
file's buffer and accepted whole with `ga`, then written by Claude Code, and its buffer shows
it; a command is rejected with a note; plan mode sets the agent's read-only mode; stop
cancels; Change with Agent is refused; a conversation reopened from history resumes its
session (session/load).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_adapters import FOREIGN_ENV, claude_env
from tests.agent_util import core_status, decide, edit, lines, send
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, hold, reply, text, tool_use

pytestmark = pytest.mark.timeout(300)

KEY = "sk-ant-fake-claude-acp-5521"
AGENT_TIMEOUT_S = 90.0
APP = "def total(xs):\n    return sum(xs)\n"


@pytest.fixture
def claude_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    for var in FOREIGN_ENV:
        monkeypatch.delenv(var, raising=False)
    with FakeAnthropic(KEY) as server:
        yield server
        assert not server.errors, server.errors[0]


SHOWN = "return require('sightline.ui.inline').shown()"


def type_in_pane(nv: Any, keys: str) -> None:
    """Keys typed in the pane's transcript (opened as :Sightline chat does), where the
    review keys are."""
    nv.command("Sightline chat")
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    win = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    nv.api.set_current_win(nv.api.list_wins()[[w.handle for w in nv.api.list_wins()].index(win)])
    nv.input(keys)


def idle_for(nv: Any) -> None:
    wait_for(lambda: status(nv)["state"] == "idle", AGENT_TIMEOUT_S, "the turn to end")


def pending_for(nv: Any) -> dict[str, Any]:
    got = wait_for(
        lambda: (st := status(nv))["state"] == "awaiting_decision" and st,
        AGENT_TIMEOUT_S,
        "a question in the gate",
    )
    return dict(got)


def claude_nvim(nvim_factory: Any, api: FakeAnthropic, tmp_path: Path) -> Any:
    env = claude_env(tmp_path, api.base_url, KEY)
    return nvim_factory({"provider": {"name": "acp", "agent": "claude"}}, env)


def messages(api: FakeAnthropic) -> list[Any]:
    """The Messages requests Claude Code sent (each the whole conversation so far)."""
    return [r for r in api.requests if r.path == "/v1/messages" and r.body]


def _results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else []
    return [b for b in content if b.get("type") == "tool_result"]


def test_claude_streams_its_edit_is_reviewed_inline_and_accepted_and_lands_in_the_buffer(
    nvim_factory: Any, claude_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text(APP)
    claude_api.script(
        reply(text("Let me read it first."), tool_use("Read", {"file_path": str(app)})),
        reply(
            tool_use(
                "Edit",
                {
                    "file_path": str(app),
                    "old_string": "return sum(xs)",
                    "new_string": "return sum(xs, 0)",
                },
            )
        ),
        reply(tool_use("Bash", {"command": "make test", "description": "Run the tests"})),
        reply(text("Done: the sum starts at 0.")),
    )
    nv = claude_nvim(nvim_factory, claude_api, tmp_path)
    buf = edit(nv, app)
    send(nv, "make the sum start at 0")

    # the edit: its permission's diff reviewed inline in the file's buffer (the adapter
    # starts in `default`), accepted whole with `ga` in the pane: the adapter writes it
    st = pending_for(nv)
    assert st["pending"] == "edit app.py (+1 −1)", st
    assert core_status(nv)["agent_mode"]["id"] == "default"
    drawn = wait_for(lambda: nv.exec_lua(SHOWN), 10, "the edit drawn in its buffer")
    assert drawn["buffer"] == buf and len(drawn["hunks"]) == 1, drawn
    assert {"]h", "\\ha", "\\hw"} <= {m["lhs"] for m in nv.api.buf_get_keymap(buf, "n")}
    assert lines(nv, buf) == APP.splitlines()  # nothing written before the decision
    shown = "\n".join(transcript(nv))
    assert "Let me read it first." in shown and "+    return sum(xs, 0)" in shown
    type_in_pane(nv, "ga")

    # the command: rejected with a note
    st = pending_for(nv)
    assert "make test" in st["pending"], st
    decide(nv, "reject", "run pytest instead")
    idle_for(nv)

    shown = "\n".join(transcript(nv))
    assert "Done: the sum starts at 0." in shown
    assert app.read_text() == APP.replace("sum(xs)", "sum(xs, 0)")  # Claude Code wrote it
    wait_for(lambda: lines(nv, buf) == app.read_text().splitlines(), 10, "the buffer refreshed")
    assert "review gate" not in shown and "not through" not in shown, shown
    assert "✔ accepted: the agent writes app.py" in shown, shown
    assert "did not start sightline's MCP server" not in shown, shown
    requests = messages(claude_api)
    edited, ran = _results(requests[2].body), _results(requests[3].body)
    assert edited and not edited[0].get("is_error"), edited
    assert ran and ran[0].get("is_error"), ran  # the command was refused
    assert KEY not in shown and all(KEY not in json.dumps(r.body) for r in requests)
    # the turn's tokens, as the adapter reported them
    assert core_status(nv)["tokens"]["output"] > 0


TWO = APP + "\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"


def test_claude_write_partly_taken_is_refused_and_only_the_hunk_taken_is_written(
    nvim_factory: Any, claude_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text(TWO)
    wanted = TWO.replace("return sum(xs)\n", "return sum(xs, 0)\n").replace("len(xs)", "9")
    claude_api.script(
        reply(tool_use("Read", {"file_path": str(app)})),  # Claude Code writes only what it read
        reply(tool_use("Write", {"file_path": str(app), "content": wanted})),
        reply(text("Understood.")),
        reply(text("Next answer.")),
    )
    nv = claude_nvim(nvim_factory, claude_api, tmp_path)
    buf = edit(nv, app)
    send(nv, "rewrite it")

    # the Write's whole new text, reviewed as the hunks it changes
    assert pending_for(nv)["pending"] == "edit app.py (+2 −2)"
    drawn = wait_for(lambda: nv.exec_lua(SHOWN), 10, "the write drawn in its buffer")
    assert drawn["buffer"] == buf and len(drawn["hunks"]) == 2, drawn
    nv.api.win_set_cursor(0, [2, 0])
    nv.input("\\ha")
    wait_for(lambda: nv.exec_lua(SHOWN)["hunks"][0].get("decided") == "accept", 10, "hunk 1")
    nv.api.win_set_cursor(0, [6, 0])
    nv.input("\\hr")  # the last hunk rejected: the write is decided
    idle_for(nv)

    taken = TWO.replace("return sum(xs)\n", "return sum(xs, 0)\n", 1)
    assert app.read_text() == taken  # the gate wrote the hunk taken, Claude Code nothing
    assert lines(nv, buf) == taken.splitlines()
    wrote = _results(messages(claude_api)[2].body)
    assert wrote and wrote[0].get("is_error"), wrote  # the agent's Write was refused
    shown = "\n".join(transcript(nv))
    assert "Understood." in shown and "review gate" not in shown, shown
    # its model is told with the next message which hunk was taken
    send(nv, "and now?")
    idle_for(nv)
    said = json.dumps(messages(claude_api)[-1].body["messages"][-1])
    assert "partly accepted" in said and "hunk 1" in said, said


def test_claude_plan_mode_stop_scope_and_reopen(
    nvim_factory: Any, claude_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text(APP)
    claude_api.script(
        reply(text("Here is the plan.")),
        hold(after_events=4, of=text("a long answer that is stopped")),
        reply(text("Back again.")),
    )
    nv = claude_nvim(nvim_factory, claude_api, tmp_path)

    # plan mode: the agent's read-only mode before the prompt
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    send(nv, "plan it")
    idle_for(nv)
    assert core_status(nv)["agent_mode"]["id"] == "plan"
    assert "Here is the plan." in "\n".join(transcript(nv))
    assert nv.exec_lua("return {require('sightline').plan('off')}") == [True]

    # stop: the turn ends at once, the agent is told (session/cancel)
    send(nv, "go on")
    wait_for(lambda: claude_api.holding.is_set(), AGENT_TIMEOUT_S, "the reply streaming")
    assert core_status(nv)["agent_mode"]["id"] == "default"
    assert nv.exec_lua("return {require('sightline').stop()}") == [True]
    idle_for(nv)
    claude_api.release()
    wait_for(lambda: "■ Stopped." in transcript(nv), 10, "the stop said")
    assert core_status(nv)["agent_mode"]["id"] == "default"

    # Change with Agent: refused, the adapter writes files to disk itself
    buf = edit(nv, app)
    rng = {"buffer": buf, "start_row": 0, "start_col": 0, "end_row": 1, "end_col": 10}
    res = nv.exec_lua("return {require('sightline').send(...)}", "fix", rng)
    assert res[0] is None and "writes files to disk itself" in res[1]

    # reopened from history by a new core (a new agent process): it resumes its session
    nv.command("Sightline restart")
    wait_for(lambda: "Here is the plan." in "\n".join(transcript(nv)), 30, "the history shown")
    send(nv, "and now?")
    idle_for(nv)
    shown = "\n".join(transcript(nv))
    assert "Back again." in shown and "Here is the plan." in shown
    assert "Resumed the agent's session" in shown, (
        shown
    )  # session/load, not a new session that knows nothing
    said = json.dumps(messages(claude_api)[-1].body["messages"])
    assert "plan it" in said  # the resumed session holds the earlier turns
