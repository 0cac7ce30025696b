"""A bare UI client for the typing benchmarks: one socket to Neovim, read in the caller's
thread.

tests/screen.py keeps a whole screen for the suite's assertions, behind pynvim's event loop
in a thread of its own; a key timed through it also times Python waking that thread and
then the caller (~1.5 ms at the median, ~3 ms at p99 with nothing else running). Here a key
is timed from the write of its `nvim_input` to the read of the `flush` that ends the redraw
showing it, and only the editor's first row is kept: what is left is Neovim's own latency.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import msgpack

ROW = 0  # the row typed on (the editor window's first, at the screen's top left)


class RawUi:
    def __init__(self, address: str, width: int, height: int) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(address)
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        self._msgid = 0
        self.width = width
        self.mode = ""
        self.row = [" "] * width  # the screen's row ROW, as drawn
        self.flushed = False
        self._send("nvim_ui_attach", [width, height, {"rgb": True, "ext_linegrid": True}])
        self.wait_for(lambda: self.flushed, "the first frame")

    def close(self) -> None:
        self._sock.close()

    def _send(self, method: str, args: list[Any]) -> float:
        self._msgid += 1
        data = msgpack.packb([0, self._msgid, method, args])
        sent = time.perf_counter()
        self._sock.sendall(data)
        return sent

    def _messages(self, deadline: float) -> Iterator[Any]:
        while True:
            yield from self._unpacker
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Neovim drew nothing in time")
            self._sock.settimeout(left)
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("Neovim closed the UI's socket")
            self._unpacker.feed(chunk)

    def _apply(self, events: list[Any]) -> bool:
        """Apply one redraw batch; whether it ended with a flush."""
        flush = False
        for name, *calls in events:
            if name == "grid_line":
                for grid, row, col, cells, *_ in calls:
                    if grid == 1 and row == ROW:
                        self._line(col, cells)
            elif name == "mode_change":
                self.mode = calls[-1][0]
            elif name == "flush":
                flush = True
        if flush:
            self.flushed = True
        return flush

    def _line(self, col: int, cells: list[Any]) -> None:
        for cell in cells:
            text, repeat = cell[0], cell[2] if len(cell) > 2 else 1
            for _ in range(repeat):
                if col < self.width:
                    self.row[col] = text
                col += 1

    def wait_for(self, done: Callable[[], Any], what: str, timeout: float = 10.0) -> float:
        """Read redraws until `done()` holds after a flush; the perf_counter() of that read."""
        for message in self._messages(time.monotonic() + timeout):
            if message[0] == 2 and message[1] == "redraw" and self._apply(message[2]) and done():
                return time.perf_counter()
        raise AssertionError(f"never drawn: {what}")  # (the generator only ends by raising)

    def text(self) -> str:
        return "".join(self.row)

    def type_key(self, key: str, shown: str) -> float:
        """ms from sending `key` to the flush after which row ROW starts with `shown`."""
        sent = self._send("nvim_input", [key])
        drawn = self.wait_for(lambda: self.text().startswith(shown), f"{shown!r} typed")
        return (drawn - sent) * 1000


KEY_EVERY_S = 0.02


def type_until_told(ui: RawUi, every: float = KEY_EVERY_S) -> list[float]:
    """A key every `every` s on the first row until stdin has a line; the line is cleared
    every 50 characters, untimed."""
    import select
    import sys

    samples: list[float] = []
    typed = ""
    next_at = time.monotonic()
    while not select.select([sys.stdin], [], [], 0)[0]:
        if len(typed) >= 50:
            ui.type_key("<C-u>", " " * len(typed))
            typed = ""
        typed += "abcdefghijklmnopqrstuvwxyz"[len(samples) % 26]
        samples.append(ui.type_key(typed[-1], typed))
        next_at += every
        left = next_at - time.monotonic()
        if left > 0:
            time.sleep(left)
    return samples


def main() -> None:
    """`python -m tests.rawui ADDRESS WIDTH HEIGHT`: attach (say "attached"), wait for
    Insert mode (say "ready"); on a line from stdin type (type_until_told) until the next
    one, then print the samples (ms, JSON). A process of its own: in the benchmark's, the
    fake API's threads would hold the GIL while a key's flush waits to be read."""
    import json
    import sys

    address, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ui = RawUi(address, width, height)
    sys.stdout.write("attached\n")
    sys.stdout.flush()
    ui.wait_for(lambda: ui.mode == "insert", "Insert mode", timeout=60)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    samples = type_until_told(ui)
    sys.stdout.write(json.dumps(samples) + "\n")
    sys.stdout.flush()
    ui.close()


class Typist:
    """The typing of `main`, in a process of its own, driven from the benchmark."""

    def __init__(self, address: str, width: int, height: int) -> None:
        import subprocess
        import sys
        from pathlib import Path

        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.rawui", address, str(width), str(height)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
        self._expect("attached")

    def _expect(self, word: str) -> None:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()
        if line != word:
            raise RuntimeError(f"the typing process said {line!r}, not {word!r}")

    def _say(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write("\n")
        self._proc.stdin.flush()

    def ready(self) -> None:
        """Wait until Neovim is in Insert mode."""
        self._expect("ready")

    def start(self) -> None:
        self._say()

    def stop(self) -> list[float]:
        """Stop typing; the samples (ms)."""
        import json

        self._say()
        assert self._proc.stdout is not None
        samples = json.loads(self._proc.stdout.readline())
        self._proc.wait(10)
        return [float(s) for s in samples]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


if __name__ == "__main__":
    main()
