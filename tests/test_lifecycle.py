"""The core's life: nothing at start-up, lazy start, crash → one message, restart."""

from __future__ import annotations

import os
import signal
from typing import Any

from tests.conftest import capture_notify, status, transcript, wait_for, wait_idle


def child_pids(nv: Any) -> list[int]:
    pid = nv.call("getpid")
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def core_pid(nv: Any) -> int:
    return int(nv.exec_lua("return require('sightline.host').request('core.ping').pid"))


def test_nothing_starts_at_startup_and_status_does_not_start_it(nvim: Any) -> None:
    assert nvim.exec_lua("return vim.fn.exists(':Sightline')") == 2
    assert nvim.exec_lua("return package.loaded['sightline.host'] == nil")
    assert status(nvim)["state"] == "stopped"
    assert child_pids(nvim) == []
    assert nvim.exec_lua("return require('sightline.host').running()") is False


def test_core_killed_shows_one_message_and_next_send_works(nvim: Any) -> None:
    notes = capture_notify(nvim)
    nvim.exec_lua("assert(require('sightline').send('before'))")
    wait_idle(nvim)
    os.kill(core_pid(nvim), signal.SIGKILL)
    wait_for(lambda: status(nvim)["state"] == "stopped", what="the core's exit to be noticed")
    wait_for(lambda: notes(), what="the crash message")
    (note,) = notes()
    assert "the core exited" in note["msg"] and note["level"] == 4
    assert nvim.exec_lua("return {require('sightline').send('after')}") == [True]
    wait_for(lambda: "echo: after" in transcript(nvim))
    # The new core reloaded the conversation: the earlier exchange is still there.
    assert "echo: before" in transcript(nvim)
    assert len(notes()) == 1


def test_restart_command_starts_a_new_core_on_the_same_conversation(nvim: Any) -> None:
    notes = capture_notify(nvim)
    nvim.exec_lua("assert(require('sightline').send('keep'))")
    wait_idle(nvim)
    old = core_pid(nvim)
    conv = nvim.exec_lua("return require('sightline.host').status().conversation")
    nvim.command("Sightline restart")
    assert core_pid(nvim) != old
    assert nvim.exec_lua("return require('sightline.host').status().conversation") == conv
    assert notes() == []  # an asked-for restart is not a crash
    wait_for(lambda: not os.path.exists(f"/proc/{old}") or _zombie(old), what="old core exit")


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] == "Z"
    except OSError:
        return True


def test_missing_interpreter_is_a_clear_refusal(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "python": "/nonexistent/python3"})
    ok, err = nv.exec_lua("return {require('sightline').send('x')}")
    assert ok is None and "/nonexistent/python3" in err and "not found" in err
