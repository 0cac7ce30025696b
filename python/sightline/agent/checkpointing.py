"""A turn's checkpoint: begun when the turn starts, written when it ends (whatever ended it),
in the conversation's part of the checkpoint store (domain/checkpoints.py)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Pending:
    """A file of a checkpoint about to be written: its states as bytes (put in the store
    under its lock), or as hashes the ACP scan kept in the store earlier (looked up there
    under it); None: the file did not exist."""

    path: str
    rel: str
    before: bytes | str | None
    after: bytes | str | None
    wrote: bool
    unsaved: bool = False
    always: bool = False  # kept even when both states read the same (a self-write)


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
    with files.lock:
        touched = dict(files.touched)
        self_writes = dict(files.self_writes)
    pending: list[Pending] = []
    for path, t in touched.items():
        before: bytes | str | None = MISSING if t.unknown else t.before
        try:
            now = state_of(session.editor, path)
            after: bytes | str | None = now.data
            unsaved, wrote = now.unsaved, disk_bytes(path) != t.disk_before
        except (TooLarge, EditorError, OSError):
            after, unsaved, wrote = MISSING, False, True
        if before != after:  # an apply that was refused changed nothing
            pending.append(Pending(path, t.rel, before, after, wrote, unsaved))
    for path, w in self_writes.items():
        pending.append(Pending(path, w.rel, w.before, w.after, True, always=True))
    if not pending:
        return None
    return save(session, files.label, "turn", pending, files.message)


def _kept(store: checkpoints.Store, state: bytes | str | None) -> str | None:
    """A state as the checkpoint names it (called under the store's lock): bytes are put;
    a hash is kept only while the store holds its text."""
    if state is None or isinstance(state, bytes):
        return _put(store, state)
    return state if store.has(state) else MISSING


def save(
    session: SessionState, label: str, kind: str, pending: list[Pending], message: int = 0
) -> Checkpoint | None:
    """Write one checkpoint of the conversation; say so when the cap dropped older ones."""
    store = session.checkpoints
    store.max_bytes = session.cfg.checkpoints_max_bytes
    conv = session._conversation()

    def make(seq: int) -> Checkpoint | None:
        changes = []
        for p in pending:
            b, a = _kept(store, p.before), _kept(store, p.after)
            if b != a or p.always:
                changes.append(FileChange(p.path, p.rel, b, a, p.wrote, p.unsaved))
        if not changes:
            return None
        when = checkpoints.now()
        return Checkpoint(seq, kind, label, when, tuple(sorted(changes, key=_rel)), message)

    cp, dropped = store.write(conv.id, make)
    if dropped.checkpoints:
        cap = session.cfg.checkpoints_max_bytes >> 20
        session.transcript.add_note(*narrator.checkpoints_dropped(dropped.checkpoints, cap))
    return cp


def _rel(change: FileChange) -> str:
    return change.rel
