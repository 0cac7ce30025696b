"""run_command: asks every time, runs in the workspace in its own process group, bounded,
without the provider's key; a timeout or a stopped turn kills everything it started."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from tests.agent_util import (
    API_KEY,
    claude,
    decide,
    idle,
    only_result,
    send,
    tool_results,
    wait_pending,
)
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.processes import processes_with

__all__ = ["fake_api"]


def argv(pid: int) -> list[str]:
    """A process's argv ([] once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def run(command: str) -> Any:
    return tool_use("run_command", {"command": command})


def test_allowed_command_runs_in_the_workspace_without_the_key(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    command = 'pwd; echo "key=[$ANTHROPIC_API_KEY]"; echo "copy=$COPY"; echo oops >&2; exit 3'
    # The key under another name (the core, started by the first send, inherits it): redacted.
    nv.exec_lua(f"vim.env.COPY = '{API_KEY}'")
    fake_api.script(run(command), text("ok"))
    send(nv)
    st = wait_pending(nv)
    assert st["pending"].startswith("run: pwd; echo")
    assert any(line == f"$ {command}" for line in transcript(nv))  # shown verbatim
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)
    out = result["content"].splitlines()
    assert out[0] == "exit code 3" and result["is_error"] is True
    assert out[1] == os.path.realpath(isolated_env)
    assert "key=[]" in out and "copy=[REDACTED]" in out and "oops" in out
    assert API_KEY not in result["content"]


def test_denied_command_does_not_run_and_the_model_is_told(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    marker = isolated_env / "ran"
    nv = claude(nvim_factory, fake_api)
    fake_api.script(run(f"touch {marker}"), text("ok"))
    send(nv)
    wait_pending(nv)
    assert status(nv)["pending"] == f"run: touch {marker}"
    nv.command("Sightline reject not now")
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and result["content"].startswith("denied by the user: not now")
    assert not marker.exists()


def test_command_past_its_timeout_is_killed(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    marker = f"{uuid.uuid4().int % 1000 + 100}.{os.getpid() % 1000}"
    nv = claude(nvim_factory, fake_api, tools={"command_timeout_ms": 500})
    fake_api.script(run(f"echo started; sleep {marker} & sleep {marker}; echo never"), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and result["content"].startswith("timed out after 0.5 s")
    assert "started" in result["content"] and "never" not in result["content"]
    assert processes_with(f"sleep {marker}") == []


def test_stop_mid_command_kills_its_process_group(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    marker = f"{uuid.uuid4().int % 1000 + 100}.{os.getpid() % 1000 + 1}"
    nv = claude(nvim_factory, fake_api)
    # A background child too: only killing the group reaches it.
    fake_api.script(run(f"sleep {marker} & sleep {marker}; wait"), text("never sent"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    # The shell, its watchdog and its two sleeps (the shells' command lines hold the marker),
    # and the sandbox's bwrap (two: the one outside, the namespace's first process).
    pids = wait_for(lambda: len(p := processes_with(f"sleep {marker}")) >= 4 and p)
    assert len({os.getpgid(p) for p in pids}) == 1
    nv.command("Sightline stop")
    idle(nv)
    wait_for(lambda: processes_with(f"sleep {marker}") == [], what="the process group to die")
    send(nv, "next")
    idle(nv)
    (result,) = tool_results(fake_api, 1)
    assert result["is_error"] and "stopped" in result["content"]


def test_a_stopped_command_says_so_before_the_turn_says_stopped(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    # A process out of the command's group still holds its output open a while after the
    # kill: the command's lines must not wait for it to come after the turn's.
    fake_api.script(run("echo started; setsid sleep 3 & sleep 30"), text("never sent"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    # The sleep itself, past the echo: the sandbox's bwrap carries the whole line before.
    wait_for(lambda: [p for p in processes_with("sleep 30") if argv(p) == ["sleep", "30"]])
    nv.command("Sightline stop")
    idle(nv)
    shown = wait_for(
        lambda: (t := transcript(nv)) and any(line.startswith("⏵ stopped") for line in t) and t,
        what="the command's stop line",
    )
    ran = next(i for i, line in enumerate(shown) if line.startswith("⏵ stopped with the turn"))
    stop = shown.index("■ Stopped.")
    output = next(i for i, line in enumerate(shown) if line.strip() == "started")
    assert ran < stop and output < stop, shown
    assert shown[stop + 1 :] == [] or all(not line.strip() for line in shown[stop + 1 :]), shown
