"""Bounding what a tool hands back to the model: lines, bytes, and a note saying what was cut."""

from __future__ import annotations

from dataclasses import dataclass

MAX_LINE_CHARS = 2000


def clip_line(line: str, limit: int = MAX_LINE_CHARS, length: int | None = None) -> str:
    """The line cut at `limit` characters with a note; `length` is the whole line's length
    when `line` is already its head."""
    length = len(line) if length is None else length
    if length <= limit:
        return line
    return line[:limit] + f" … [{length - limit} more characters]"


@dataclass
class Bounded:
    """Collects output lines until a line or byte limit; remembers how much it dropped."""

    max_lines: int
    max_bytes: int
    lines: list[str]
    size: int = 0
    dropped: int = 0

    @classmethod
    def make(cls, max_lines: int, max_bytes: int) -> Bounded:
        return cls(max_lines, max_bytes, [])

    @property
    def full(self) -> bool:
        return self.dropped > 0

    def add(self, line: str) -> bool:
        """Keep the line if it fits; returns False once the output is full."""
        cost = len(line.encode()) + 1
        if self.dropped or len(self.lines) >= self.max_lines or self.size + cost > self.max_bytes:
            self.dropped += 1
            return False
        self.lines.append(line)
        self.size += cost
        return True

    def text(self) -> str:
        return "\n".join(self.lines)


class HeadTail:
    """Keeps the first and the last bytes of a stream of unknown length (a command's output:
    the start says what ran, the end usually says what failed)."""

    def __init__(self, max_bytes: int):
        self.head_max = max_bytes // 3
        self.tail_max = max_bytes - self.head_max
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_max:
                del self.tail[: len(self.tail) - self.tail_max]

    def text(self) -> str:
        kept = len(self.head) + len(self.tail)
        head = self.head.decode(errors="replace")
        tail = self.tail.decode(errors="replace")
        if kept >= self.total:
            return head + tail
        return f"{head}\n… [{self.total - kept} bytes of output cut] …\n{tail}"
