"""Processes die with their owner (issue 10 §5, issue 20 §4): every process sightline starts —
an approved command, an ACP agent, an MCP server, `provider.api_key_cmd` — is killed with all
it started (a background grandchild here) within 2 s of `:Sightline restart`, Neovim quitting
or a SIGKILL of the core."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.acp_util import agent_cmd
from tests.agent_util import TURN_TIMEOUT_S, claude, decide, idle, send, wait_pending
from tests.child import ROOT
from tests.conftest import wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.processes import processes_with

__all__ = ["fake_api"]


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry))
    return found


def core_pid(nv: Any) -> int:
    return int(nv.exec_lua("return require('sightline.host').request('core.ping').pid"))


def kill_core(nv: Any) -> None:
    os.kill(core_pid(nv), signal.SIGKILL)


def quit_neovim(nv: Any) -> None:
    with contextlib.suppress(Exception):  # the connection closes under the request
        nv.command("qa!")


@pytest.mark.parametrize("end", [kill_core, quit_neovim], ids=["kill -9 the core", ":qa!"])
def test_a_running_command_dies_with_its_owner(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, end: Callable[[Any], None]
) -> None:
    marker = isolated_env / "MARKER"
    nv = claude(nvim_factory, fake_api)
    command = f"sleep 2; touch {marker}"
    fake_api.script(tool_use("run_command", {"command": command}), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    shell, *_ = wait_for(lambda: processes_with(f"-c {command}"), TURN_TIMEOUT_S, "the command")
    pgid = os.getpgid(shell)
    # The shell, its watchdog and the sleep: the command is running.
    wait_for(lambda: len(group_members(pgid)) >= 3, what="the sleep to start")
    end(nv)
    # Once the group is empty nothing can touch the marker any more; had the shell lived
    # on, the group would have emptied only after its `touch`.
    wait_for(lambda: group_members(pgid) == [], 10, "the command's process group to die")
    assert not marker.exists()


DEADLINE_S = 2.0  # the bound: nothing sightline started is alive 2 s after its owner


def restart_core(nv: Any) -> None:
    nv.command("Sightline restart")


ENDS = pytest.mark.parametrize(
    "end", [restart_core, quit_neovim, kill_core], ids=["restart", ":qa!", "kill -9 the core"]
)


def grandchild(marker: str) -> str:
    """A shell line that leaves a process running in the background, named by `marker`."""
    return f"{sys.executable} -c 'import time; time.sleep(300)' {marker} & "


def dies_with(nv: Any, marker: str, end: Callable[[Any], None]) -> None:
    """The groups of the processes named `marker` are empty within DEADLINE_S of `end`."""
    pgids = {os.getpgid(p) for p in wait_for(lambda: processes_with(marker), TURN_TIMEOUT_S)}
    assert os.getpgid(os.getpid()) not in pgids  # sightline's own groups, not the test's
    end(nv)
    wait_for(
        lambda: all(group_members(g) == [] for g in pgids),
        DEADLINE_S,
        f"the process groups {pgids} to die",
    )


def unique() -> str:
    return f"marker-{os.getpid()}-{time.monotonic_ns()}"


@ENDS
def test_an_acp_agent_dies_with_what_it_started(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path, end: Callable[[Any], None]
) -> None:
    marker = unique()
    cmd, _log = agent_cmd(tmp_path, [[{"say": "hello"}]])
    agent = {"cmd": ["sh", "-c", grandchild(marker) + 'exec "$@"', "sh", *cmd]}
    nv = nvim_factory({"provider": {"name": "acp", "agent": agent}})
    send(nv)
    idle(nv)
    dies_with(nv, marker, end)


@ENDS
def test_an_mcp_server_dies_with_what_it_started(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, end: Callable[[Any], None]
) -> None:
    marker = unique()
    demo = [sys.executable, str(ROOT / "tests" / "mcp_servers" / "demo.py")]
    server = {"command": "sh", "args": ["-c", grandchild(marker) + 'exec "$@"', "sh", *demo]}
    nv = claude(nvim_factory, fake_api, mcp={"servers": {"demo": server}})
    fake_api.script(text("ok"))
    send(nv)
    idle(nv)
    dies_with(nv, marker, end)


@ENDS
def test_a_command_dies_with_what_it_started(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, end: Callable[[Any], None]
) -> None:
    marker = unique()
    nv = claude(nvim_factory, fake_api)
    # Not this interpreter: it lives under $HOME here, which the sandbox hides.
    command = f"/bin/sh -c 'sleep 300' {marker} & wait"
    fake_api.script(tool_use("run_command", {"command": command}), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    dies_with(nv, marker, end)


@ENDS
def test_a_key_command_dies_with_what_it_started(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, end: Callable[[Any], None]
) -> None:
    marker = unique()
    key_cmd = ["sh", "-c", grandchild(marker) + "wait"]  # hangs: the core waits for the key
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "api_key_cmd": key_cmd}
    nv = nvim_factory({"provider": provider})
    send(nv)
    dies_with(nv, marker, end)
