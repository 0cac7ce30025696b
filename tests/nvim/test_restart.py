"""However the previous core ended while a decision waited — `:Sightline restart`, `kill -9`,
`:qa!` then a new Neovim and `:Sightline history` — the next request is one the loopback
server (which rejects what the real API rejects) accepts, the waiting call is answered as not
completed, and the rebuilt transcript shows what was proposed and that it was abandoned."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

from sightline.domain.wire import ABANDONED
from tests.agent_util import (
    TURN_TIMEOUT_S,
    claude,
    core_pid,
    core_status,
    idle,
    send,
    wait_pending,
)
from tests.conftest import capture_notify, status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use, validation_error
from tests.processes import gone

__all__ = ["fake_api"]

COMMAND = "echo waiting-for-you"


def waiting_command(nv: Any, server: FakeAnthropic) -> str:
    """A turn whose run_command waits for the user's decision; returns the history file."""
    server.script(tool_use("run_command", {"command": COMMAND}, id="toolu_wait"), text("go on"))
    send(nv, "run it")
    st = wait_pending(nv)
    assert st["pending"]
    return str(nv.exec_lua("return require('sightline.host').status().conversation_path"))


def continue_and_check(nv: Any, server: FakeAnthropic, path: str) -> None:
    """The next turn's request is accepted and answers the waiting call first."""
    # The new core's rebuilt transcript: what was proposed, then that it was abandoned.
    wait_for(lambda: "not completed" in "\n".join(transcript(nv)), TURN_TIMEOUT_S)
    shown = transcript(nv)
    call = shown.index("• run_command " + COMMAND)
    after = [line for line in shown[call + 1 :] if line]
    assert after[0].startswith("✗ not completed: the session ended"), shown
    send(nv, "continue")
    idle(nv)
    first, second = server.wait_for_requests(2, TURN_TIMEOUT_S)
    for req in (first, second):
        assert validation_error(req.body) is None
    messages = second.body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    answer = messages[2]["content"]
    assert answer[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_wait",
        "content": ABANDONED,
        "is_error": True,
    }
    # The last turn carries the prompt cache's breakpoint; the text is what was typed.
    assert {k: v for k, v in answer[1].items() if k != "cache_control"} == {
        "type": "text",
        "text": "continue",
    }
    # The history says what was sent: the answer is recorded, once.
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    answers = [
        b
        for r in records
        if r.get("role") == "user" and isinstance(r.get("content"), list)
        for b in r["content"]
        if b.get("type") == "tool_result"
    ]
    assert [a["content"] for a in answers] == [ABANDONED]


def test_restart_while_a_decision_waits(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    path = waiting_command(nv, fake_api)
    old = core_pid(nv)
    nv.command("Sightline restart")
    # Restart waited for the old core: it no longer holds the conversation's lock.
    assert gone(old)
    st = core_status(nv)
    assert st["conversation_path"] == path
    assert st["read_only"] is False and st["state"] == "idle" and st["pending"] is None
    continue_and_check(nv, fake_api, path)
    assert notes() == []


def test_kill_9_while_a_decision_waits(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    path = waiting_command(nv, fake_api)
    os.kill(core_pid(nv), signal.SIGKILL)
    wait_for(lambda: status(nv)["state"] == "stopped", what="the crash to be noticed")
    assert status(nv).get("pending") is None  # nothing waits once the core is gone
    wait_for(lambda: len(notes()) == 1, what="the crash message")
    assert "the core exited" in notes()[0]["msg"]
    # The next request starts a new core that reopens the conversation.
    assert core_status(nv)["read_only"] is False
    continue_and_check(nv, fake_api, path)


def test_quit_then_history_in_a_new_neovim(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api)
    path = waiting_command(nv, fake_api)
    pid = core_pid(nv)
    with contextlib.suppress(Exception):  # the session ends with Neovim
        nv.command("qa!")
    wait_for(lambda: gone(pid), TURN_TIMEOUT_S, "the core to exit with Neovim")

    again = claude(nvim_factory, fake_api)
    again.exec_lua("vim.ui.select = function(items, _, cb) cb(items[1]) end")
    again.command("Sightline history")
    wait_for(lambda: core_status(again)["conversation_path"] == path, TURN_TIMEOUT_S)
    continue_and_check(again, fake_api, path)


def test_a_later_crash_is_reported_after_a_restart(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    core_pid(nv)
    nv.command("Sightline restart")
    os.kill(core_pid(nv), signal.SIGKILL)
    wait_for(lambda: len(notes()) == 1, what="the crash after the restart to be reported")
    nv.command("Sightline restart")
    nv.command("Sightline restart")
    os.kill(core_pid(nv), signal.SIGKILL)
    wait_for(lambda: len(notes()) == 2, what="every later crash to be reported")
