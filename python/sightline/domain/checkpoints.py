"""Checkpoints: per turn, the state of each file the turn changed, before and after, so that a
rewind can put them back (agent/rewind.py) and never lose what the user typed since.

The store lives beside the conversations, in the history directory's `checkpoints/`:

* `blobs/ab/abcd…`: a file's bytes, named by their content hash (blake2b, 16 bytes: the
  hash the ACP before/after scan computes), written once however many turns hold them;
* `{conversation id}.jsonl`: that conversation's checkpoints, append-only, one per turn that
  changed a file (and one per rewind: a rewind is undone by rewinding it).

A file's state is its bytes, or None when it does not exist. `MISSING` stands for a state
that was seen (by its hash) but whose bytes were not kept: such a file is never restored.

The store is bounded (`checkpoints.max_mb`): past it the oldest checkpoints are dropped (a
`dropped` record says which, and the transcript says so) and blobs nothing refers to any more
are deleted, the oldest first.

Two cores (two Neovims on one history directory) share the store. Pruning and writing a
checkpoint exclude each other through an advisory lock on `checkpoints/.lock` (flock, one
open file per holder, so it excludes threads too): a checkpoint is written by `write`, which
under the lock puts its texts (or checks that the texts the ACP scan kept earlier are still
there: else they are recorded as not kept) and appends it, and `enforce` prunes under the
same lock, deleting only blobs that no checkpoint then in any manifest refers to. So a blob
a checkpoint is about to name is never deleted between the put and the append.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MISSING = "?"  # a state seen by its hash whose bytes the store does not hold
HASH_SIZE = 16


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=HASH_SIZE).hexdigest()


@dataclass(frozen=True)
class FileChange:
    """One file of a checkpoint: its state before the turn and after it (hashes; None = the
    file did not exist), and whether the turn wrote it to disk (else only its buffer)."""

    path: str  # absolute
    rel: str  # as shown
    before: str | None
    after: str | None
    wrote: bool
    unsaved: bool = False  # what the turn left is an unsaved buffer's text (not the file's)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "rel": self.rel,
            "before": self.before,
            "after": self.after,
            "wrote": self.wrote,
            "unsaved": self.unsaved,
        }

    @classmethod
    def from_json(cls, raw: Any) -> FileChange | None:
        if not isinstance(raw, dict):
            return None
        path, rel = raw.get("path"), raw.get("rel")
        before, after = raw.get("before"), raw.get("after")
        if not (isinstance(path, str) and isinstance(rel, str)):
            return None
        if not all(h is None or _is_hash(h) for h in (before, after)):
            return None
        return cls(path, rel, before, after, bool(raw.get("wrote")), bool(raw.get("unsaved")))


def _is_hash(value: Any) -> bool:
    return isinstance(value, str) and (
        value == MISSING or (len(value) == 2 * HASH_SIZE and value.isalnum())
    )


@dataclass(frozen=True)
class Checkpoint:
    seq: int  # 1, 2, … in this conversation
    kind: str  # "turn" | "rewind"
    label: str  # the turn's prompt, or what the rewind undid
    time: float
    files: tuple[FileChange, ...]
    message: int = 0  # the turn's user message, counted in the transcript (0: a rewind)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "checkpoint",
            "seq": self.seq,
            "kind": self.kind,
            "label": self.label,
            "time": self.time,
            "message": self.message,
            "files": [f.to_json() for f in self.files],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Checkpoint | None:
        seq, kind, label, when = raw.get("seq"), raw.get("kind"), raw.get("label"), raw.get("time")
        files = raw.get("files")
        if not (
            isinstance(seq, int)
            and kind in ("turn", "rewind")
            and isinstance(label, str)
            and isinstance(when, int | float)
            and isinstance(files, list)
        ):
            return None
        changes = [FileChange.from_json(f) for f in files]
        if any(c is None for c in changes):
            return None
        message = raw.get("message")
        message = message if isinstance(message, int) and not isinstance(message, bool) else 0
        return cls(seq, str(kind), label, float(when), tuple(c for c in changes if c), message)


# -- what a rewind does to each file (pure) ------------------------------------------------------


@dataclass(frozen=True)
class Restore:
    """One file of a rewind: put it back to `target` (None: delete it), which is right only
    while it still holds `expected` (what the turns left in it)."""

    path: str
    rel: str
    target: str | None
    expected: str | None
    wrote: bool  # some undone turn wrote it to disk
    # False when the file changed between two of the undone turns (the user typed in it):
    # what they typed is in no checkpoint, so restoring would lose it.
    clean: bool = True
    unsaved: bool = False  # what the turns left was an unsaved buffer's text

    def action(self, current: str | None, unsaved: bool = False) -> str:
        """What to do with the file as it is now (`current`, its hash; `unsaved`: that is
        an unsaved buffer's text, where the turns left the file saved, or the other way
        round, the user typed or saved since):

        * `same`: it holds its checkpoint already;
        * `unknown`: its earlier bytes were not kept: left as it is;
        * `delete`: the turns created it and it holds what they wrote (asked first);
        * `restore`: nobody changed it since: put back;
        * `conflict`: the user changed it since (or between the undone turns): the user
          decides hunk by hunk, their text kept by default (a created file changed since is
          kept).
        """
        if current == self.target:
            return "same"
        if self.target == MISSING:
            return "unknown"
        if current != self.expected or self.expected == MISSING or not self.clean:
            return "conflict"
        if unsaved != self.unsaved:
            return "conflict"
        return "delete" if self.target is None else "restore"


def plan(checkpoints: list[Checkpoint], seq: int) -> list[Restore]:
    """Undo checkpoint `seq` and every later one: per file, its state before the first of them
    that changed it, expected to hold what the last of them left."""
    out: dict[str, Restore] = {}
    for cp in sorted(checkpoints, key=lambda c: c.seq):
        if cp.seq < seq:
            continue
        for f in cp.files:
            old = out.get(f.path)
            if old is None:
                out[f.path] = Restore(f.path, f.rel, f.before, f.after, f.wrote, unsaved=f.unsaved)
            else:
                clean = old.clean and old.expected == f.before
                out[f.path] = Restore(
                    f.path, f.rel, old.target, f.after, old.wrote or f.wrote, clean, f.unsaved
                )
    return sorted(out.values(), key=lambda r: r.rel)


# -- the store ---------------------------------------------------------------------------------


@dataclass
class Dropped:
    """What enforcing the cap dropped (for the transcript)."""

    checkpoints: int = 0
    bytes: int = 0


@dataclass
class Store:
    directory: Path  # history_dir / "checkpoints"
    max_bytes: int = 256 << 20
    _size: int | None = None  # the blobs' total, known after the first walk
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # Called when another holder has the store's lock and this one is about to wait for it
    # (the shared-store test's hook; nothing in the plugin sets it).
    on_wait: Callable[[], None] | None = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The store's lock, across processes (and threads: each holder opens the file)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if self.on_wait is not None:
                    self.on_wait()
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    @property
    def blobs(self) -> Path:
        return self.directory / "blobs"

    def _blob(self, h: str) -> Path:
        return self.blobs / h[:2] / h

    # -- blobs -------------------------------------------------------------------------------

    def has(self, h: str) -> bool:
        return h != MISSING and self._blob(h).is_file()

    def put(self, data: bytes, h: str | None = None) -> str:
        """Keep `data` (once: a blob already there is not written again); its hash."""
        h = h or digest(data)
        path = self._blob(h)
        if path.is_file():
            return h
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with self._lock:
            if self._size is not None:
                self._size += len(data)
        return h

    def get(self, h: str | None) -> bytes | None:
        if h is None or h == MISSING:
            return None
        try:
            return self._blob(h).read_bytes()
        except OSError:
            return None

    def keeper(self, max_file_bytes: int) -> Callable[[str, bytes], None]:
        """For the ACP scan: keep each file it hashes (up to `max_file_bytes`), so a file the
        agent writes itself has its earlier bytes here."""

        def keep(h: str, data: bytes) -> None:
            if len(data) <= max_file_bytes:
                try:
                    self.put(data, h)
                except OSError as err:
                    log.warning("checkpoint store: %s", err)

        return keep

    # -- checkpoints -------------------------------------------------------------------------

    def _manifest(self, conversation: str) -> Path:
        return self.directory / f"{conversation}.jsonl"

    def load(self, conversation: str) -> list[Checkpoint]:
        """The conversation's checkpoints still kept, oldest first (damaged lines skipped)."""
        found: dict[int, Checkpoint] = {}
        try:
            text = self._manifest(conversation).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        for line in text.splitlines():
            try:
                raw = json.loads(line)
            except ValueError:
                continue
            if not isinstance(raw, dict):
                continue
            if raw.get("type") == "checkpoint":
                cp = Checkpoint.from_json(raw)
                if cp is not None:
                    found[cp.seq] = cp
            elif raw.get("type") == "dropped" and isinstance(raw.get("seqs"), list):
                for seq in raw["seqs"]:
                    if isinstance(seq, int):
                        found.pop(seq, None)
        return [found[s] for s in sorted(found)]

    def next_seq(self, conversation: str) -> int:
        """After every checkpoint ever written (dropped ones too: a seq is never reused)."""
        top = 0
        with contextlib.suppress(OSError):
            for line in self._manifest(conversation).read_text(errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    raw = json.loads(line)
                    if isinstance(raw, dict) and isinstance(raw.get("seq"), int):
                        top = max(top, raw["seq"])
        return top + 1

    def append(self, conversation: str, record: dict[str, Any]) -> None:
        # Not fsynced (an fsync costs a turn hundreds of ms on a busy disk): a crash may lose
        # the last checkpoint, never the files; the reader skips a torn line.
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._manifest(conversation).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    def save(self, conversation: str, cp: Checkpoint) -> Dropped:
        """Write a checkpoint whose texts are in the store already (see `write`)."""
        return self.write(conversation, lambda _seq: cp)[1]

    def write(
        self, conversation: str, make: Callable[[int], Checkpoint | None]
    ) -> tuple[Checkpoint | None, Dropped]:
        """Write the checkpoint `make(next seq)` builds, under the store's lock: `make` puts
        its texts (and checks with `has` those kept earlier), so no other core's prune can
        delete one of them before the checkpoint names it; then keep the store under its
        cap. None from `make`: nothing written."""
        with self.locked():
            cp = make(self.next_seq(conversation))
            if cp is None:
                return None, Dropped()
            self.append(conversation, cp.to_json())
            return cp, self._enforce(keep=(conversation, cp.seq))

    # -- the cap -----------------------------------------------------------------------------

    def _walk(self) -> list[tuple[float, int, Path]]:
        out: list[tuple[float, int, Path]] = []
        if not self.blobs.is_dir():
            return out
        for sub in os.scandir(self.blobs):
            if not sub.is_dir(follow_symlinks=False):
                continue
            for entry in os.scandir(sub.path):
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    out.append((st.st_mtime, st.st_size, Path(entry.path)))
        return out

    def size(self) -> int:
        with self._lock:
            if self._size is None:
                self._size = sum(size for _, size, _ in self._walk())
            return self._size

    def enforce(self, keep: tuple[str, int] | None = None) -> Dropped:
        with self.locked():
            return self._enforce(keep)

    def _enforce(self, keep: tuple[str, int] | None = None) -> Dropped:
        """Past the cap: drop the oldest checkpoints (never `keep`, the one just written)
        until the blobs they leave referenced fit, then delete the blobs no checkpoint refers
        to, the oldest first."""
        dropped = Dropped()
        if self.size() <= self.max_bytes:
            return dropped
        every: list[tuple[float, str, Checkpoint]] = []
        for manifest in self.directory.glob("*.jsonl"):
            for cp in self.load(manifest.stem):
                every.append((cp.time, manifest.stem, cp))
        every.sort(key=lambda item: item[0])
        blobs = self._walk()
        sizes = {path.name: size for _, size, path in blobs}

        def referenced(items: Iterable[tuple[float, str, Checkpoint]]) -> set[str]:
            return {
                h
                for _, _, cp in items
                for f in cp.files
                for h in (f.before, f.after)
                if h is not None and h != MISSING
            }

        live = list(every)
        while live and sum(sizes.get(h, 0) for h in referenced(live)) > self.max_bytes:
            _, conv, cp = live[0]
            if keep == (conv, cp.seq):
                break
            live.pop(0)
            self.append(conv, {"type": "dropped", "seqs": [cp.seq]})
            dropped.checkpoints += 1
        wanted = referenced(live)
        total = sum(sizes.values())
        for _, size, path in sorted(blobs, key=lambda b: b[0]):
            if total <= self.max_bytes:
                break
            if path.name in wanted:
                continue
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                dropped.bytes += size
        with self._lock:
            self._size = total
        return dropped

    def forget(self, conversation: str) -> None:
        """The conversation was deleted: its checkpoints go with it (blobs by the cap)."""
        with self.locked(), contextlib.suppress(OSError):
            self._manifest(conversation).unlink()

    def copy(self, source: str, conversation: str, below: int, then: int) -> None:
        """A conversation forked from `source` holds its checkpoints before seq `below` (the
        turns it holds too, so they can still be rewound there); its next seq is after
        `then`'s (the numbers stay those the user saw)."""
        with self.locked():
            for cp in self.load(source):
                if cp.seq < below:
                    self.append(conversation, cp.to_json())
            self.append(conversation, {"type": "forked", "from": source, "seq": then})


def now() -> float:
    return time.time()
