"""grep's matcher is bounded and never holds the core (issue 10 §3): a catastrophic pattern
costs a killable child process, a per-line and a per-call budget, never the GIL; every read
path opens only regular files and never /proc, /sys or /dev."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.agent.session import Session, Turn
from sightline.domain import workspace
from sightline.domain.errors import Refused
from sightline.gate.turn_contract import ToolResult
from sightline.mentions import build_parts as context
from sightline.tools import read
from tests.conftest import wait_for
from tests.effective_config import core_config
from tests.fake_editor import FakeEditor
from tests.fakeapi import fake_api
from tests.grep_util import CATASTROPHIC
from tests.processes import processes_with

__all__ = ["fake_api"]


def turn_in(ws: Path) -> Turn:
    """A turn of a session on the in-memory editor; no buffer is loaded: the tools read the disk."""
    session = Session(FakeEditor(buffers={}), core_config(), str(ws), [], ws / "history")
    return Turn(1, session)


def grep(ws: Path, pattern: str, glob: str | None = None) -> ToolResult:
    args: dict[str, Any] = {"pattern": pattern}
    if glob:
        args["glob"] = glob
    return read.grep(turn_in(ws), args)


def test_catastrophic_line_is_skipped_and_named_and_the_rest_is_searched(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("=" * 40 + "\n==y here\n")
    (tmp_path / "b.txt").write_text("===y\n")
    started = time.monotonic()
    result = grep(tmp_path, CATASTROPHIC)
    assert time.monotonic() - started < 5
    lines = result.content.splitlines()
    assert lines[:2] == ["a.txt:2: ==y here", "b.txt:1: ===y"]
    assert "1 line(s) skipped" in result.content and "(a.txt:1)" in result.content


def test_a_pattern_slow_on_every_line_ends_the_search(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text(("=" * 40 + "\n") * 50)
    result = grep(tmp_path, CATASTROPHIC)
    assert result.content.startswith(f"no matches for {CATASTROPHIC!r}")
    assert f"{read.GREP_MAX_SLOW_LINES} line(s) skipped" in result.content
    assert "the pattern is too slow" in result.content


def test_the_core_keeps_running_while_a_catastrophic_grep_matches(tmp_path: Path) -> None:
    """The GIL is never held by the matcher: the calling process keeps ticking."""
    (tmp_path / "log.txt").write_text(("=" * 40 + "\n") * 3)
    done = threading.Event()

    def search() -> None:
        grep(tmp_path, CATASTROPHIC)
        done.set()

    worker = threading.Thread(target=search)
    worker.start()
    gaps, last = [], time.perf_counter()
    while not done.is_set():
        time.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    worker.join()
    assert len(gaps) > 20  # it did run for a while (3 lines × the line budget)
    assert max(gaps) < 0.1, max(gaps)


def test_cancelling_the_turn_kills_the_matcher_at_once(tmp_path: Path) -> None:
    # Each line costs a few ms (under the line budget): the search would take many seconds.
    (tmp_path / "log.txt").write_text(("=" * 14 + "\n") * 3000)
    turn = turn_in(tmp_path)
    out: list[ToolResult] = []
    worker = threading.Thread(target=lambda: out.append(read.grep(turn, {"pattern": CATASTROPHIC})))
    worker.start()
    wait_for(lambda: processes_with(str(read.GREP_WORKER)), what="the matcher to start")
    started = time.monotonic()
    turn.cancel()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - started < 0.5
    assert processes_with(str(read.GREP_WORKER)) == []
    assert out and out[0].content.startswith("no matches")


def test_bad_and_huge_patterns_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(Refused, match="not a valid regular expression"):
        grep(tmp_path, "(")
    with pytest.raises(Refused, match="longer than"):
        grep(tmp_path, "a" * (read.GREP_MAX_PATTERN + 1))


LINE = st.text(alphabet="ab=y \t.", max_size=30)
PATTERN = st.lists(
    st.sampled_from(["a", "b", "=", "y", ".", "a*", "b+", "[ab]", "^", "$", r"\s", "(a|b)", "="]),
    min_size=1,
    max_size=6,
).map("".join)


@settings(max_examples=25, deadline=None)
@given(files=st.lists(st.lists(LINE, max_size=8), min_size=1, max_size=3), pattern=PATTERN)
def test_bounded_matcher_finds_what_re_finds(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[str]], pattern: str
) -> None:
    """Rule: where `re` is fast, the child process answers exactly what `re` answers."""
    ws = tmp_path_factory.mktemp("ws")
    expected = []
    for index, lines in enumerate(files):
        name = f"f{index}.txt"
        (ws / name).write_text("".join(line + "\n" for line in lines))
        regex = re.compile(pattern)
        expected += [f"{name}:{n}: {line}" for n, line in enumerate(lines, 1) if regex.search(line)]
    result = grep(ws, pattern)
    want = "\n".join(expected) if expected else f"no matches for {pattern!r}"
    assert result.content == want


def test_fifos_and_devices_are_never_opened(tmp_path: Path) -> None:
    """Rule: every read path opens only regular files (a FIFO would block the reader)."""
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "stdin").symlink_to("/dev/stdin")
    (tmp_path / "ok.txt").write_text("pipe\n")
    turn = turn_in(tmp_path)
    done: list[Any] = []

    def attempts() -> None:
        with pytest.raises(Refused, match="not a regular file"):
            read.read_file(turn, {"path": "pipe"})
        with pytest.raises(Refused, match="outside the workspace"):
            read.read_file(turn, {"path": "stdin"})
        done.append(grep(tmp_path, "pipe").content)
        parts = context.build_context_parts("@pipe @stdin @ok.txt", {}, tmp_path)
        done.append(parts)

    worker = threading.Thread(target=attempts, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "a read blocked on a FIFO"
    assert done[0] == "ok.txt:1: pipe"
    assert len(done[1]) == 1 and 'path="ok.txt"' in done[1][0]


def test_system_files_are_refused_even_in_a_workspace_at_the_root() -> None:
    turn = turn_in(Path("/"))
    for path in ("/proc/self/environ", "proc/self/environ", "/sys/kernel/hostname", "/dev/null"):
        with pytest.raises(Refused, match="system file"):
            workspace.resolve("/", path)
        with pytest.raises(Refused, match="system file"):
            read.read_file(turn, {"path": path})
    assert context.build_context_parts("@/proc/self/environ @proc/self/status", {}, "/") == []
