"""A turn's checkpoint: begun when the turn starts, written when it ends (whatever ended it),
in the conversation's part of the checkpoint store (domain/checkpoints.py)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sightline.domain import checkpoints, narrator
from sightline.domain.checkpoints import MISSING, Checkpoint, FileChange
from sightline.editor.port import EditorError
from sightline.gate.checkpoint import TooLarge, disk_bytes, state_of

if TYPE_CHECKING:
    from sightline.agent.state import SessionState
    from sightline.agent.turn import Turn

log = logging.getLogger(__name__)

# What the ACP scan keeps of each file it hashes (larger files are not restorable).
KEEP_MAX_BYTES = 1 << 20


def begin(session: SessionState, turn: Turn, label: str) -> None:
    store = session.checkpoints
    turn.files.keep = store.keeper(KEEP_MAX_BYTES)
    turn.files.label = label.strip().splitlines()[0][:80] if label.strip() else "(turn)"
    turn.files.message = session.transcript.users() + 1  # its message is shown next


def _put(store: checkpoints.Store, data: bytes | None) -> str | None:
    return None if data is None else store.put(data)


def finish(session: SessionState, turn: Turn) -> Checkpoint | None:
    """Write the turn's checkpoint, if it changed a file; never raises (a turn's end must
    not fail for it: the failure is logged)."""
    try:
        return _finish(session, turn)
    except Exception:
        log.exception("the checkpoint of turn %d was not written", turn.id)
        return None


def _finish(session: SessionState, turn: Turn) -> Checkpoint | None:
    files, conv = turn.files, session.conversation
    if not files.any() or conv is None or conv.read_only:
        return None
    store = session.checkpoints
    store.max_bytes = session.cfg.checkpoints_max_bytes
    with files.lock:
        touched = dict(files.touched)
        self_writes = dict(files.self_writes)
    changes: list[FileChange] = []
    for path, t in touched.items():
        before = MISSING if t.unknown else _put(store, t.before)
        try:
            now = state_of(session.editor, path)
            after, unsaved = _put(store, now.data), now.unsaved
            wrote = disk_bytes(path) != t.disk_before
        except (TooLarge, EditorError, OSError):
            after, unsaved, wrote = MISSING, False, True
        if before != after:  # an apply that was refused changed nothing
            changes.append(FileChange(path, t.rel, before, after, wrote, unsaved))
    for path, w in self_writes.items():
        before = w.before if w.before is None or store.has(w.before) else MISSING
        after = w.after if w.after is None or store.has(w.after) else MISSING
        changes.append(FileChange(path, w.rel, before, after, True))
    if not changes:
        return None
    return save(session, files.label, "turn", changes, files.message)


def save(
    session: SessionState, label: str, kind: str, changes: list[FileChange], message: int = 0
) -> Checkpoint:
    """Write one checkpoint of the conversation; say so when the cap dropped older ones."""
    store = session.checkpoints
    conv = session._conversation()
    cp = Checkpoint(
        store.next_seq(conv.id),
        kind,
        label,
        checkpoints.now(),
        tuple(sorted(changes, key=_rel)),
        message,
    )
    dropped = store.save(conv.id, cp)
    if dropped.checkpoints:
        cap = session.cfg.checkpoints_max_bytes >> 20
        session.transcript.add_note(*narrator.checkpoints_dropped(dropped.checkpoints, cap))
    return cp


def _rel(change: FileChange) -> str:
    return change.rel
