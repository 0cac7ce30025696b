"""domain/spawn.py: a process sightline starts never outlives its owner — here the timeout of
`provider.api_key_cmd` and the end of a run (issue 20 §4). The nvim side (restart, quit,
SIGKILL of the core, for every kind of process) is tests/nvim/test_processes.py."""

from __future__ import annotations

import os
import sys
import time

import pytest

from sightline.domain import spawn
from sightline.providers.base import ProviderError, key_from_cmd
from tests.conftest import wait_for
from tests.processes import processes_with

DEADLINE_S = 2.0


def grandchild(marker: str) -> str:
    return f"{sys.executable} -c 'import time; time.sleep(300)' {marker} & "


def unique() -> str:
    return f"marker-{os.getpid()}-{time.monotonic_ns()}"


def test_a_hanging_key_command_is_killed_whole_at_its_timeout() -> None:
    marker = unique()
    started = time.monotonic()
    with pytest.raises(ProviderError, match="api_key_cmd failed"):
        key_from_cmd(["sh", "-c", grandchild(marker) + "wait"], 0.5)
    assert time.monotonic() - started < DEADLINE_S
    wait_for(lambda: not processes_with(marker), DEADLINE_S, "the key command's child to die")


def test_a_key_command_that_leaves_a_child_behind_gives_its_key_at_once() -> None:
    marker = unique()
    started = time.monotonic()
    key = key_from_cmd(["sh", "-c", grandchild(marker) + "echo sk-test-123"], 30.0)
    assert key == "sk-test-123" and time.monotonic() - started < DEADLINE_S
    wait_for(lambda: not processes_with(marker), DEADLINE_S, "the key command's child to die")


def test_an_empty_key_command_is_a_clear_refusal() -> None:
    with pytest.raises(ProviderError, match="api_key_cmd failed"):
        key_from_cmd([], 1.0)


def test_the_watchdog_kills_the_group_when_the_lifeline_is_cut() -> None:
    marker = unique()
    proc, group = spawn.popen(["sh", "-c", grandchild(marker) + "wait"])
    wait_for(lambda: processes_with(marker), 10, "the child to start")
    group.lifeline.cut()  # what the kernel does to the core's end when the core dies
    wait_for(lambda: not processes_with(marker), DEADLINE_S, "the group to die")
    assert proc.wait(DEADLINE_S) == -9


def test_stderr_as_the_lifeline_reaches_the_reader() -> None:
    lines: list[str] = []
    proc, group = spawn.popen(["sh", "-c", "echo one >&2; echo two >&2"], on=spawn.STDERR)
    group.lifeline.read_lines(lines.append)
    assert proc.wait(5) == 0
    wait_for(lambda: lines == ["one", "two"], 5, "the stderr lines")
    group.kill()
