"""The grep tool's matcher, run as a child process: `python -I -S grep_worker.py <parent pid>`.

Python's `re` backtracks and holds the GIL while it matches: `(=+)+y` on a line of 40 `=`
would freeze the whole core (and every request Neovim waits on). Here it only costs this
process, which the core kills when the turn stops, and which bounds itself: a line the pattern
takes longer than `line_budget_s` on is skipped (the matcher checks signals, so a timer
interrupts it), a few such lines end the search, and so does `deadline_s`.

Standard library only (it runs isolated, without the core's path). Reads one JSON request on
stdin: {pattern, root, files, max_file_bytes, line_chars, max_matches, line_budget_s,
deadline_s, max_slow_lines}; writes JSON lines: ["error", text], ["match", file, line, head,
length], ["slow", file, line], then ["end", "done" | "deadline" | "slow" | "limit"].
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import time
from typing import Any

TICK_S = 0.02
BINARY_PROBE = 8192


class SlowLine(Exception):
    """The pattern has been working on one line for longer than the line budget."""


class Deadline(Exception):
    """The whole search ran out of time."""


class _Watch:
    """A timer tick that notices a line the pattern is stuck on, the deadline, and a parent
    that died (the child must not outlive the core)."""

    def __init__(self, parent: int, line_budget_s: float, deadline_s: float):
        self.parent = parent
        self.stuck_ticks = max(1, round(line_budget_s / TICK_S))
        self.deadline = time.monotonic() + deadline_s
        self.line = 0  # bumped for every line searched
        self._seen = -1
        self._same = 0

    def tick(self, signum: int, frame: Any) -> None:
        if os.getppid() != self.parent:
            os._exit(1)
        if time.monotonic() > self.deadline:
            raise Deadline
        if self.line == self._seen:
            self._same += 1
            if self._same >= self.stuck_ticks:
                self._same = 0
                raise SlowLine
        else:
            self._seen, self._same = self.line, 0


def _emit(*item: Any) -> None:
    # Whole lines only: a tick raising mid-write would tear one.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        sys.stdout.write(json.dumps(item) + "\n")
        sys.stdout.flush()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


def _read_regular(path: str, max_bytes: int) -> bytes | None:
    """The file's bytes, or None unless it is a regular file of at most max_bytes.
    O_NONBLOCK: opening a FIFO must not wait for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def search(req: dict[str, Any], watch: _Watch) -> str:
    regex = re.compile(req["pattern"])
    root, limit = req["root"], int(req["line_chars"])
    matches, slow = 0, 0
    for name in req["files"]:
        try:
            data = _read_regular(os.path.join(root, name), int(req["max_file_bytes"]))
            if data is None or b"\0" in data[:BINARY_PROBE]:
                continue
            for number, line in enumerate(data.decode(errors="replace").splitlines(), 1):
                watch.line += 1
                try:
                    hit = regex.search(line) is not None
                except SlowLine:
                    _emit("slow", name, number)
                    slow += 1
                    if slow >= int(req["max_slow_lines"]):
                        return "slow"
                    continue
                if hit:
                    _emit("match", name, number, line[:limit], len(line))
                    matches += 1
                    if matches > int(req["max_matches"]):
                        return "limit"
        except SlowLine:
            continue  # slow to read (a stalled disk): skipped
    return "done"


def main() -> None:
    req = json.loads(sys.stdin.buffer.read())
    try:
        re.compile(req["pattern"])
    except (re.error, RecursionError, OverflowError, ValueError) as err:
        _emit("error", f"not a valid regular expression: {err}")
        return
    watch = _Watch(int(sys.argv[1]), float(req["line_budget_s"]), float(req["deadline_s"]))
    signal.signal(signal.SIGALRM, watch.tick)
    signal.setitimer(signal.ITIMER_REAL, TICK_S, TICK_S)
    try:
        how = search(req, watch)
    except Deadline:
        how = "deadline"
    except SlowLine:
        how = "done"  # fired between lines at the very end; nothing was left to search
    signal.setitimer(signal.ITIMER_REAL, 0)
    _emit("end", how)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        os._exit(1)
