"""Pure text diffing for proposals: the changed span, anchored edits, a compact diff to show.

A buffer's text is its lines joined with "\\n" plus a final "\\n" (what the file holds), so an
edit's span never ends past the last real position of the buffer: both texts end with the
same newline, and the common suffix always keeps it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

ADD_GROUP = "SightlineDiffAdd"
DELETE_GROUP = "SightlineDiffDelete"
HUNK_GROUP = "SightlineNote"

Line = tuple[str, str | None]


def buffer_text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def as_buffer_text(text: str) -> str:
    """A proposed text as a buffer would hold it: always ending with one newline."""
    return text if text.endswith("\n") else text + "\n"


@dataclass(frozen=True)
class Span:
    """Replace before[start:end] with `text` (code point offsets)."""

    start: int
    end: int
    text: str


def changed_span(before: str, after: str) -> Span:
    """The smallest single span that turns `before` into `after` (common prefix and suffix).

    When both end alike (the final newline) the suffix keeps that character, so the span
    never ends past the last real position of a buffer.
    """
    limit = min(len(before), len(after))
    reserve = 1 if limit and before[-1] == after[-1] else 0
    prefix = 0
    while prefix < limit - reserve and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    return Span(prefix, len(before) - suffix, after[prefix : len(after) - suffix])


@dataclass(frozen=True)
class AnchoredEdit:
    """An edit located by text, not by position: `anchor` must occur exactly once in the
    buffer; bytes [rel_start, rel_end) of it are replaced by `text`.

    Offsets are UTF-8 bytes because Neovim's columns are bytes.
    """

    anchor: str
    rel_start: int
    rel_end: int
    text: str


def anchored_edit(before: str, after: str, anchor_start: int, anchor_end: int) -> AnchoredEdit:
    """Express before → after as a change inside before[anchor_start:anchor_end].

    The region grows only when the change reaches outside it (an edit made in the compare
    view); the change inside is reduced to its smallest span.
    """
    tail = len(before) - anchor_end
    inside = (
        before[:anchor_start] == after[:anchor_start]
        and len(after) >= anchor_start + tail
        and before[anchor_end:] == after[len(after) - tail :]
    )
    if not inside:
        whole = changed_span(before, after)
        anchor_start = min(anchor_start, whole.start)
        anchor_end = max(anchor_end, whole.end)
        tail = len(before) - anchor_end
    region = before[anchor_start:anchor_end]
    replaced = after[anchor_start : len(after) - tail]
    span = changed_span(region, replaced)
    return AnchoredEdit(
        anchor=region,
        rel_start=len(region[: span.start].encode(errors="surrogateescape")),
        rel_end=len(region[: span.end].encode(errors="surrogateescape")),
        text=span.text,
    )


def count_occurrences(text: str, needle: str) -> int:
    """Occurrences of needle, overlapping ones included ("aa" occurs twice in "aaa")."""
    if not needle:
        return 0
    count, at = 0, text.find(needle)
    while at >= 0:
        count += 1
        at = text.find(needle, at + 1)
    return count


def _middle(before: str, after: str, keep: int) -> tuple[int, list[str], list[str]]:
    """The lines that differ, with `keep` lines around them, and where they start (0-based).

    difflib is quadratic at worst; a proposal changes a few lines of what may be a large
    file, so only the changed middle is handed to it.
    """
    a, b = before.splitlines(), after.splitlines()
    limit = min(len(a), len(b))
    prefix = 0
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - keep)
    cut = max(0, suffix - keep)
    return start, a[start : len(a) - cut], b[start : len(b) - cut]


def stats(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed)."""
    added = removed = 0
    _, a, b = _middle(before, after, 0)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _shift_hunk(line: str, offset: int) -> str:
    """A hunk header of the middle's diff, renumbered for the whole file."""

    def shift(m: re.Match[str]) -> str:
        a, b = int(m.group(1)) + offset, int(m.group(3)) + offset
        return f"@@ -{a}{m.group(2) or ''} +{b}{m.group(4) or ''} @@"

    return _HUNK.sub(shift, line, count=1)


def compact_diff(
    before: str, after: str, context: int = 2, max_lines: int = 60, first_line: int = 0
) -> list[Line]:
    """Unified diff lines (no file header) with the group each line is painted with; the
    texts may be an excerpt of a file starting at its line `first_line` (0-based)."""
    out: list[Line] = []
    offset, a, b = _middle(before, after, context)
    offset += first_line
    for line in difflib.unified_diff(a, b, n=context, lineterm=""):
        if not out and not line.startswith("@@"):
            continue  # the "---"/"+++" file header
        if line.startswith("@@"):
            out.append((_shift_hunk(line, offset), HUNK_GROUP))
        elif line.startswith("+"):
            out.append((line, ADD_GROUP))
        elif line.startswith("-"):
            out.append((line, DELETE_GROUP))
        else:
            out.append((line, None))
    if len(out) > max_lines:
        cut = len(out) - max_lines
        out = [*out[:max_lines], (f"… {cut} more diff lines (compare to see all)", HUNK_GROUP)]
    return out


# Hunks: the proposal split into independent changes, each taken or left on its own ---------


@dataclass(frozen=True)
class Hunk:
    """Lines `start` .. `start + len(old)` of `before` (0-based, split on "\\n") become `new`.

    Line-based because the user decides them in a buffer, one block of lines at a time.
    """

    start: int
    old: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def kind(self) -> str:
        """ "add" (only new lines), "delete" (only old ones) or "change"."""
        if not self.old:
            return "add"
        return "delete" if not self.new else "change"

    def as_data(self) -> dict[str, object]:
        """What the Lua layer draws (it draws, it computes nothing)."""
        return {"start": self.start, "old": len(self.old), "new": list(self.new), "kind": self.kind}


def hunks(before: str, after: str) -> list[Hunk]:
    """before → after as line hunks, in order, separated by at least one unchanged line.

    Texts are split on "\\n" (not splitlines: "\\r" and friends stay inside a line, as in a
    buffer), so joining gives back the text exactly. When both end alike (a buffer's final
    newline) the common prefix stops short of that last element, so an insertion at the end
    lands before it, where a buffer shows it. Only the changed middle goes to difflib (it is
    quadratic at worst).
    """
    a, b = before.split("\n"), after.split("\n")
    limit = min(len(a), len(b))
    reserve = 1 if a[-1] == b[-1] else 0
    prefix = 0
    while prefix < limit - reserve and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    mid_a, mid_b = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    out: list[Hunk] = []
    matcher = difflib.SequenceMatcher(None, mid_a, mid_b, False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out.append(Hunk(prefix + i1, tuple(mid_a[i1:i2]), tuple(mid_b[j1:j2])))
    return out


def apply_hunks(before: str, all_hunks: list[Hunk], chosen: set[int] | frozenset[int]) -> str:
    """`before` with the hunks whose index is in `chosen` applied and the others left out.

    Hunks must be in order and not overlap (as hunks() makes them), and each must match
    `before` where it says it starts; anything else is a ValueError, never a wrong text.
    """
    a = before.split("\n")
    out: list[str] = []
    at = 0
    for index, hunk in enumerate(all_hunks):
        end = hunk.start + len(hunk.old)
        if hunk.start < at or end > len(a) or tuple(a[hunk.start : end]) != hunk.old:
            raise ValueError(f"hunk {index + 1} does not match the text at line {hunk.start + 1}")
        if index in chosen:
            out += a[at : hunk.start]
            out += hunk.new
            at = end
        else:
            out += a[at:end]
            at = end
    out += a[at:]
    return "\n".join(out)


def _unified_range(start: int, length: int) -> str:
    """A side of a hunk header as difflib writes it (1-based; "-0,0" for an empty file)."""
    beginning = start + 1
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def hunk_label(index: int, count: int, decision: str = "") -> str:
    """A hunk as the pane's diff and the compare view name it: "✔ hunk 1/3 accepted"."""
    if decision == "accept":
        return f"✔ hunk {index + 1}/{count} accepted"
    if decision == "reject":
        return f"✗ hunk {index + 1}/{count} rejected"
    return f"· hunk {index + 1}/{count} waits"


def review_diff(
    before: str,
    all_hunks: Sequence[Hunk],
    decisions: Sequence[str] = (),
    context: int = 2,
    max_lines: int = 60,
    first_line: int = 0,
) -> list[Line]:
    """The proposal's unified diff as the pane shows it while its hunks are decided.

    The hunks are those drawn in the buffer (hunks()); of several, each ends with its label
    (hunk_label: `· hunk 2/3 waits`, then accepted or rejected), and a rejected one's lines
    are muted. Deciding never changes the number of lines, so the pane rewrites the block
    in place and every row below it stays where it is.
    """
    a = before.split("\n")
    size = len(a) - 1 if a[-1] == "" else len(a)  # the final newline ends the last line
    count = len(all_hunks)
    groups: list[list[int]] = []
    for i, hunk in enumerate(all_hunks):
        if groups:
            prev = all_hunks[groups[-1][-1]]
            if hunk.start - context <= prev.start + len(prev.old) + context:
                groups[-1].append(i)
                continue
        groups.append([i])
    out: list[Line] = []
    shift = 0  # lines the after text gained before the group
    for group in groups:
        first, last = all_hunks[group[0]], all_hunks[group[-1]]
        lo = max(0, first.start - context)
        hi = max(min(size, last.start + len(last.old) + context), last.start + len(last.old))
        body: list[Line] = []
        grow, row = 0, lo
        for i in group:
            hunk = all_hunks[i]
            decision = decisions[i] if i < len(decisions) else ""
            muted = decision == "reject"
            body += [(" " + a[r], None) for r in range(row, hunk.start)]
            body += [("-" + line, HUNK_GROUP if muted else DELETE_GROUP) for line in hunk.old]
            body += [("+" + line, HUNK_GROUP if muted else ADD_GROUP) for line in hunk.new]
            if count > 1:
                body.append((hunk_label(i, count, decision), HUNK_GROUP))
            grow += len(hunk.new) - len(hunk.old)
            row = hunk.start + len(hunk.old)
        body += [(" " + a[r], None) for r in range(row, hi)]
        old_side = _unified_range(lo + first_line, hi - lo)
        new_side = _unified_range(lo + shift + first_line, hi - lo + grow)
        out.append((f"@@ -{old_side} +{new_side} @@", HUNK_GROUP))
        out += body
        shift += grow
    if len(out) > max_lines:
        cut = len(out) - max_lines
        out = [*out[:max_lines], (f"… {cut} more diff lines (compare to see all)", HUNK_GROUP)]
    return out
