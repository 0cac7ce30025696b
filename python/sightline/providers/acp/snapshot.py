"""Size and mtime of every workspace file, before and after an ACP turn: what changed on disk
that the client did not write was written past the review gate, and the pane says so."""

from __future__ import annotations

import os

from sightline.domain import workspace

Snapshot = dict[str, tuple[int, int]]


def take(root: str, limit: int = 50_000) -> Snapshot:
    out: Snapshot = {}
    for rel in workspace.list_files(root, limit=limit).files:
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:
            continue
        out[rel] = (st.st_size, st.st_mtime_ns)
    return out


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files created, changed or deleted between the two snapshots, sorted."""
    names = set(before) | set(after)
    return sorted(n for n in names if before.get(n) != after.get(n))
