"""A conversation as a tree of branches over its append-only history file.

The file stays one list of records in the order they happened. A `branch` record with a
`parent` starts a branch: it holds the parent's first `keep` records (as the parent held them
then), the branch record itself, and every record appended while it is active. A `branch`
record without `parent` makes an existing branch active again (its records follow it). The
records before any branch record are the first branch, `ROOT`. A file without branch
records (every file an older core wrote) is that one branch, read as before.

A branch's records are exactly what was sent on it, so every consumer of a conversation
(the request, the transcript, the accounts, compaction's `keep` counts) reads the active
branch as it read the whole file before.

Messages typed while a turn ran wait in the file as `queued` records until an `unqueued`
record says what became of them (sent, steered, cancelled, given back to the composer):
nothing typed is lost when the core ends.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ROOT = "1"
WHYS = ("edit", "regenerate")
UNQUEUED = ("sent", "steered", "cancelled", "returned")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_branch(record: dict[str, Any]) -> str | None:
    """Why a `branch` record is not one the core writes (None when it is)."""
    if not isinstance(record.get("id"), str) or not record["id"]:
        return "a branch without an id"
    if "parent" in record:
        if not isinstance(record["parent"], str) or not _whole(record.get("keep")):
            return "a branch without a parent or a whole number of kept records"
        if record.get("why") is not None and not isinstance(record["why"], str):
            return "a branch's reason is not text"
    return None


def check_queued(record: dict[str, Any]) -> str | None:
    """Why a `queued` / `unqueued` record is not one the core writes."""
    if not _whole(record.get("id")):
        return "a queued message without a whole-number id"
    if record["type"] == "queued" and not isinstance(record.get("text"), str):
        return "a queued message without text"
    if record["type"] == "unqueued" and not isinstance(record.get("how"), str):
        return "an unqueued message without what became of it"
    return None


@dataclass
class Branch:
    id: str
    parent: str | None
    keep: int
    why: str | None
    created: float | None
    records: list[dict[str, Any]]
    used: int = 0  # the position in the file of its last record (the picker's order)

    def prompts(self) -> list[str]:
        """The user's messages on this branch, as typed."""
        return [
            str(r["visible"])
            for r in self.records
            if r.get("type") == "message"
            and r.get("role") == "user"
            and isinstance(r.get("visible"), str)
        ]


@dataclass
class Tree:
    """The branches of one file, built record by record as it is read or written."""

    branches: dict[str, Branch] = field(default_factory=dict)
    active: str = ROOT
    queued: dict[int, str] = field(default_factory=dict)  # waiting, by id, in order
    _seen: int = 0
    _last_queued: int = 0

    def __post_init__(self) -> None:
        if ROOT not in self.branches:
            self.branches[ROOT] = Branch(ROOT, None, 0, None, None, [])

    @classmethod
    def of(cls, records: list[dict[str, Any]]) -> Tree:
        tree = cls()
        for record in records:
            tree.add(record)
        return tree

    @property
    def records(self) -> list[dict[str, Any]]:
        """The active branch's records (the list itself: appending to it is adding)."""
        return self.branches[self.active].records

    def add(self, record: dict[str, Any]) -> None:
        """One record of the file, in order. A branch record naming an unknown parent or
        an id already taken (a damaged file) starts nothing; its records stay where they
        would have gone without it."""
        self._seen += 1
        kind = record.get("type")
        if kind == "branch" and check_branch(record) is None:
            bid = record["id"]
            if "parent" not in record:
                if bid in self.branches:
                    self.active = bid
                    self.branches[bid].used = self._seen
                return
            parent = self.branches.get(record["parent"])
            if parent is not None and bid not in self.branches:
                kept = parent.records[: record["keep"]]
                why = record.get("why")
                created = record.get("created")
                self.branches[bid] = Branch(
                    bid,
                    parent.id,
                    len(kept),
                    why if isinstance(why, str) else None,
                    float(created) if isinstance(created, int | float) else None,
                    [*kept, record],
                    self._seen,
                )
                self.active = bid
                return
        if kind == "queued" and check_queued(record) is None:
            self.queued[record["id"]] = record["text"]
            self._last_queued = max(self._last_queued, record["id"])
        elif kind == "unqueued" and check_queued(record) is None:
            self.queued.pop(record["id"], None)
        branch = self.branches[self.active]
        branch.records.append(record)
        branch.used = self._seen

    def next_id(self) -> str:
        numbers = [int(b) for b in self.branches if b.isdigit()]
        return str(max(numbers, default=0) + 1)

    def next_queued(self) -> int:
        """An id no queued record of the file has used (waiting or not)."""
        return self._last_queued + 1


def by_use(tree: Tree) -> list[Branch]:
    """The branches, the one last used first."""
    return sorted(tree.branches.values(), key=lambda b: b.used, reverse=True)
