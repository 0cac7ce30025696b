"""ACP terminals (issue 25 item 5) against the scripted agent (tests/acp_agent.py): an agent's
command runs as run_command does — asked through the gate (shown verbatim), in the workspace,
its output folded in the transcript with its exit status, which the agent reads too; refused
in plan mode; killed with everything it started when the turn is stopped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim
from tests.agent_util import decide, idle, send, wait_pending
from tests.conftest import transcript, wait_for
from tests.processes import processes_with


def test_a_terminal_is_asked_run_and_its_output_and_exit_status_reported(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    turn = [{"terminal": "printf 'one\\ntwo\\n'; pwd; exit 3", "wait": True}]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "run it")
    st = wait_pending(nv)
    assert st["pending"].startswith("run: printf")
    assert "$ printf 'one\\ntwo\\n'; pwd; exit 3" in transcript(nv)  # verbatim, first
    decide(nv, "accept")
    idle(nv)
    (done,) = log.wait("terminal_exit")
    assert done["exit"]["exitCode"] == 3
    assert done["output"]["output"] == f"one\ntwo\n{os.path.realpath(isolated_env)}\n"
    assert done["output"]["exitStatus"]["exitCode"] == 3
    shown = transcript(nv)
    assert any(line.startswith("⏵ exit code 3 ·") and "3 lines of output" in line for line in shown)
    assert any(line.strip() == "two" for line in shown), shown
    assert "[terminal exit 3]" in "\n".join(shown)


def test_a_denied_or_plan_mode_terminal_never_runs(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    marker = isolated_env / "ran"
    turn = [{"terminal": f"touch {marker}", "wait": True}]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn, turn])
    send(nv, "run it")
    wait_pending(nv)
    decide(nv, "reject", "not now")
    idle(nv)
    assert log.entries("terminal_result")[0]["ok"] is False
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    send(nv, "run it in plan mode")
    idle(nv)
    second = log.entries("terminal_result")[1]
    assert second["ok"] is False and "plan mode" in second["message"]
    assert not marker.exists()


def test_stop_kills_a_terminal_with_everything_it_started(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    # Found by a marker in their command lines: in the sandbox their pids are its own.
    marker = f"30{os.getpid()}"
    script = f"sleep {marker} & sleep {marker}; wait"
    turn: list[dict[str, Any]] = [{"terminal": script}, {"wait_cancel": True}]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "run it")
    wait_pending(nv)
    decide(nv, "accept")
    # The shell and its two sleeps, and the sandbox's bwrap (outside and inside).
    wait_for(lambda: len(processes_with(f"sleep {marker}")) >= 3, 10, "the terminal started")
    assert nv.exec_lua("return {require('sightline').stop()}") == [True]
    idle(nv)
    wait_for(lambda: processes_with(f"sleep {marker}") == [], 10, "the terminal's tree killed")
    log.wait("cancel")


def test_a_command_the_user_allowed_in_a_permission_is_not_asked_again(
    nvim_factory: Any, tmp_path: Path
) -> None:
    turn: list[dict[str, Any]] = [
        {"permission": {"id": "p1", "title": "`echo hi`", "kind": "execute"}},
        {"terminal": "echo hi", "wait": True},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "run it")
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    (done,) = log.wait("terminal_exit")
    assert done["exit"]["exitCode"] == 0 and done["output"]["output"] == "hi\n"


def test_a_terminal_runs_in_the_sandbox_and_a_kept_approval_covers_it_again(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    outside = tmp_path / "outside.txt"  # beside the workspace: /tmp is private in the sandbox
    write = [{"terminal": f"echo out > {outside}; echo done", "wait": True}]
    keep = [{"terminal": "echo kept", "wait": True}]
    nv, log = acp_nvim(nvim_factory, tmp_path, [write, keep, keep])
    send(nv, "write beside the workspace")
    wait_pending(nv)
    assert any(line.strip().startswith("(runs in the sandbox:") for line in transcript(nv))
    decide(nv, "accept")
    idle(nv)
    (first,) = log.wait("terminal_exit")
    assert first["output"]["output"] == "done\n" and not outside.exists()
    send(nv, "run echo")
    wait_pending(nv)
    assert nv.exec_lua("return {require('sightline').decide('accept', 'always')}") == [True]
    idle(nv)
    send(nv, "again")  # the same command: the kept approval runs it, nothing is asked
    idle(nv)
    third = log.wait("terminal_exit", 3)[2]
    assert third["output"]["output"] == "kept\n"
    assert any(line.startswith("✔ allowed by your kept approval") for line in transcript(nv))
