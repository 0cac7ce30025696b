"""What a turn changed, file by file, for its checkpoint (domain/checkpoints.py).

Before the gate applies a write, the file's state is taken once per turn: the text its loaded
buffer holds (brought up to date with its file first: port/buffers.lua's stale-buffer rule),
else its bytes on disk. Files an ACP agent wrote itself are added by their hashes from the
before/after scan, whose bytes the scan kept in the store. The agent (agent/checkpointing.py)
reads the after-states and writes the checkpoint when the turn ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from sightline.domain.checkpoints import MISSING
from sightline.editor.port import Editor, EditorError

__all__ = [
    "MISSING",
    "State",
    "TooLarge",
    "TurnFiles",
    "before_write",
    "disk_bytes",
    "files_of",
    "state_of",
]

# A file larger than this is not checkpointed (its state is recorded as not kept).
MAX_BYTES = 16 << 20


class TooLarge(Exception):
    pass


def disk_bytes(path: str) -> bytes | None:
    """The file's bytes, None when it does not exist (or is not a file)."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise TooLarge(path)
        return p.read_bytes() if p.is_file() else None
    except (FileNotFoundError, NotADirectoryError):
        return None


class State(NamedTuple):
    """A file as the user sees it: the text of its buffer when that holds unsaved changes
    (`unsaved`), else its bytes on disk (None: no such file)."""

    data: bytes | None
    loaded: bool  # it has a loaded buffer
    unsaved: bool


def state_of(editor: Editor, path: str) -> State:
    """The file's state now. Only a modified buffer's text crosses RPC.

    Raises TooLarge for a file past MAX_BYTES, EditorError when Neovim cannot answer."""
    got = editor.file_state(path, MAX_BYTES)
    text = got.get("text")
    if got.get("modified") and isinstance(text, str):
        if len(text) > MAX_BYTES:
            raise TooLarge(path)
        return State(text.encode("utf-8", "surrogateescape"), True, True)
    return State(disk_bytes(path), bool(got.get("loaded")), False)


@dataclass
class Touched:
    rel: str
    before: bytes | None  # the state before the turn's first write
    disk_before: bytes | None  # the bytes on disk then (to know whether the turn wrote it)
    unknown: bool = False  # too large, or Neovim did not answer: recorded as not kept


@dataclass
class SelfWrite:
    rel: str
    before: str | None  # hashes from the ACP scan (None: the file did not exist)
    after: str | None


@dataclass
class TurnFiles:
    """The files one turn changed. Filled on the turn's worker thread (and the ACP agent's
    request threads: hence the lock)."""

    touched: dict[str, Touched] = field(default_factory=dict)
    self_writes: dict[str, SelfWrite] = field(default_factory=dict)
    # The store's keeper for the ACP scan (set by the agent; None: keep nothing).
    keep: Callable[[str, bytes], None] | None = None
    label: str = ""  # how the rewind picker names the turn (its prompt's first line)
    message: int = 0  # its user message's ordinal in the transcript (the turn under a row)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def before_write(self, editor: Editor, path: str, rel: str) -> None:
        """A write of `path` is about to be applied: take its state once per turn (a buffer
        with no file has nothing a rewind could put back on disk: not taken)."""
        if not path:
            return
        with self.lock:
            if path in self.touched:
                return
        try:
            before = state_of(editor, path).data
            found = Touched(rel, before, disk_bytes(path))
        except (TooLarge, EditorError, OSError):
            found = Touched(rel, None, None, unknown=True)
        with self.lock:
            self.touched.setdefault(path, found)

    def wrote_itself(self, path: str, rel: str, before: str | None, after: str | None) -> None:
        """An ACP agent changed `path` on disk itself (hashes as its scan saw them)."""
        with self.lock:
            if path not in self.touched:
                old = self.self_writes.get(path)  # the state before the turn stays the first
                self.self_writes[path] = SelfWrite(rel, old.before if old else before, after)

    def any(self) -> bool:
        with self.lock:
            return bool(self.touched or self.self_writes)


def files_of(turn: Any) -> TurnFiles | None:
    """The turn's recorder, when it has one (a test's plain turn has none)."""
    found = getattr(turn, "files", None)
    return found if isinstance(found, TurnFiles) else None


def before_write(turn: Any, path: str, rel: str) -> None:
    files = files_of(turn)
    if files is not None:
        files.before_write(turn.editor, path, rel)
