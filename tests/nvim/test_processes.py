"""Processes die with their owner (issue 10 §5): an approved command's process group is killed
when the core ends however it ends (SIGKILL included) and when Neovim quits."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import TURN_TIMEOUT_S, claude, decide, send, wait_pending
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
    (shell,) = wait_for(lambda: processes_with(f"-c {command}"), TURN_TIMEOUT_S, "the command")
    pgid = os.getpgid(shell)
    # The shell, its watchdog and the sleep: the command is running.
    wait_for(lambda: len(group_members(pgid)) >= 3, what="the sleep to start")
    end(nv)
    # Once the group is empty nothing can touch the marker any more; had the shell lived
    # on, the group would have emptied only after its `touch`.
    wait_for(lambda: group_members(pgid) == [], 10, "the command's process group to die")
    assert not marker.exists()
