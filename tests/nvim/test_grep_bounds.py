"""grep's matcher is bounded and never holds the core (issue 10 §3): a catastrophic pattern
costs a killable child process, a per-line and a per-call budget, never the GIL; every read
path opens only regular files and never /proc, /sys or /dev."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.tools import read
from tests.agent_util import claude, idle, send, tool_results
from tests.conftest import status, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, reply, text, tool_use
from tests.grep_util import CATASTROPHIC
from tests.processes import processes_with

__all__ = ["fake_api"]


def test_stop_during_a_catastrophic_grep_is_immediate_and_requests_stay_prompt(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    """Issue 10 §3: `:Sightline stop` returned never while grep held the GIL; a request Neovim
    waits on is answered at once whatever the worker does."""
    (isolated_env / "log.txt").write_text(("=" * 14 + "\n") * 3000)
    (isolated_env / "one.txt").write_text("=" * 40 + "\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(tool_use("grep", {"pattern": CATASTROPHIC}), text("never asked"))
    send(nv)
    wait_for(lambda: processes_with(str(read.GREP_WORKER)), 30, "the matcher to start")
    timed = "local t = vim.uv.hrtime(); {0}; return (vim.uv.hrtime() - t) / 1e6"
    status_ms = [
        nv.exec_lua(timed.format("require('sightline.host').request('agent.status')"))
        for _ in range(5)
    ]
    stop_ms = nv.exec_lua(timed.format("vim.cmd('Sightline stop')"))
    assert status(nv)["state"] == "idle"
    # Generous bounds for a loaded machine (`make bench` measures them): what they rule out
    # is waiting on the matcher, which took as long as the search (forever, with 40 `=`).
    assert max(status_ms) < 500 and stop_ms < 500, (status_ms, stop_ms)
    wait_for(lambda: processes_with(str(read.GREP_WORKER)) == [], what="the matcher to die")
    fake_api.script(text("fine"))
    send(nv, "next")
    idle(nv)
    (result,) = tool_results(fake_api, 1)
    assert result["is_error"] and "stopped" in result["content"]


def test_catastrophic_grep_through_the_model_answers_with_the_skip_note(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "one.txt").write_text("=" * 40 + "\n===y\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(reply(tool_use("grep", {"pattern": CATASTROPHIC})), text("ok"))
    send(nv)
    idle(nv)
    (result,) = tool_results(fake_api, 1)
    assert result["content"].splitlines()[0] == "one.txt:2: ===y"
    assert "(one.txt:1)" in result["content"]
