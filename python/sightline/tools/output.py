"""Bounding what a tool hands back to the model: lines, bytes, and a note saying what was cut."""

from __future__ import annotations

from dataclasses import dataclass

from sightline.domain import secrets

MAX_LINE_CHARS = 2000


def clip_line(line: str, limit: int = MAX_LINE_CHARS, length: int | None = None) -> str:
    """The line cut at `limit` characters with a note; `length` is the whole line's length
    when `line` is already its head."""
    length = len(line) if length is None else length
    if length <= limit:
        return line
    # Never half a secret (domain/secrets.py), even where `line` is a head cut elsewhere.
    kept = secrets.cut_point(line, limit, more=length > len(line))
    return line[:kept] + f" … [{length - kept} more characters]"


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
    the start says what ran, the end usually says what failed). Each part is kept a secret's
    length longer than shown, so its cut can step around a secret it would split."""

    def __init__(self, max_bytes: int):
        self.head_max = max_bytes // 3
        self.tail_max = max_bytes - self.head_max
        extra = secrets.margin()
        self.head_cap, self.tail_cap = self.head_max + extra, self.tail_max + extra
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self) -> str:
        if self.total <= self.head_max + self.tail_max:
            return (self.head + self.tail).decode(errors="replace")
        if self.total == len(self.head) + len(self.tail):  # all kept: cut the whole
            head = tail = bytes(self.head + self.tail)
        else:
            head, tail = bytes(self.head), bytes(self.tail)
        kept_head = head[: secrets.cut_point(head, self.head_max)]
        start = secrets.start_point(tail, len(tail) - self.tail_max)
        if head is tail:
            start = max(start, len(kept_head))
        kept_tail = tail[start:]
        cut = self.total - len(kept_head) - len(kept_tail)
        return (
            f"{kept_head.decode(errors='replace')}\n… [{cut} bytes of output cut] …\n"
            f"{kept_tail.decode(errors='replace')}"
        )
