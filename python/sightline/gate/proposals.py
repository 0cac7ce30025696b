"""Proposals and the review gate: every write is shown as a diff and applied only when accepted.

A proposal keeps the lines around the change before and after (an excerpt: a large buffer
never crosses RPC for it); the compare view widens it to the whole buffer when it is opened.
On accept the core takes the compare view's after side if one was opened (the user may have
edited it), reduces the change to one anchored span and has Neovim apply it as one undo step;
the anchor must still occur exactly once, else the edit is refused as changed since proposed.
An accepted proposal without a compare view costs two round trips: find, apply.

While an edit waits, its buffer shows it inline, hunk by hunk (lua/sightline/ui/inline.lua draws
what diff.hunks computed, at the excerpt's `first_line`). The user may decide each hunk; the
accepted ones make the text that is applied, by the same path as a whole accept (so
re-anchoring and refusals are as above), and the model is told which hunks were applied and
what the buffer now holds around them. As hunks are decided, the pane's diff is redrawn in
place and an open compare view is given the text without the rejected hunks (hunks_decided);
its after side is taken at the end only when it shows the final decisions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sightline.domain import diff, narrator
from sightline.domain.errors import Refused
from sightline.editor.port import Applied, Editor, EditorError, HunkSpec
from sightline.gate import checkpoint
from sightline.gate.decisions import Pending
from sightline.gate.turn_contract import ToolResult

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Session, Turn

_ids = itertools.count(1)

# Lines of the buffer told to the model around each applied hunk.
CONTEXT_LINES = 2


def next_id() -> int:
    """Ids of what goes to the gate (proposals, commands), as events and the compare view
    name them."""
    return next(_ids)


# How an accepted proposal is applied: (turn, proposal, the accepted after-text) → result.
Applier = Callable[["Turn", "Proposal", str], ToolResult]


@dataclass
class Proposal:
    kind: str  # "edit" | "create"
    path: str  # workspace-relative, as shown
    abspath: str
    before: str
    after: str
    anchor_start: int = 0  # the region of `before` the model's edit replaced
    anchor_end: int = 0
    # before/after may be an excerpt: lines from `first_line` (0-based) of the buffer, with a
    # few lines of context, so a proposal never ships a large buffer; the compare view
    # widens it to the whole buffer (read from `source`, a path or a buffer number).
    first_line: int = 0
    excerpt: bool = False
    source: str | int = ""
    compared: bool = False  # a compare view was opened: its after side is what is accepted
    # Another way to apply it (Change with Agent re-anchors its selection); default: by kind.
    applier: Applier | None = field(default=None, compare=False)
    id: int = 0
    buffer: int = 0  # the target buffer when it is loaded (where the hunks are drawn)
    hunks: list[diff.Hunk] = field(default_factory=list, compare=False)
    # Where the pane shows its diff (the first row of the block) and what the block holds,
    # so that it is redrawn as hunks are decided; what the compare view's after side was
    # given (the decisions then), to know at the end whether that is what the user took.
    diff_row: int = field(default=-1, compare=False)
    diff_shown: list[diff.Line] = field(default_factory=list, compare=False)
    compare_after: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.id:
            self.id = next_id()
        if self.kind == "edit" and not self.hunks:
            self.hunks = diff.hunks(self.before, self.after)

    def summary(self) -> str:
        added, removed = diff.stats(self.before, self.after)
        verb = "create" if self.kind == "create" else "edit"
        return f"{verb} {self.path} (+{added} −{removed})"

    def written(self, decisions: list[str]) -> str:
        """What accepting the rest would write: the hunks not rejected (all: the after)."""
        if "reject" not in decisions:
            return self.after
        n = len(decisions)
        kept = {i for i in range(len(self.hunks)) if i >= n or decisions[i] != "reject"}
        return diff.apply_hunks(self.before, self.hunks, kept)

    def view(self, decisions: list[str] | None = None) -> dict[str, Any]:
        """What the compare view needs: its after side leaves out the rejected hunks, and
        `marks` label each decided hunk on the after side's row where it is (0-based)."""
        decisions = decisions or []
        after = self.written(decisions)
        marks, shift, last = [], 0, max(0, after.count("\n") - 1)
        for i, hunk in enumerate(self.hunks):
            decision = decisions[i] if i < len(decisions) else ""
            if decision:
                label = diff.hunk_label(i, len(self.hunks), decision)
                marks.append({"row": min(hunk.start + shift, last), "text": label})
            if decision != "reject":
                shift += len(hunk.new) - len(hunk.old)
        return {
            "id": self.id,
            "path": self.path,
            "before": self.before,
            "after": after,
            "marks": marks,
        }

    def diff_lines(self, decisions: list[str] | None = None) -> list[diff.Line]:
        """The diff the pane shows under the proposal's summary, as decided so far."""
        if self.kind == "edit" and self.hunks:
            return diff.review_diff(
                self.before, self.hunks, decisions or [], first_line=self.first_line
            )
        return diff.compact_diff(self.before, self.after, first_line=self.first_line)


def compare_view(session: Session) -> dict[str, Any]:
    """The pending proposal for `:Sightline compare`."""
    pending = session.gate.pending
    proposal = pending.data.get("proposal") if pending else None
    if not isinstance(proposal, Proposal):
        raise Refused("sightline: nothing to compare: no edit is waiting for a decision")
    if proposal.excerpt:
        widen(session.editor, proposal)
    proposal.compared = True
    view = proposal.view(pending.hunk_decisions() if pending else [])
    proposal.compare_after = view["after"]
    return view


def hunks_decided(
    session: Session, proposal_id: int, decisions: list[str]
) -> dict[str, Any] | None:
    """A hunk of the proposal that waits was decided (and more wait): redraw its diff in the
    pane; when its compare view is open, return what that view shows now (Lua sets it)."""
    pending = session.gate.pending
    proposal = pending.data.get("proposal") if pending else None
    if (
        pending is None
        or pending.done.is_set()  # decided whole: the turn's worker draws the outcome
        or not isinstance(proposal, Proposal)
        or proposal.id != proposal_id
    ):
        return None
    _redraw_diff(session, proposal, decisions)
    session.ui.schedule()
    if not proposal.compared:
        return None
    view = proposal.view(decisions)
    proposal.compare_after = view["after"]
    return view


def _redraw_diff(session: Session, proposal: Proposal, decisions: list[str]) -> None:
    head, old = proposal.diff_shown[:1], proposal.diff_shown
    shown = head + proposal.diff_lines(decisions)
    texts = [text for text, _ in old]
    if session.transcript.replace_lines(proposal.diff_row, texts, shown):
        proposal.diff_shown = shown


def widen(editor: Editor, proposal: Proposal) -> None:
    """Turn an excerpt proposal into one of the whole buffer (for the compare view, which
    shows and takes the whole buffer; off the hot path)."""
    got = editor.read_lines(proposal.source or proposal.abspath, 0, -1, 1 << 40)
    if got is None:
        raise Refused("sightline: the buffer of this proposal is no longer loaded")
    lines = list(got["lines"])
    count = proposal.before.count("\n")
    head = "".join(line + "\n" for line in lines[: proposal.first_line])
    tail = "".join(line + "\n" for line in lines[proposal.first_line + count :])
    proposal.before = head + proposal.before + tail
    proposal.after = head + proposal.after + tail
    proposal.anchor_start += len(head)
    proposal.anchor_end += len(head)
    # The hunks count lines of `before`, which now starts at the buffer's first line.
    shift = proposal.first_line
    proposal.hunks = [dataclasses.replace(h, start=h.start + shift) for h in proposal.hunks]
    proposal.first_line, proposal.excerpt = 0, False


def review(turn: Turn, proposal: Proposal) -> ToolResult:
    """Show the proposal, wait for the decision (or autoaccept), apply it; tell the model."""
    session = turn.session
    summary = proposal.summary()
    shown: list[diff.Line] = [narrator.proposal_header(summary), *proposal.diff_lines()]
    proposal.diff_row = session.transcript.add_lines(shown)
    proposal.diff_shown = shown
    auto = bool(session.autoaccept)
    session.ui.event(
        "SightlineProposal",
        {
            "id": proposal.id,
            "path": proposal.path,
            "kind": proposal.kind,
            "summary": summary,
            "autoaccept": auto,
        },
    )
    hunk_decisions: dict[int, tuple[str, str]] = {}
    if auto:
        decision, reason = "accept", ""
    else:
        drawn = False  # whether it was drawn in its buffer (or tried to be)

        def show(item: Pending) -> None:
            # Drawn when it comes first in line: one proposal shows in its buffer at a time.
            nonlocal drawn
            drawn = True
            _draw_inline(turn, item, proposal)

        try:
            item = turn.gate.ask(
                proposal.kind,
                summary,
                {"proposal": proposal},
                cancelled=turn.cancelled,
                shown=show,
            )
        finally:
            if drawn:
                _clear_inline(turn, proposal)
        decision, reason = item.decision or "reject", item.reason
        hunk_decisions = dict(item.hunks) if item.by_hunk else {}
    if hunk_decisions and not turn.cancelled():
        _redraw_diff(session, proposal, item.hunk_decisions())
        shown = proposal.diff_shown
    partial = any(d != "accept" for d, _ in hunk_decisions.values())
    if decision != "accept" or turn.cancelled():
        if proposal.compared:
            turn.editor.close_compare(proposal.id)
        why, note, said = reason, narrator.rejected(reason), None
        if hunk_decisions and not turn.cancelled():
            why = _rejections(proposal, hunk_decisions, "every hunk")
            rejected, total = _rejected(proposal, hunk_decisions), len(proposal.hunks)
            note = narrator.hunks_rejected(rejected, total)
            said = narrator.hunks_rejected_reason(rejected, total)
        told = "rejected by the user" + (f": {why}" if why else "")
        return _outcome(session, proposal, shown, note, told, True, said)
    expected = proposal.after
    if partial:
        chosen = {i for i, (d, _) in hunk_decisions.items() if d == "accept"}
        expected = diff.apply_hunks(proposal.before, proposal.hunks, chosen)
    # Only a proposal whose compare view was opened can have been edited there (otherwise
    # accepting costs no round trip to ask), and its after side is what the user took only
    # if it shows these decisions: rejecting the rest there drops what it holds.
    edited_lines = None
    if proposal.compared:
        if proposal.compare_after in (None, expected):
            edited_lines = turn.editor.take_after(proposal.id)
        else:
            turn.editor.close_compare(proposal.id)
    after = expected if edited_lines is None else diff.buffer_text(list(edited_lines))
    result = _apply(turn, proposal, after)
    note = narrator.proposal_outcome(result.content, result.is_error, auto)
    told = result.content
    if partial and not result.is_error:
        # The model is told in its terms ("your edit"); the transcript speaks to the user.
        taken = [i + 1 for i, (d, _) in sorted(hunk_decisions.items()) if d == "accept"]
        done = result.content.removeprefix("accepted: ")
        rejected = _rejected(proposal, hunk_decisions)
        note = narrator.hunks_applied(taken, rejected, len(proposal.hunks), done)
        told = _partial_told(turn, proposal, hunk_decisions, after, told)
    if not result.is_error and after != expected:
        head, sep, rest = told.partition("\n")  # before the lines a partial accept lists
        told = head + (
            " The user edited your proposal in the compare view before accepting it: "
            "read the file again before further edits."
        )
        told += sep + rest
    return _outcome(session, proposal, shown, note, told, result.is_error)


def _draw_inline(turn: Turn, item: Pending, proposal: Proposal) -> None:
    """Draw the proposal's hunks in its buffer, each decidable there on its own."""
    turn.gate.show_hunks(item, len(proposal.hunks), lambda: _show_inline(turn, proposal))


def _show_inline(turn: Turn, proposal: Proposal) -> bool:
    """Draw the proposal's hunks in its buffer (when loaded); False when nothing was drawn."""
    if proposal.kind != "edit" or not proposal.buffer or not proposal.hunks:
        return False
    spec: HunkSpec = {
        "id": proposal.id,
        "buffer": proposal.buffer,
        "path": proposal.path,
        # Buffer lines: an excerpt's hunks count from its first line.
        "hunks": [_in_buffer(proposal, h).as_data() for h in proposal.hunks],
    }
    if turn.session.pane != 1:
        spec["pane"] = turn.session.pane
    try:
        return bool(turn.editor.show_hunks(spec))
    except EditorError:
        return False  # the pane and the compare view still show it; decided as a whole


def _clear_inline(turn: Turn, proposal: Proposal) -> None:
    if proposal.kind == "edit" and proposal.buffer:
        # Neovim may be gone (then Lua cleared on the core's exit) or the call late.
        with contextlib.suppress(EditorError):
            turn.editor.clear_hunks(proposal.id)


def _in_buffer(proposal: Proposal, hunk: diff.Hunk) -> diff.Hunk:
    """The hunk with its start as a line of the buffer (not of the excerpt)."""
    return dataclasses.replace(hunk, start=hunk.start + proposal.first_line)


def _lines_of(hunk: diff.Hunk) -> str:
    if not hunk.old:
        return f"after line {hunk.start}" if hunk.start else "at the start"
    end = hunk.start + len(hunk.old)
    return f"line {end}" if len(hunk.old) == 1 else f"lines {hunk.start + 1}–{end}"


def _rejections(proposal: Proposal, decisions: dict[int, tuple[str, str]], none: str) -> str:
    """ "hunk 2 (line 5): the user's note; hunk 3 (lines 7–9)" for the rejected hunks."""
    parts = []
    for i, hunk in enumerate(proposal.hunks):
        decision, note = decisions.get(i, ("reject", ""))
        if decision == "reject":
            part = f"hunk {i + 1} ({_lines_of(_in_buffer(proposal, hunk))})"
            parts.append(f"{part}, the user's note: {note}" if note else part)
    if none and len(parts) == len(proposal.hunks) and not any(n for _, n in decisions.values()):
        return none
    return "; ".join(parts)


def _rejected(proposal: Proposal, decisions: dict[int, tuple[str, str]]) -> list[tuple[int, str]]:
    """The rejected hunks, numbered from 1, with the user's notes (an undecided hunk counts as
    rejected, as in `_rejections`)."""
    found = [(i, decisions.get(i, ("reject", ""))) for i in range(len(proposal.hunks))]
    return [(i + 1, note) for i, (decision, note) in found if decision == "reject"]


def _partial_told(
    turn: Turn,
    proposal: Proposal,
    decisions: dict[int, tuple[str, str]],
    accepted: str,
    applied: str,
) -> str:
    """Which hunks were applied (numbered as the proposal's), which not and why, and the
    buffer's lines around each applied one as it now holds them."""
    n = len(proposal.hunks)
    taken = [i for i in range(n) if decisions.get(i, ("reject", ""))[0] == "accept"]
    names = ", ".join(str(i + 1) for i in taken)
    head = (
        f"partly accepted: of the {n} hunks of your edit, the user applied "
        f"{'hunk' if len(taken) == 1 else 'hunks'} {names} and rejected "
        f"{_rejections(proposal, decisions, '')}. {applied.removeprefix('accepted: ')}"
    )
    # The accepted text is the excerpt's (or the whole buffer's once widened): only its lines
    # are read back, from where the excerpt starts.
    now: list[str] | None = None
    first, count = proposal.first_line, accepted.count("\n")
    if proposal.buffer:
        with contextlib.suppress(EditorError):
            got = turn.editor.read_lines(proposal.buffer, first, first + count, count)
            now = list(got["lines"]) if got is not None else None
    text_lines = accepted.split("\n")
    if now is None or diff.buffer_text(now) != accepted:
        return head + " The buffer differs from your edit elsewhere too: read it again."
    # Where each taken hunk landed in the accepted text: shifted by the hunks before it.
    shift, ranges = 0, []
    for i, hunk in enumerate(proposal.hunks):
        if i in taken:
            start = hunk.start + shift
            ranges.append((max(0, start - CONTEXT_LINES), start + len(hunk.new) + CONTEXT_LINES))
            shift += len(hunk.new) - len(hunk.old)
    last = len(now)
    shown: list[str] = []
    for lo, hi in _merged(ranges):
        if shown:
            shown.append("…")
        shown += [f"{first + row + 1:6}\t{text_lines[row]}" for row in range(lo, min(hi, last))]
    return head + "\nThe file now holds, around the applied hunks:\n" + "\n".join(shown)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _outcome(
    session: Session,
    proposal: Proposal,
    shown: list[diff.Line],
    note: narrator.Note,
    told: str,
    is_error: bool,
    said: str | None = None,
) -> ToolResult:
    session.transcript.add_note(*note)
    session.record(
        {
            "type": "proposal",
            "id": proposal.id,
            "kind": proposal.kind,
            "path": proposal.path,
            "lines": [[text, hl] for text, hl in [*shown, note]],
        }
    )
    return ToolResult(told, is_error, said)


_NOT_SAVED = {
    "nofile": "the buffer has no file, so it was not saved",
    "modified": (
        "the buffer had unsaved changes of the user, so it was not saved (it stays modified)"
    ),
    "changed_on_disk": (
        "the file changed on disk since it was loaded, so it was not overwritten "
        "(the buffer stays modified)"
    ),
    "write_failed": "writing the file failed",
}


def _apply(turn: Turn, proposal: Proposal, after: str) -> ToolResult:
    checkpoint.before_write(turn, proposal.abspath, proposal.path)  # the turn's checkpoint
    if proposal.applier is not None:
        return proposal.applier(turn, proposal, after)
    rel = proposal.path
    if proposal.kind == "create":
        res = turn.editor.create_file({"path": proposal.abspath, "text": after})
    else:
        if after == proposal.before:
            return ToolResult(f"accepted, but the accepted text equals {rel}: nothing changed")
        region = (proposal.anchor_start, proposal.anchor_end)
        edit = diff.anchored_edit(proposal.before, after, *region)
        res = turn.editor.apply_edit(
            {
                "path": proposal.abspath,
                "anchor": edit.anchor,
                "rel_start": edit.rel_start,
                "rel_end": edit.rel_end,
                "text": edit.text,
            },
        )
    if res.get("stale"):
        return ToolResult(
            f"refused: {rel} changed since the proposal: the text to replace now occurs "
            f"{res.get('count', 0)} times (it must occur exactly once). Nothing was changed; "
            "read the file again.",
            True,
        )
    return applied_result(rel, res, "created" if proposal.kind == "create" else "changed")


def applied_result(rel: str, res: Applied, done: str = "changed") -> ToolResult:
    """What the model is told about an apply done by port/apply.lua (its `sightline.Applied`)."""
    if res.get("error") and not res.get("ok"):
        return ToolResult(f"refused: {rel} {res['error']}. Nothing was changed.", True)
    if res.get("saved"):
        return ToolResult(f"accepted: {rel} was {done} and saved.")
    why = _NOT_SAVED.get(str(res.get("why")), "it was not saved")
    if res.get("error"):
        why += f" ({res['error']})"
    return ToolResult(f"accepted: {rel} was {done} in its buffer; {why}.")


# The gate's parts a review of past changes (agent/changes.py) reuses: the same inline hunk
# view, and the same apply with its re-anchoring and save rules.
draw_inline = _draw_inline
clear_inline = _clear_inline
apply_text = _apply
