"""The transcript's text and highlights, computed here; the Lua pane only applies deltas.

A delta is `{start, lines, hls, chips, md, folds}`: replace the buffer from row `start` to
the end with `lines`, then paint `hls` (row, start_col, end_col or -1 for the whole line,
group), mark `chips` (row, col, end_col, target): code references <CR> navigates to, render
the `md` row spans [first, end) as Markdown (only what the user and the model wrote: notes,
diffs and command output are never read as Markdown) and fold the `folds` row spans
[first, end) (long command output and the model's thinking, opened with `zo`); `cuts`
are the row spans [first, end) of each line cut into rows (ui/rows.py), yanked whole.

The model keeps lines as they came (raw); the delta's rows are their redacted text cut
into rows of at most ROW_BYTES, and every row number in a delta is a row of the buffer.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sightline.domain import secrets
from sightline.ui.chips import Chip
from sightline.ui.rows import MARKDOWN_ROWS, ROW_BYTES, Cut, wrap

# Rows one delta carries at most (about 1 MB): more wait for the next push.
DELTA_ROWS = 1000

EXPANDED_HEADER = "▸ sent as"
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
    _lines: list[str] = field(default_factory=list)  # as they came: raw, uncut (`lines`)
    hls: list[tuple[int, int, int, str]] = field(default_factory=list)
    fixed_chips: list[dict[str, Any]] = field(default_factory=list)
    md: list[list[int]] = field(default_factory=list)
    folds: list[list[int]] = field(default_factory=list)
    finder: Callable[[str], list[Chip]] | None = None
    delta_rows: int = DELTA_ROWS
    _dirty_from: int | None = 0
    _dirty_sub: int = 0  # rows of line _dirty_from the pane shows already, unchanged
    _in_reply: bool = False
    _section: str | None = None  # in a reply: "thinking" or "text", where the stream goes
    _lock: threading.RLock = field(default_factory=threading.RLock)
    # Text streamed into the last line, joined when read: appending each chunk to a 10 MB
    # string would copy it every time.
    _parts: list[str] = field(default_factory=list)
    _cuts: dict[int, Cut] = field(default_factory=dict)  # lines of several rows: their rows
    _extra: dict[int, int] = field(default_factory=dict)  # drawn so: line -> rows beyond 1
    _redacted_as: int = field(default_factory=secrets.version)  # what drawn rows were redacted with
    # The user's messages: (first line, end line, key) — the key (the history record) is
    # what `user_at` answers for a row of the pane (edit and fork at a message).
    _users: list[tuple[int, int, Any]] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        """The transcript's lines as they came (before redaction, uncut)."""
        with self._lock:
            self._join()
            return self._lines

    def _join(self) -> None:
        if self._parts:
            self._lines[-1] += "".join(self._parts)
            self._parts.clear()

    def _mark(self, row: int, sub: int = 0) -> None:
        """Line `row` changed from its row `sub` on (its rows before are shown, final)."""
        if self._dirty_from is None or row < self._dirty_from:
            self._dirty_from, self._dirty_sub = row, sub
        elif row == self._dirty_from:
            self._dirty_sub = min(self._dirty_sub, sub)

    def _push(self, text: str, group: str | None = None) -> None:
        self._join()
        row = len(self._lines)
        self._mark(row)
        self._lines.append(text)
        if group:
            self.hls.append((row, 0, -1, group))

    def _separate(self) -> None:
        if self.lines and self.lines[-1] != "":
            self._push("")

    def clear(self) -> None:
        with self._lock:
            self._lines, self.hls, self.fixed_chips = [], [], []
            self.md, self.folds = [], []
            self._parts, self._cuts, self._extra = [], {}, {}
            self._in_reply = False
            self._section = None
            self._dirty_from, self._dirty_sub = 0, 0
            self._users = []

    def add_user(
        self,
        text: str,
        note: str | None = None,
        chip: dict[str, Any] | None = None,
        key: Any = None,
        *,
        expanded: str | None = None,
    ) -> None:
        """A user message; `note` is a muted line under it, a chip when `chip` is its target;
        `key` is what `user_at` answers for its rows. `expanded`: what a typed `/` command
        sent, folded under it from its header on."""
        with self._lock:
            self._in_reply = False
            self._separate()
            header = len(self._lines)
            self._users.append((header, header + 1 + text.count("\n") + 1, key))
            self._push(USER_HEADER, "SightlineUser")
            first = len(self._lines)
            for line in text.split("\n"):
                self._push(line)
            self.md.append([first, len(self._lines)])
            if expanded is not None:
                start = len(self._lines)
                self._push(EXPANDED_HEADER, "SightlineNote")
                for line in expanded.split("\n"):
                    self._push(line)
                self.md.append([start + 1, len(self._lines)])
                self.folds.append([start, len(self._lines)])
            if note:
                self._push(note, "SightlineNote")
                if chip:
                    row = len(self._lines) - 1
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
        row = len(self._lines) - 1
        cut = self._cuts.get(row)
        self._mark(row, len(cut.done) if cut else 0)  # a cut line's finished rows stay
        self._parts.append(first)
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
                self.md.append([len(self._lines) - 1, len(self._lines)])
                self._section = "text"
            self._stream_into(text, None)
            self.md[-1][1] = len(self._lines)

    def append_thinking(self, text: str) -> None:
        """Stream the model's thinking into a section of its own, above the reply's text,
        folded from its header on."""
        with self._lock:
            self._open_reply()
            if self._section != "thinking":
                if self._section == "text":
                    self._push("")
                self.folds.append([len(self._lines), len(self._lines) + 1])
                self._push(THINKING_HEADER, THINKING_GROUP)
                self._push("", THINKING_GROUP)
                self._section = "thinking"
            self._stream_into(text, THINKING_GROUP)
            self.folds[-1][1] = len(self._lines)

    def add_note(self, text: str, group: str = "SightlineNote") -> int:
        """A muted line of its own (retries, token counts, tool activity, errors); returns
        its first row, which `set_line` can rewrite once the outcome is known."""
        with self._lock:
            self._in_reply = False
            if self.lines and self.lines[-1] != "":
                self._push("")
            row = len(self._lines)
            for line in text.split("\n"):
                self._push(line, group)
            return row

    def set_line(self, row: int, text: str, group: str | None = None) -> None:
        """Rewrite one line written earlier (a tool call's note gets its outcome)."""
        with self._lock:
            if not 0 <= row < len(self._lines):
                return
            self.lines[row] = text.split("\n")[0]
            self._cuts.pop(row, None)
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
            first = len(self._lines)
            for line in lines:
                self._push(OUTPUT_PREFIX + line, "SightlineOutput")
            if len(lines) > shown + 1:  # folding one line would hide nothing worth it
                self.folds.append([first, len(self._lines) - shown])

    def add_lines(self, lines: Sequence[tuple[str, str | None]]) -> int:
        """A block of lines of its own, each painted with its group (a diff, a checklist);
        returns its first row, which `set_line` can rewrite (a tool call's status)."""
        with self._lock:
            self._in_reply = False
            self._separate()
            row = len(self._lines)
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
            for at in range(row, end):
                self._cuts.pop(at, None)  # rewritten: cut again
            # hls stay sorted by row, so a delta finds its own by bisection.
            self.hls[bisect_left(self.hls, (row,)) : bisect_left(self.hls, (end,))] = hls
            self._mark(row)
            return True

    def end_reply(self) -> None:
        with self._lock:
            self._in_reply = False

    def take_delta(self) -> dict[str, Any] | None:
        """What changed since the last delta, at most `delta_rows` rows of it (`pending()`
        says whether more waits): a 10 MB line reaches the pane in steps Neovim draws
        between keys, not in one call that holds it."""
        with self._lock:
            start = self._dirty_from
            if start is None:
                return None
            self._dirty_from = None
            return self._delta_from(start, self._dirty_sub, self.delta_rows)

    def pending(self) -> bool:
        """Whether rows changed that no delta carried yet."""
        with self._lock:
            return self._dirty_from is not None

    def _rows(self, i: int, first: int) -> tuple[list[str], int]:
        """Line i's rows from its row `first` on, and how many rows it has: its text
        redacted whole, then cut (never cut, then redacted: a key cut in two would show)."""
        line = self._lines[i]
        cut = self._cuts.get(i)
        if cut is None:
            shown = secrets.redact(line)
            if len(shown) * 4 <= ROW_BYTES or len(wrap(shown)) == 1:
                return [shown][first:], 1
            cut = self._cuts[i] = Cut()
        return cut.rows(line, first)

    def user_at(self, row: int) -> Any:
        """The key of the user's message drawn at pane row `row` (0-based), else None."""
        with self._lock:
            for first, end, key in reversed(self._users):
                if self._row_of(first) <= row < self._row_of(end):
                    return key
            return None

    def users_through(self, row: int) -> int:
        """How many user messages start at or above buffer row `row` (cut lines counted as
        the rows they are drawn in): the ordinal of the user's turn a row belongs to."""
        with self._lock:
            self._join()
            count, at = 0, 0
            for i, text in enumerate(self._lines):
                if at > row:
                    break
                count += text == USER_HEADER
                at += 1 + self._extra.get(i, 0)
            return count

    def user_key(self, ordinal: int) -> Any:
        """The key of the `ordinal`-th user message shown (1-based), else None."""
        with self._lock:
            return self._users[ordinal - 1][2] if 0 < ordinal <= len(self._users) else None

    def users(self) -> int:
        """User messages shown so far."""
        with self._lock:
            self._join()
            return sum(text == USER_HEADER for text in self._lines)

    def _row_of(self, line: int) -> int:
        """The first row of a line drawn already (or of the line after the last)."""
        return line + sum(n for at, n in self._extra.items() if at < line)

    def _delta_from(self, start: int, sub: int = 0, limit: int | None = None) -> dict[str, Any]:
        # Every line drawn passes the redactor here (a model echoing the key, a command
        # shown verbatim), whole, before it is cut into rows; chips are found in what is
        # drawn. Rows, chips, hls, md spans and folds are all kept in line order: what a
        # delta carries is found from the end (_tail), so its cost does not grow with the
        # transcript (nor with a long line's rows drawn before: ui/rows.py).
        self._join()
        if self._redacted_as != secrets.version():  # a new secret: redact all again
            self._redacted_as = secrets.version()
            self._cuts.clear()
            self._extra.clear()
            start, sub = 0, 0
        base = self._row_of(start)
        for at in [at for at in self._extra if at >= start]:
            del self._extra[at]
        top = base + sub  # the delta's first row
        lines: list[str] = []
        firsts: list[int] = []  # the first row of each line from `start` on, then the end
        cuts: list[list[int]] = []
        row = base
        for i in range(start, len(self._lines)):
            firsts.append(row)
            skip = sub if i == start else 0
            rows, count = self._rows(i, skip)
            if limit is not None and len(rows) > limit - len(lines):
                rows = rows[: limit - len(lines)]  # the rest in the next delta
                self._mark(i, skip + len(rows))
            lines.extend(rows)
            if count > 1:
                self._extra[i] = count - 1
                cuts.append([row, row + count])
            row += count
            if limit is not None and len(lines) >= limit:
                self._mark(i + 1)  # no-op past the last line: nothing is marked there
                break
        firsts.append(row)
        bottom = top + len(lines)  # rows past it come with a later delta

        def row_of(line: int) -> int:
            if line < start:
                return self._row_of(line)
            if line - start < len(firsts):
                return firsts[line - start]
            return row + 1  # a line this delta does not reach: past its end

        hls: list[list[Any]] = []
        for at, col, end_col, group in self.hls[_tail(self.hls, _hl_row, start, after=False) :]:
            first, end = row_of(at), min(row_of(at + 1), bottom)
            if end_col < 0:
                hls.extend([r, 0, -1, group] for r in range(max(first, top), end))
            elif top <= first < bottom:  # columns of a line: on its first row
                hls.append([first, col, end_col, group])
        chips: list[dict[str, Any]] = []
        for chip in self.fixed_chips[_tail(self.fixed_chips, _row, start, after=False) :]:
            at = row_of(chip["row"])
            if top <= at < bottom:
                size = len(lines[at - top].encode(errors="surrogateescape"))
                chips.append({**chip, "row": at, "end_col": min(chip["end_col"], size)})
        if self.finder is not None:
            for at, line in enumerate(lines, top):
                for col, end_col, target in self.finder(line):
                    chips.append({"row": at, "col": col, "end_col": end_col, "target": target})
        md: list[list[int]] = []
        for first, end in self.md[_tail(self.md, _end, start, after=True) :]:
            md.extend(self._markdown_rows(first, end, row_of))
        folds = [
            [row_of(first), row_of(end)]
            for first, end in self.folds[_tail(self.folds, _end, start, after=True) :]
        ]
        # A span may reach past `bottom` (the pane reads rows past its end as none); the
        # next delta starts before its end, so the pane takes it again from there.
        return {
            "start": top,
            "lines": lines,
            "hls": hls,
            "chips": chips,
            "md": [span for span in md if span[1] > top and span[0] < max(bottom, top + 1)],
            "folds": [span for span in folds if span[1] > top and span[0] < max(bottom, top + 1)],
            "cuts": cuts,
        }

    def _markdown_rows(self, first: int, end: int, row_of: Callable[[int], int]) -> list[list[int]]:
        """The rows of Markdown span [first, end) of lines: a line cut into more than
        MARKDOWN_ROWS rows is Markdown over its first ones only, the rest shown as written."""
        long = sorted(
            at for at, n in self._extra.items() if first <= at < end and n >= MARKDOWN_ROWS
        )
        if not long:
            return [[row_of(first), row_of(end)]]
        spans, at = [], row_of(first)
        for line in long:
            spans.append([at, row_of(line) + MARKDOWN_ROWS])
            at = row_of(line + 1)
        spans.append([at, row_of(end)])
        return [span for span in spans if span[0] < span[1]]

    def full(self) -> dict[str, Any]:
        with self._lock:
            self._dirty_from = None
            return self._delta_from(0)
