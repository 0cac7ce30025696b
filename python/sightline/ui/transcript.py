"""The transcript's text and highlights, computed here; the Lua pane only applies deltas.

A delta is `{start, lines, hls, chips, md, folds}`: replace the buffer from row `start` to
the end with `lines`, then paint `hls` (row, start_col, end_col or -1 for the whole line,
group), mark `chips` (row, col, end_col, target): code references <CR> navigates to, render
the `md` row spans [first, end) as Markdown (only what the user and the model wrote: notes,
diffs and command output are never read as Markdown) and fold the `folds` row spans
[first, end) (long command output and the model's thinking, opened with `zo`).
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sightline.domain import secrets
from sightline.ui.chips import Chip

USER_HEADER = "▍You"
OUTPUT_PREFIX = "  "
OUTPUT_SHOWN = 6
ASSISTANT_HEADER = "▍Agent"
THINKING_HEADER = "∴ Thinking"
THINKING_GROUP = "SightlineThinking"
_T = TypeVar("_T")


def _row(chip: dict[str, Any]) -> int:
    return int(chip["row"])


def _end(span: list[int]) -> int:
    return span[1]


def _hl_row(hl: tuple[int, int, int, str]) -> int:
    return hl[0]


def _tail(items: Sequence[_T], key: Callable[[_T], int], start: int, *, after: bool) -> int:
    """The index of the first item whose key is ≥ start (> start when `after`), in items
    sorted by key. Searched from the end, galloping: a streamed delta starts at the last
    rows, so the cost follows what the delta carries, not the transcript's length (a
    bisection over the whole list grows with it)."""
    bound = start + 1 if after else start  # keys are ints: > start is ≥ start + 1
    hi, step = len(items), 1
    i = hi - 1
    while i >= 0 and key(items[i]) >= bound:
        hi, i, step = i, i - step, step * 2
    if i == hi - 1:
        return hi  # the usual case: found by the first look(s), no search needed
    return bisect_left(items, bound, max(i, 0), hi, key=key)


@dataclass
class Transcript:
    lines: list[str] = field(default_factory=list)
    hls: list[tuple[int, int, int, str]] = field(default_factory=list)
    fixed_chips: list[dict[str, Any]] = field(default_factory=list)
    md: list[list[int]] = field(default_factory=list)
    folds: list[list[int]] = field(default_factory=list)
    finder: Callable[[str], list[Chip]] | None = None
    _dirty_from: int | None = 0
    _in_reply: bool = False
    _section: str | None = None  # in a reply: "thinking" or "text", where the stream goes
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def _mark(self, row: int) -> None:
        self._dirty_from = row if self._dirty_from is None else min(self._dirty_from, row)

    def _push(self, text: str, group: str | None = None) -> None:
        row = len(self.lines)
        self._mark(row)
        self.lines.append(text)
        if group:
            self.hls.append((row, 0, -1, group))

    def _separate(self) -> None:
        if self.lines and self.lines[-1] != "":
            self._push("")

    def clear(self) -> None:
        with self._lock:
            self.lines, self.hls, self.fixed_chips = [], [], []
            self.md, self.folds = [], []
            self._in_reply = False
            self._section = None
            self._dirty_from = 0

    def add_user(
        self, text: str, note: str | None = None, chip: dict[str, Any] | None = None
    ) -> None:
        """A user message; `note` is a muted line under it, a chip when `chip` is its target."""
        with self._lock:
            self._in_reply = False
            self._separate()
            self._push(USER_HEADER, "SightlineUser")
            first = len(self.lines)
            for line in text.split("\n"):
                self._push(line)
            self.md.append([first, len(self.lines)])
            if note:
                self._push(note, "SightlineNote")
                if chip:
                    row = len(self.lines) - 1
                    self.fixed_chips.append(
                        {
                            "row": row,
                            "col": 0,
                            "end_col": len(note.encode(errors="surrogateescape")),
                            "target": chip,
                        }
                    )

    def _open_reply(self) -> None:
        if not self._in_reply:
            self._separate()
            self._push(ASSISTANT_HEADER, "SightlineAssistant")
            self._in_reply = True
            self._section = None

    def _stream_into(self, text: str, group: str | None) -> None:
        first, *rest = text.split("\n")
        self._mark(len(self.lines) - 1)
        self.lines[-1] += first
        for line in rest:
            self._push(line, group)

    def append_text(self, text: str) -> None:
        """Stream assistant text into the current reply, opening it on first use."""
        with self._lock:
            self._open_reply()
            if self._section != "text":
                if self._section == "thinking":
                    self._push("")
                self._push("")
                self.md.append([len(self.lines) - 1, len(self.lines)])
                self._section = "text"
            self._stream_into(text, None)
            self.md[-1][1] = len(self.lines)

    def append_thinking(self, text: str) -> None:
        """Stream the model's thinking into a section of its own, above the reply's text,
        folded from its header on."""
        with self._lock:
            self._open_reply()
            if self._section != "thinking":
                if self._section == "text":
                    self._push("")
                self.folds.append([len(self.lines), len(self.lines) + 1])
                self._push(THINKING_HEADER, THINKING_GROUP)
                self._push("", THINKING_GROUP)
                self._section = "thinking"
            self._stream_into(text, THINKING_GROUP)
            self.folds[-1][1] = len(self.lines)

    def add_note(self, text: str, group: str = "SightlineNote") -> int:
        """A muted line of its own (retries, token counts, tool activity, errors); returns
        its first row, which `set_line` can rewrite once the outcome is known."""
        with self._lock:
            self._in_reply = False
            if self.lines and self.lines[-1] != "":
                self._push("")
            row = len(self.lines)
            for line in text.split("\n"):
                self._push(line, group)
            return row

    def set_line(self, row: int, text: str, group: str | None = None) -> None:
        """Rewrite one line written earlier (a tool call's note gets its outcome)."""
        with self._lock:
            if not 0 <= row < len(self.lines):
                return
            self.lines[row] = text.split("\n")[0]
            # hls stay sorted by row, so a delta finds its own by bisection.
            lo = bisect_left(self.hls, (row,))
            hi = bisect_left(self.hls, (row + 1,))
            self.hls[lo:hi] = [h for h in self.hls[lo:hi] if h[2] != -1]
            if group:
                insort(self.hls, (row, 0, -1, group))
            self._mark(row)

    def add_output(self, text: str, shown: int = OUTPUT_SHOWN) -> None:
        """Command output, verbatim: its last `shown` lines in view, the rest folded."""
        with self._lock:
            self._in_reply = False
            lines = text.split("\n")
            first = len(self.lines)
            for line in lines:
                self._push(OUTPUT_PREFIX + line, "SightlineOutput")
            if len(lines) > shown + 1:  # folding one line would hide nothing worth it
                self.folds.append([first, len(self.lines) - shown])

    def add_lines(self, lines: Sequence[tuple[str, str | None]]) -> int:
        """A block of lines of its own, each painted with its group (a diff, a checklist);
        returns its first row, which `set_line` can rewrite (a tool call's status)."""
        with self._lock:
            self._in_reply = False
            self._separate()
            row = len(self.lines)
            for text, group in lines:
                for line in text.split("\n"):
                    self._push(line, group)
            return row

    def replace_lines(
        self, row: int, old: Sequence[str], lines: Sequence[tuple[str, str | None]]
    ) -> bool:
        """Rewrite in place the block `add_lines` wrote at `row` (a diff as its hunks are
        decided) with as many lines, so that no row below moves (others hold rows to
        rewrite). False, and nothing changed, when the transcript no longer holds `old`
        there (cleared or rewritten since) or the count differs."""
        with self._lock:
            texts: list[str] = []
            hls: list[tuple[int, int, int, str]] = []
            for text, group in lines:
                for line in text.split("\n"):
                    if group:
                        hls.append((row + len(texts), 0, -1, group))
                    texts.append(line)
            end = row + len(old)
            if row < 0 or len(texts) != len(old) or self.lines[row:end] != list(old):
                return False
            self.lines[row:end] = texts
            # hls stay sorted by row, so a delta finds its own by bisection.
            self.hls[bisect_left(self.hls, (row,)) : bisect_left(self.hls, (end,))] = hls
            self._mark(row)
            return True

    def end_reply(self) -> None:
        with self._lock:
            self._in_reply = False

    def take_delta(self) -> dict[str, Any] | None:
        with self._lock:
            start = self._dirty_from
            if start is None:
                return None
            self._dirty_from = None
            return self._delta_from(start)

    def _delta_from(self, start: int) -> dict[str, Any]:
        # Every line drawn passes the redactor here (a model echoing the key, a command
        # shown verbatim); chips are found in what is drawn.
        # Rows, chips, hls, md spans and folds are all kept in row order: what a delta
        # carries is found from the end (_tail), so its cost does not grow with the transcript.
        lines = [secrets.redact(line) for line in self.lines[start:]]
        chips = self.fixed_chips[_tail(self.fixed_chips, _row, start, after=False) :]
        if self.finder is not None:
            for row, line in enumerate(lines, start):
                for col, end_col, target in self.finder(line):
                    chips.append({"row": row, "col": col, "end_col": end_col, "target": target})
        return {
            "start": start,
            "lines": lines,
            "hls": [list(h) for h in self.hls[_tail(self.hls, _hl_row, start, after=False) :]],
            "chips": chips,
            "md": [list(s) for s in self.md[_tail(self.md, _end, start, after=True) :]],
            "folds": [list(s) for s in self.folds[_tail(self.folds, _end, start, after=True) :]],
        }

    def full(self) -> dict[str, Any]:
        with self._lock:
            self._dirty_from = None
            return self._delta_from(0)
