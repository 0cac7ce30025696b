"""What an ACP agent changed on disk itself, past the review gate: every file under the
workspace (git-ignored files, ignored folders and `.git` included: an agent can write
anything there, `.git/hooks` too), before and after its turn, compared by content.

A file's content hash is computed once and reused while its inode, size, mtime and ctime
stay the same: a write changes the ctime, and putting the mtime back (os.utime) changes it
too, so an unchanged stat proves unchanged content and the next turns cost only a stat per
file. The walk is bounded in files and time; a file it could not hash in time is compared
by that stat, and a walk cut short says so (`complete`).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_FILES = 200_000
MAX_SECONDS = 3.0  # for the whole walk; hashing stops earlier (HASH_SECONDS)
HASH_SECONDS = 1.0
MAX_HASH_BYTES = 64 * 1024 * 1024  # a larger file is compared by its stat alone

StatKey = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns
# Rewritten by every `git status` (the agent's too): not a change worth naming.
SKIPPED = frozenset({os.path.join(".git", "index")})


@dataclass
class Snapshot:
    # relative path -> (stat, content hash or None when it was not hashed in time)
    files: dict[str, tuple[StatKey, str | None]]
    complete: bool = True


@dataclass
class _Cache:
    hashes: dict[str, tuple[StatKey, str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_cache = _Cache()


# The checkpoint store's keeper (domain/checkpoints.py): given each file hashed (hash, bytes),
# so that a file the agent then writes itself has its earlier bytes kept.
Keep = Callable[[str, bytes], None]
KEEP_MAX_BYTES = 1 << 20  # larger files are hashed in chunks and not kept


def _digest(path: str, keep: Keep | None = None) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb", buffering=0) as fh:
        if keep is not None and os.fstat(fh.fileno()).st_size <= KEEP_MAX_BYTES:
            data = fh.read()
            h.update(data)
            keep(h.hexdigest(), data)
            return h.hexdigest()
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def take(
    root: str,
    max_files: int = MAX_FILES,
    max_seconds: float = MAX_SECONDS,
    keep: Keep | None = None,
) -> Snapshot:
    start = time.monotonic()
    files: dict[str, tuple[StatKey, str | None]] = {}
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            entries = sorted(os.scandir(top), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if len(files) >= max_files or time.monotonic() - start > max_seconds:
                return Snapshot(files, False)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            key: StatKey = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            rel = os.path.relpath(entry.path, root)
            if rel not in SKIPPED:
                files[rel] = (key, _content(entry, key, start, keep))
    return Snapshot(files, True)


def _content(
    entry: os.DirEntry[str], key: StatKey, start: float, keep: Keep | None = None
) -> str | None:
    if entry.is_symlink():
        try:
            return "link:" + os.readlink(entry.path)
        except OSError:
            return None
    if not entry.is_file(follow_symlinks=False):
        return None  # a FIFO or a socket: never opened, compared by its stat
    with _cache.lock:
        cached = _cache.hashes.get(entry.path)
    if cached is not None and cached[0] == key:
        return cached[1]
    if key[1] > MAX_HASH_BYTES or time.monotonic() - start > HASH_SECONDS:
        return None
    try:
        digest = _digest(entry.path, keep)
    except OSError:
        return None
    with _cache.lock:
        if len(_cache.hashes) > 2 * MAX_FILES:
            _cache.hashes.clear()  # bounded: the next turns hash again
        _cache.hashes[entry.path] = (key, digest)
    return digest


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files created, changed or deleted between the two snapshots, sorted: by content where
    both sides were hashed, else by stat."""
    out = []
    for name in set(before.files) | set(after.files):
        old, new = before.files.get(name), after.files.get(name)
        if old is None or new is None:
            out.append(name)
        elif old[1] is not None and new[1] is not None:
            if old[1] != new[1]:
                out.append(name)
        elif old[0] != new[0]:
            out.append(name)
    return sorted(out)
