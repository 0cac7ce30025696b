"""The core's life: nothing at start-up, lazy start, crash → one message, restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import child
from tests.conftest import capture_notify, said, status, transcript, wait_for, wait_idle


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


def _headless_run(init_dir: Any, *commands: str) -> subprocess.CompletedProcess[str]:
    """A headless Neovim configured as a user's (init.lua calling setup()), running commands
    then quitting with :qa!; what it printed is what a script running it would see."""
    text = child.init_lua({"provider": {"name": "echo"}})
    init = child.write_init(text, init_dir)
    argv = child.argv(init, embed=False)
    for command in commands:
        argv += ["-c", command]
    argv += ["-c", "qa!"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


WAIT_IDLE = (
    "lua vim.wait(10000, function() return require('sightline').status().state == 'idle' end)"
)


@pytest.mark.parametrize("during_turn", [False, True])
def test_quitting_never_reports_the_core_as_crashed(isolated_env: Any, during_turn: bool) -> None:
    commands = ["lua assert(require('sightline').send('hello'))"]
    if not during_turn:
        commands.append(WAIT_IDLE)
    commands.append("lua assert(require('sightline.host').running(), 'the core runs')")
    done = _headless_run(isolated_env.parent, *commands)
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    assert "sightline" not in printed, printed


def test_core_without_pynvim_says_to_run_make_venv_once(nvim_factory: Any, tmp_path: Path) -> None:
    """lazy.nvim with `dir =` skips `build`: the interpreter lacks pynvim. The user sees one
    message saying what to run, from a send and from :Sightline chat alike."""
    bare = _python_without_pynvim(tmp_path)
    nv = nvim_factory({"provider": {"name": "echo"}, "python": bare})
    notes = capture_notify(nv)
    ok, err = nv.exec_lua("return {require('sightline').send('x')}")
    assert ok is None
    assert "make venv" in err and ":Lazy build sightline.nvim" in err and '"pynvim"' in err
    assert "Traceback" not in err and "ModuleNotFoundError" not in err
    wait_for(lambda: status(nv)["state"] == "stopped", what="the core's exit")
    nv.command("Sightline chat")
    wait_for(lambda: notes(), what="the message for the second start")
    wait_for(lambda: not nv.exec_lua("return require('sightline.host').running()"))
    (note,) = notes()  # the refused send gave it already; the exit does not repeat it
    assert said(nv, note["msg"]) == err and note["level"] == 4
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "pynvim is not importable there" in text
    assert "make venv" in text and ":Lazy build sightline.nvim" in text


def _python_without_pynvim(tmp: Path) -> str:
    """A fresh interpreter with none of the core's packages, as lazy.nvim's `dir =` leaves it."""
    venv = tmp / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    assert subprocess.run([python, "-c", "import pynvim"], capture_output=True).returncode != 0
    return python
