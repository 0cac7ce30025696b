"""What an ACP agent changed on disk itself, past the review gate: every file under the
workspace (git-ignored files, ignored folders and `.git` included: an agent can write
anything there, `.git/hooks` too), before and after its turn, compared by content.

Every decision is by content hash. What the stat is for is to know when a hash computed
earlier is still the file's hash, so that only files whose stat changed are read again. The
rule (the "racy clean" rule git uses for its index):

* a cached hash is reused only while the file's inode, size, mtime and ctime (ns) are all
  the ones it was hashed with. Any write, truncate, rename onto it, chmod or `os.utime` sets
  the ctime to the kernel's clock, and no system call sets the ctime to a chosen value, so a
  write that also puts the size and the mtime back still changes the stat;
* but timestamps have a granularity (the kernel's coarse clock: a tick, up to 10 ms; 2 s on
  FAT), so a write in the same tick as the one before it may leave ctime as it was. Hence a
  hash is reused only when the file's ctime was more than RACY_NS before the hash was taken
  (taken: the time just before the file was opened). Any later write then gets a ctime
  after that, so it shows in the stat. A file changed within RACY_NS of a scan is read again
  by the next one (a few files, those just written);
* what this cannot see: a clock set back by more than RACY_NS between two scans, and a
  write through a shared mmap that the kernel has not stamped yet (stamped on writeback).

The first pass reads every file; on a large workspace that takes seconds, so it starts in
the background when an ACP agent is configured for the workspace (`warm`), and a turn's
scans then only read the files whose stat changed. Reading is spread over a thread pool
(open/read release the GIL, and blake2b too for larger data). A turn's walk stays bounded in
files and time; a file it could not hash in time is compared by its stat (by the rule above
that is sound for a file whose stat did not change; a changed one is then named changed
without its earlier text), and a walk cut short says so (`complete`).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from stat import S_ISLNK, S_ISREG

MAX_FILES = 200_000
MAX_SECONDS = 3.0  # for a turn's whole walk
HASH_SECONDS = 1.0  # of a turn's walk spent hashing (the files not hashed yet: by stat)
WARM_SECONDS = 120.0  # the background first pass
MAX_HASH_BYTES = 64 * 1024 * 1024  # a larger file is compared by its stat alone
RACY_NS = 2_000_000_000  # a hash taken this soon after the file's ctime is not reused
WORKERS = 8  # reading threads (the work is system calls: more than the cores)
CHUNK = 64  # files per job of the pool

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
    # path -> (the stat it was hashed with, its hash, when it was hashed: time.time_ns()).
    # Read without the lock (a dict lookup is atomic); written under it.
    hashes: dict[str, tuple[StatKey, str, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    warming: dict[str, threading.Thread] = field(default_factory=dict)


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


def cached(path: str, key: StatKey) -> str | None:
    """The hash of `path` computed earlier, if the rule above lets it stand for the file now."""
    found = _cache.hashes.get(path)
    if found is None or found[0] != key:
        return None
    return found[1] if key[3] < found[2] - RACY_NS else None


def _hash(path: str, key: StatKey, keep: Keep | None) -> str | None:
    hashed_at = time.time_ns()  # before the open: a write after it has a later ctime
    try:
        digest = _digest(path, keep)
    except OSError:
        return None
    with _cache.lock:
        if len(_cache.hashes) > 2 * MAX_FILES:
            _cache.hashes.clear()  # bounded: the next scans hash again
        _cache.hashes[path] = (key, digest, hashed_at)
    return digest


def take(
    root: str,
    max_files: int = MAX_FILES,
    max_seconds: float = MAX_SECONDS,
    keep: Keep | None = None,
    hash_seconds: float = HASH_SECONDS,
) -> Snapshot:
    start = time.monotonic()
    files: dict[str, tuple[StatKey, str | None]] = {}
    todo: list[tuple[str, str, StatKey]] = []  # (rel, path, stat): to read
    hashes = _cache.hashes
    stack = [root]
    cut = len(root.rstrip(os.sep)) + 1  # a relative path by slicing (relpath is slow)
    complete = True
    # The hot loop of a turn's scan (a stat per file): kept free of calls it can do without
    # (in no particular order: a walk cut short names what it saw).
    while stack and complete:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        if len(files) + len(entries) > max_files or time.monotonic() - start > max_seconds:
            complete = False
            entries = entries[: max(0, max_files - len(files))]
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            key: StatKey = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            rel = entry.path[cut:]
            if rel in SKIPPED:
                continue
            mode = st.st_mode
            if S_ISREG(mode) and st.st_size <= MAX_HASH_BYTES:
                found = hashes.get(entry.path)  # `cached`, inline
                if found is not None and found[0] == key and key[3] < found[2] - RACY_NS:
                    files[rel] = (key, found[1])
                else:
                    files[rel] = (key, None)
                    todo.append((rel, entry.path, key))
            elif S_ISLNK(mode):
                try:
                    files[rel] = (key, "link:" + os.readlink(entry.path))
                except OSError:
                    files[rel] = (key, None)
            else:
                files[rel] = (key, None)  # a FIFO, a socket (never opened), a huge file
    if todo:
        budget = max(0.0, min(hash_seconds, max_seconds - (time.monotonic() - start)))
        for rel, digest in _hash_all(todo, keep, budget).items():
            files[rel] = (files[rel][0], digest)
    return Snapshot(files, complete)


def _hash_all(
    todo: list[tuple[str, str, StatKey]], keep: Keep | None, budget: float
) -> dict[str, str]:
    """Read the files of `todo`, on a thread pool, for up to `budget` seconds: their hashes
    (those not read in time are left out)."""
    deadline = time.monotonic() + budget

    def chunk(part: list[tuple[str, str, StatKey]]) -> list[tuple[str, str]]:
        out = []
        for rel, path, key in part:
            if time.monotonic() > deadline:
                break
            digest = _hash(path, key, keep)
            if digest is not None:
                out.append((rel, digest))
        return out

    if len(todo) <= CHUNK:  # not worth the threads
        return dict(chunk(todo))
    parts = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
    with ThreadPoolExecutor(min(WORKERS, len(parts)), thread_name_prefix="scan") as pool:
        return {rel: digest for got in pool.map(chunk, parts) for rel, digest in got}


def warm(root: str, keep: Keep | None = None) -> threading.Thread:
    """Start the first pass over `root` in the background (once at a time per root): the
    hashes it computes, and the texts it gives `keep`, are what the turns' scans then reuse."""
    with _cache.lock:
        running = _cache.warming.get(root)
        if running is not None and running.is_alive():
            return running

        def run() -> None:
            try:
                take(root, max_seconds=WARM_SECONDS, keep=keep, hash_seconds=WARM_SECONDS)
            finally:
                with _cache.lock:
                    _cache.warming.pop(root, None)

        thread = threading.Thread(target=run, name="scan-warm", daemon=True)
        _cache.warming[root] = thread
        thread.start()
    return thread


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
