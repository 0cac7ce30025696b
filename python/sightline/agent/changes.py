"""`:Sightline review`: every change of this conversation (or since a git ref), hunk by hunk.

The core lists one quickfix entry per hunk (`:cnext` walks them) and then shows each file's
way back in its buffer with the review gate's own inline hunk view, one file at a time:
a hunk accepted is reverted (that hunk's text from the checkpoint, or the ref, written back
through the gate's apply: re-anchored, one undo step, saved by the save rule), a hunk
rejected is kept. A hunk the user edited since the agent wrote it is marked, and reverting
it asks a second time. Files an ACP agent wrote itself are in the checkpoints like any other.
The reverts are a checkpoint of their own (`:Sightline rewind` undoes them).
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sightline.agent import checkpointing
from sightline.agent.rewind import Careful
from sightline.agent.turn import Turn
from sightline.domain import diff, narrator, spawn
from sightline.domain.checkpoints import MISSING, FileChange
from sightline.domain.errors import Refused
from sightline.editor.port import EditorError
from sightline.gate import proposals
from sightline.gate.checkpoint import TooLarge, state_of
from sightline.gate.proposals import Proposal

if TYPE_CHECKING:
    from sightline.agent.state import SessionState

log = logging.getLogger(__name__)


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", "surrogateescape")


@dataclass
class FileReview:
    path: str
    rel: str
    base: bytes | None  # before the agent (or at the ref); None: the file did not exist
    agent: bytes | None  # what the agent left (None: unknown, for a ref's files)
    current: bytes | None
    hunks: list[diff.Hunk] = field(default_factory=list)  # current → base
    edited: set[int] = field(default_factory=set)  # hunks the user changed since the agent

    def note(self) -> str:
        if self.current is None:
            return "deleted since: :Sightline rewind restores it"
        return "created" if self.base is None else ""


def _user_rows(agent: str, current: str) -> list[tuple[int, int]]:
    """The rows of `current` the user changed since the agent left `agent` ([first, end);
    a deletion is an empty range where it was)."""
    out, shift = [], 0
    for h in diff.hunks(agent, current):
        start = h.start + shift
        out.append((start, start + len(h.new)))
        shift += len(h.new) - len(h.old)
    return out


def _edited(hunks: list[diff.Hunk], rows: list[tuple[int, int]]) -> set[int]:
    marked = set()
    for i, h in enumerate(hunks):
        lo, hi = h.start, h.start + len(h.old)
        for a, b in rows:
            if (a < hi and lo < b) or (a == b and lo <= a <= hi) or (lo == hi and a <= lo <= b):
                marked.add(i)
    return marked


def _review(
    path: str, rel: str, base: bytes | None, agent: bytes | None, current: bytes | None
) -> FileReview:
    f = FileReview(path, rel, base, agent, current)
    if current is not None:
        now = diff.as_buffer_text(_text(current)) if current else ""
        f.hunks = diff.hunks(now, diff.as_buffer_text(_text(base)) if base else "")
        if agent is not None:
            was = diff.as_buffer_text(_text(agent)) if agent else ""
            f.edited = _edited(f.hunks, _user_rows(was, now))
    return f


def of_conversation(session: SessionState) -> list[FileReview]:
    """Each file this conversation's checkpoints changed, from before the first of them to
    now (a file back as it was is left out)."""
    conv = session.conversation
    if conv is None:
        return []
    store = session.checkpoints
    first: dict[str, FileChange] = {}
    last: dict[str, FileChange] = {}
    for cp in session.checkpoints.load(conv.id):
        for f in cp.files:
            first.setdefault(f.path, f)
            last[f.path] = f
    out = []
    for path, f in sorted(first.items(), key=lambda item: item[1].rel):
        if f.before == MISSING:
            continue
        try:
            current = state_of(session.editor, path).data
        except (TooLarge, EditorError, OSError):
            continue
        base = store.get(f.before)
        if current == base:
            continue
        agent = store.get(last[path].after) if last[path].after not in (None, MISSING) else None
        out.append(_review(path, f.rel, base, agent, current))
    return out


def _git(ws: str, *args: str) -> bytes:
    try:
        done = spawn.run(["git", "-C", ws, *args], 10.0)
    except (OSError, subprocess.SubprocessError) as err:
        raise Refused(f"sightline: review: git failed: {err}") from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["failed"]
        raise Refused(f"sightline: review: git: {why[0]}")
    return bytes(done.stdout)


def of_ref(session: SessionState, ref: str) -> list[FileReview]:
    """Each file that differs from git ref `ref` now (untracked files included)."""
    ws = session.workspace
    if ref.startswith("-"):
        raise Refused(f"sightline: review: not a git ref: {ref}")
    _git(ws, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    names = _git(ws, "diff", "--name-only", "-z", ref, "--").split(b"\0")
    names += _git(ws, "ls-files", "--others", "--exclude-standard", "-z").split(b"\0")
    top = _git(ws, "rev-parse", "--show-toplevel").decode().strip()
    agent = {}
    for f in of_conversation(session):
        agent[f.path] = f.agent
    out = []
    for raw in sorted(set(n for n in names if n)):
        name = raw.decode("utf-8", "surrogateescape")
        path = os.path.join(top, name)
        try:
            base: bytes | None = _git(ws, "show", f"{ref}:{name}")
        except Refused:
            base = None
        try:
            current = state_of(session.editor, path).data
        except (TooLarge, EditorError, OSError):
            continue
        if current != base:
            rel = os.path.relpath(path, os.path.realpath(ws))
            out.append(_review(path, rel, base, agent.get(path), current))
    return out


def quickfix(files: list[FileReview]) -> list[dict[str, Any]]:
    """One entry per hunk, in file order."""
    items = []
    for f in files:
        if not f.hunks:
            items.append({"filename": f.path, "lnum": 1, "text": f.note() or "changed"})
        for i, h in enumerate(f.hunks):
            what = narrator.review_hunk(i, len(f.hunks), len(h.new), len(h.old), i in f.edited)
            extra = f.note()
            items.append(
                {
                    "filename": f.path,
                    "lnum": h.start + 1 if h.old else max(h.start, 1),
                    "text": what + (f" ({extra})" if extra else ""),
                }
            )
    return items


def start(session: SessionState, ref: str | None) -> tuple[Turn | None, list[dict[str, Any]]]:
    """List the changes; when some can be reverted, start showing them file by file."""
    with session._lock:
        if session.turn is not None:
            raise Refused("a turn is running: wait for it or :Sightline stop before a review")
    files = of_ref(session, ref) if ref else of_conversation(session)
    items = quickfix(files)
    if not items:
        return None, []
    shown = [f for f in files if f.hunks]
    with session._lock:
        if session.turn is not None:
            raise Refused("a turn is running: wait for it or :Sightline stop before a review")
        session._turn_ids += 1
        turn = Turn(session._turn_ids, Careful(session))
        checkpointing.begin(session, turn, f"review{' ' + ref if ref else ''}: reverted hunks")
        turn.files.message = 0
        session._begin(turn)
    session.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": False, "review": True})
    threading.Thread(
        target=_run, args=(session, turn, shown), name=f"review-{turn.id}", daemon=True
    ).start()
    return turn, items


def _run(session: SessionState, turn: Turn, files: list[FileReview]) -> None:
    status = "done"
    try:
        for f in files:
            if turn.cancelled():
                break
            _one(session, turn, f)
    except Exception:
        status = "error"
        log.exception("the review failed")
        session.transcript.add_note(*narrator.internal_error(RuntimeError("the review failed")))
    finally:
        checkpointing.finish(session, turn)
        session.finish(turn, status)


def _one(session: SessionState, turn: Turn, f: FileReview) -> None:
    found = turn.editor.load_lines(f.path)
    if "buffer" not in found:
        return
    before = diff.buffer_text(list(found["lines"]))
    base = diff.as_buffer_text(_text(f.base)) if f.base else ""
    if before == base:
        return
    proposal = Proposal("edit", f.rel, f.path, before, base, 0, len(before))
    proposal.buffer = int(found["buffer"])
    edited = f.edited if proposal.hunks == f.hunks else set()
    summary = narrator.review_summary(f.rel, len(proposal.hunks))
    shown = [narrator.proposal_header(summary), *proposal.diff_lines()]
    proposal.diff_row = session.transcript.add_lines(shown)
    proposal.diff_shown = shown
    if edited:
        session.transcript.add_note(*narrator.review_edited(sorted(i + 1 for i in edited)))
    drawn = False

    def show(item: Any) -> None:
        nonlocal drawn
        drawn = True
        proposals.draw_inline(turn, item, proposal)

    try:
        item = turn.gate.ask(
            "edit", summary, {"proposal": proposal}, cancelled=turn.cancelled, shown=show
        )
    finally:
        if drawn:
            proposals.clear_inline(turn, proposal)
    if turn.cancelled():
        return
    if item.by_hunk:
        chosen = {i for i, (d, _) in item.hunks.items() if d == "accept"}
    else:
        chosen = set(range(len(proposal.hunks))) if item.decision == "accept" else set()
    if chosen & edited:
        again = sorted(i + 1 for i in chosen & edited)
        second = turn.gate.ask(
            "edit", narrator.review_confirm(f.rel, again), {}, cancelled=turn.cancelled
        )
        if second.decision != "accept" or turn.cancelled():
            chosen -= edited
    if not chosen:
        session.transcript.add_note(*narrator.review_kept(f.rel))
        return
    after = diff.apply_hunks(before, proposal.hunks, chosen)
    result = proposals.apply_text(turn, proposal, after)
    session.transcript.add_note(
        *narrator.review_reverted(
            f.rel, sorted(i + 1 for i in chosen), result.content, result.is_error
        )
    )
