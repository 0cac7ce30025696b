"""The ACP before/after scan (providers/acp/snapshot.py): every decision by content hash; a
hash computed earlier stands for a file only while its stat is the same and was not racy
(the file changed within RACY_NS of the hash); the first pass runs in the background, so a
turn's scan then reads only what changed."""

from __future__ import annotations

import os
from pathlib import Path

from sightline.domain.checkpoints import digest
from sightline.providers.acp import snapshot


def _key(path: Path) -> snapshot.StatKey:
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def test_a_cached_hash_stands_only_for_the_same_stat_taken_well_after_its_change(
    tmp_path: Path,
) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"now\n")
    key, path = _key(f), str(f)
    ctime = key[3]
    # A hash taken right after the change (same tick, say): a second write in that tick
    # could keep the stat, so it is read again, and the truth is found.
    snapshot._cache.hashes[path] = (key, digest(b"old\n"), ctime + snapshot.RACY_NS // 2)
    assert snapshot.cached(path, key) is None
    assert snapshot.take(str(tmp_path)).files["a.txt"] == (key, digest(b"now\n"))
    # A hash taken well after: it stands (nothing is read: the planted hash is answered).
    snapshot._cache.hashes[path] = (key, digest(b"planted\n"), ctime + 2 * snapshot.RACY_NS)
    assert snapshot.take(str(tmp_path)).files["a.txt"][1] == digest(b"planted\n")
    # Any other stat: read again.
    other = (key[0], key[1], key[2], key[3] + 1)
    assert snapshot.cached(path, other) is None


def test_a_same_size_write_with_its_mtime_put_back_is_seen(tmp_path: Path) -> None:
    f = tmp_path / "hook"
    f.write_bytes(b"#!/bin/sh\ntrue\n")
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns - 10 * snapshot.RACY_NS))  # an old file
    before = snapshot.take(str(tmp_path))
    f.write_bytes(b"#!/bin/sh\nevil\n")
    os.utime(f, ns=(st.st_atime_ns, before.files["hook"][0][2]))  # the mtime put back
    after = snapshot.take(str(tmp_path))
    assert after.files["hook"][0][1:3] == before.files["hook"][0][1:3]  # size, mtime same
    assert snapshot.changed(before, after) == ["hook"]
    assert after.files["hook"][1] == digest(b"#!/bin/sh\nevil\n")


def test_the_first_pass_in_the_background_leaves_a_turn_only_what_changed(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    for d in range(5):
        (ws / f"d{d}").mkdir(parents=True)
        for i in range(100):  # more than one chunk of the pool
            (ws / f"d{d}" / f"f{i}.txt").write_text(f"{d}.{i}\n")
    kept: dict[str, bytes] = {}
    snapshot.warm(str(ws), kept.__setitem__).join(30)
    assert len(kept) == 500  # every text kept for the checkpoints, by the warm pass
    # The files were just written (racy: their hashes would be taken again): as if the
    # turn came later, the hashes' time is pushed past RACY_NS.
    for path, (key, h, at) in list(snapshot._cache.hashes.items()):
        snapshot._cache.hashes[path] = (key, h, at + 2 * snapshot.RACY_NS)
    (ws / "d3" / "f7.txt").write_text("changed\n")
    read: list[str] = []
    snap = snapshot.take(str(ws), keep=lambda h, data: read.append(data.decode()))
    assert read == ["changed\n"]  # the turn read one file
    assert snap.complete and len(snap.files) == 500
    assert all(h is not None for _, h in snap.files.values())
