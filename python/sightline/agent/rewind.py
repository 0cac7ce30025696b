"""`:Sightline rewind`: put every file a turn and the later ones changed back to its state
before that turn, without ever losing what the user typed since (domain/checkpoints.py says
what each file gets). It runs as a turn of its own, on a worker thread: the bar says working,
a file the user changed since is shown as a proposal whose hunks they decide (their text is
kept unless they take a hunk), and new files are deleted only after a yes that names them.
A rewind is itself a checkpoint: rewinding it undoes it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.agent import steering
from sightline.agent.checkpointing import Pending, save
from sightline.agent.turn import Turn
from sightline.domain import diff, narrator
from sightline.domain.checkpoints import Checkpoint, Restore, digest, plan
from sightline.domain.errors import Refused
from sightline.editor.port import EditorError
from sightline.gate.checkpoint import TooLarge, disk_bytes, state_of
from sightline.gate.proposals import Proposal, review

if TYPE_CHECKING:
    from sightline.agent.state import SessionState
    from sightline.editor.port import Editor
    from sightline.gate.approvals import Approvals
    from sightline.gate.decisions import Gate
    from sightline.ui.push import Ui
    from sightline.ui.transcript import Transcript

log = logging.getLogger(__name__)


def choices(session: SessionState) -> list[dict[str, Any]]:
    """The conversation's checkpoints for the picker, the newest first."""
    conv = session.conversation
    if conv is None:
        return []
    out = []
    for cp in reversed(session.checkpoints.load(conv.id)):
        out.append(
            {
                "seq": cp.seq,
                "kind": cp.kind,
                "label": cp.label,
                "time": cp.time,
                "files": [f.rel for f in cp.files],
            }
        )
    return out


def at_row(session: SessionState, row: int) -> int:
    """The checkpoint of the turn transcript row `row` (0-based) belongs to."""
    conv = session.conversation
    message = session.transcript.users_through(row)
    if conv is None or not message:
        raise Refused("sightline: no turn under the cursor: put it on a turn of the transcript")
    for cp in session.checkpoints.load(conv.id):
        if cp.kind == "turn" and cp.message == message:
            return cp.seq
    raise Refused("sightline: the turn under the cursor changed no file: nothing to rewind")


def start(session: SessionState, seq: int, fork: bool = False) -> tuple[Turn, str | None]:
    """Start rewinding to before checkpoint `seq` (on a worker thread). With `fork`, the
    conversation is forked first at that turn's message (agent/steering.py's fork): the
    new one holds the conversation before it, so the model never sees the undone turns;
    the other stays in the history. The turn's prompt goes back into the composer, and
    the new conversation keeps the earlier checkpoints (and gets the rewind's own), so
    its turns can still be rewound and the rewind undone there. Everything is checked
    before anything changes: a refusal leaves files and conversation as they were.
    Returns the rewind's turn and, after a fork, the prompt given back."""
    with session._lock:
        chosen, kept = _chosen(session, seq)
        at = _fork_point(session, chosen) if fork else None
    given_back = None
    if at is not None:
        forked = steering.fork(session, at)  # (with the checkpoints before the chosen one)
        given_back = forked.get("text")
    with session._lock:
        if session.turn is not None:
            raise Refused("a turn is running: wait for it or :Sightline stop before a rewind")
        session._turn_ids += 1
        turn = Turn(session._turn_ids, Careful(session))
        session._begin(turn)
    session.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": False, "rewind": seq})
    threading.Thread(
        target=_run, args=(session, turn, chosen, kept), name=f"rewind-{turn.id}", daemon=True
    ).start()
    return turn, given_back


def _chosen(session: SessionState, seq: int) -> tuple[Checkpoint, list[Checkpoint]]:
    if session.turn is not None:
        raise Refused("a turn is running: wait for it or :Sightline stop before a rewind")
    conv = session.conversation
    if conv is None or conv.read_only:
        raise Refused("nothing to rewind: this conversation changed no file")
    kept = session.checkpoints.load(conv.id)
    chosen = next((cp for cp in kept if cp.seq == seq), None)
    if chosen is None:
        raise Refused(f"no checkpoint #{seq} in this conversation (:Sightline rewind lists)")
    return chosen, kept


def _fork_point(session: SessionState, chosen: Checkpoint) -> int:
    """The record of the chosen turn's message (where the fork leaves the conversation)."""
    if chosen.kind != "turn" or not chosen.message:
        raise Refused(
            f"sightline: #{chosen.seq} is a rewind, not a turn: there is no message to fork "
            f"at (:Sightline rewind {chosen.seq} undoes it without a fork)"
        )
    conv = steering.writable(session)
    key = session.transcript.user_key(chosen.message)
    at = next((i for i, r in enumerate(conv.records) if r is key), None)
    if at is None or not steering.is_prompt(key):
        raise Refused(
            f"sightline: the message of #{chosen.seq} is not on this branch of the "
            "conversation: switch to its branch (:Sightline history) to fork there"
        )
    return at


@dataclass
class Careful:
    """The session as the rewind's proposals see it: never auto-accepted (autoaccept covers
    the agent's edits, not the user's own text a rewind would overwrite)."""

    inner: SessionState
    autoaccept: bool = False
    plan: list[dict[str, Any]] = field(default_factory=list)
    mode: str = "normal"

    @property
    def workspace(self) -> str:
        return self.inner.workspace

    @property
    def editor(self) -> Editor:
        return self.inner.editor

    @property
    def cfg(self) -> Any:
        return self.inner.cfg

    @property
    def gate(self) -> Gate:
        return self.inner.gate

    @property
    def approvals(self) -> Approvals:
        return self.inner.approvals

    @property
    def transcript(self) -> Transcript:
        return self.inner.transcript

    @property
    def ui(self) -> Ui:
        return self.inner.ui

    @property
    def conversation(self) -> Any:
        return self.inner.conversation

    @property
    def pane(self) -> int:
        return self.inner.pane

    def record(self, record: dict[str, Any]) -> None:
        self.inner.record(record)

    def account(self, usage: dict[str, int]) -> None:
        self.inner.account(usage)


@dataclass
class _Outcome:
    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the user's changes kept (hunks shown)
    deleted: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # not restorable, or refused
    # path -> its state before the rewind (bytes, loaded), for the rewind's own checkpoint
    before: dict[str, tuple[str, bytes | None, bytes | None]] = field(default_factory=dict)


def _run(session: SessionState, turn: Turn, chosen: Checkpoint, kept: list[Checkpoint]) -> None:
    status = "done"
    out = _Outcome()
    try:
        session.transcript.add_note(*narrator.rewind_started(chosen.seq, chosen.label))
        session.ui.schedule()
        _rewind(session, turn, plan(kept, chosen.seq), out)
    except Exception:
        status = "error"
        log.exception("rewind to #%d failed", chosen.seq)
        session.transcript.add_note(*narrator.internal_error(RuntimeError("the rewind failed")))
    finally:
        try:
            _checkpoint(session, chosen, out)
        except Exception:
            log.exception("the rewind's checkpoint was not written")
        if not turn.cancelled():
            session.transcript.add_lines(
                narrator.rewound(out.restored, out.kept, out.deleted, out.left)
            )
        session.finish(turn, status)


def _rewind(session: SessionState, turn: Turn, restores: list[Restore], out: _Outcome) -> None:
    editor, store = session.editor, session.checkpoints
    created: list[Restore] = []
    for r in restores:
        if turn.cancelled():
            return
        try:
            now, loaded, unsaved = state_of(editor, r.path)
        except (TooLarge, EditorError, OSError):
            out.left.append(r.rel)
            continue
        action = r.action(None if now is None else digest(now), unsaved)
        if action == "same":
            continue
        if action == "unknown":
            out.left.append(r.rel)
            continue
        out.before[r.path] = (r.rel, now, disk_bytes(r.path))
        if action == "delete":
            created.append(r)
        elif action == "restore":
            target = store.get(r.target)
            if target is None and r.target is not None:
                out.left.append(r.rel)
            elif _restore(editor, r, now, target, loaded):
                out.restored.append(r.rel)
            else:
                out.left.append(r.rel)
        elif now is None or r.target is None:
            out.kept.append(r.rel)  # deleted or created, then changed by the user: theirs
        else:
            target = store.get(r.target)
            if target is None:
                out.left.append(r.rel)
            else:
                _conflict(turn, r, now, target)
                out.kept.append(r.rel)
    if created and not turn.cancelled():
        _delete(session, turn, created, out)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _restore(
    editor: Editor, r: Restore, now: bytes | None, target: bytes | None, loaded: bool
) -> bool:
    """Put the file back: in its loaded buffer as one undo step (saved by the save rule:
    only a buffer without unsaved changes is written), else on disk."""
    if loaded and now is not None and target is not None:
        before, after = _text(now), diff.as_buffer_text(_text(target))
        edit = diff.anchored_edit(before, after, 0, len(before))
        res = editor.apply_edit(
            {
                "path": r.path,
                "anchor": edit.anchor,
                "rel_start": edit.rel_start,
                "rel_end": edit.rel_end,
                "text": edit.text,
            }
        )
        if res.get("ok") or not res.get("stale"):
            return bool(res.get("ok"))
        # The buffer shows the file in another form (CRLF, no final newline): an unmodified
        # one follows the file, reloaded as one undo step ('undoreload').
        state = editor.file_state(r.path, 0)
        if state.get("modified"):
            return False
    if target is None:
        return False
    _write_atomic(r.path, target)
    if loaded:
        editor.sync_files([r.path])
    return True


def _write_atomic(path: str, data: bytes) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    with contextlib.suppress(OSError):
        mode = p.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.sightline-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode if mode is not None else 0o644)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _conflict(turn: Turn, r: Restore, now: bytes, target: bytes) -> None:
    """The user changed the file since: its hunks back to the checkpoint are proposed; the
    user takes those they want (none taken: their text stays as it is)."""
    found = turn.editor.load_lines(r.path)
    if "buffer" not in found:
        return
    before = diff.buffer_text(list(found["lines"]))
    after = diff.as_buffer_text(_text(target))
    if before == after:
        return
    proposal = Proposal("edit", r.rel, r.path, before, after, 0, len(before))
    proposal.buffer = int(found["buffer"])
    turn.session.transcript.add_note(*narrator.rewind_conflict(r.rel))
    review(turn, proposal)


def _delete(session: SessionState, turn: Turn, created: list[Restore], out: _Outcome) -> None:
    """Files the undone turns created: deleted after a yes that names them, each only if it
    still holds what the turns wrote."""
    names = [r.rel for r in created]
    item = turn.gate.ask(
        "delete", narrator.rewind_delete_question(names), {"paths": names}, cancelled=turn.cancelled
    )
    if item.decision != "accept" or turn.cancelled():
        out.kept.extend(names)
        return
    for r in created:
        try:
            now = state_of(session.editor, r.path).data
        except (TooLarge, EditorError, OSError):
            now = b""
        if now is None or digest(now) != r.expected or not session.editor.drop_buffer(r.path):
            out.kept.append(r.rel)
            continue
        try:
            os.unlink(r.path)
            out.deleted.append(r.rel)
        except OSError:
            out.left.append(r.rel)


def _checkpoint(session: SessionState, chosen: Checkpoint, out: _Outcome) -> None:
    """The rewind's own checkpoint: each file it changed, before and after it."""
    pending = []
    for path, (rel, now, disk_then) in out.before.items():
        try:
            after, _, unsaved = state_of(session.editor, path)
        except (TooLarge, EditorError, OSError):
            continue
        if after == now:
            continue
        pending.append(Pending(path, rel, now, after, disk_bytes(path) != disk_then, unsaved))
    if pending:
        label = narrator.rewind_label(chosen.seq, chosen.label)
        save(session, label, "rewind", pending)
