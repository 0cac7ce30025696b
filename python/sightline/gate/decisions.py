"""The review gate: a worker thread asks, the user decides (accept or reject, with a reason)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sightline.domain.errors import Refused

DECISIONS = ("accept", "reject")


@dataclass
class Pending:
    id: int
    kind: str  # "edit" or "command"
    summary: str
    data: dict[str, Any]
    decision: str | None = None
    reason: str = ""
    done: threading.Event = field(default_factory=threading.Event)
    # An edit decided hunk by hunk: how many it has, and each one's (decision, note) so far.
    hunk_count: int = 0
    hunks: dict[int, tuple[str, str]] = field(default_factory=dict)
    by_hunk: bool = False  # some hunk was decided on its own (else it was decided as a whole)

    def hunk_decisions(self) -> list[str]:
        """Per hunk: "accept", "reject" or "" (undecided)."""
        return [self.hunks.get(i, ("", ""))[0] for i in range(self.hunk_count)]

    def _settle(self, decision: str, reason: str) -> None:
        """The undecided hunks take `decision`; the whole is accepted if any hunk is."""
        for i in range(self.hunk_count):
            self.hunks.setdefault(i, (decision, reason))
        taken = any(d == "accept" for d, _ in self.hunks.values())
        self.decision = "accept" if taken else "reject"
        self.reason = reason


class Gate:
    def __init__(self, on_change: Callable[[], None]):
        self._on_change = on_change
        self._lock = threading.Lock()
        self._pending: Pending | None = None
        self._ids = itertools.count(1)

    @property
    def pending(self) -> Pending | None:
        with self._lock:
            return self._pending

    def ask(self, kind: str, summary: str, data: dict[str, Any], hunks: int = 0) -> Pending:
        """Block the calling (worker) thread until the user decides or the turn ends.

        With `hunks`, the user may decide them one by one (decide_hunk); deciding the whole
        then decides the hunks still undecided.
        """
        item = Pending(next(self._ids), kind, summary, data, hunk_count=hunks)
        with self._lock:
            self._pending = item
        self._on_change()
        item.done.wait()
        with self._lock:
            if self._pending is item:
                self._pending = None
        self._on_change()
        return item

    def decide(self, decision: str, reason: str = "") -> Pending:
        if decision not in DECISIONS:
            raise Refused(f"decision must be one of: {', '.join(DECISIONS)} (got {decision!r})")
        with self._lock:
            item = self._pending
            if item is None:
                raise Refused("nothing is waiting for a decision")
            if item.hunk_count:
                item._settle(decision, reason)
            else:
                item.decision, item.reason = decision, reason
        item.done.set()
        return item

    def decide_hunk(
        self, proposal: int, hunk: int | None, decision: str, reason: str = ""
    ) -> list[str]:
        """Decide one hunk (or, with None, every undecided one) of the proposal that waits.

        When no hunk is left undecided the whole is decided: accepted if any hunk is. Returns
        the decisions so far, one per hunk ("" = undecided).
        """
        if decision not in DECISIONS:
            raise Refused(f"decision must be one of: {', '.join(DECISIONS)} (got {decision!r})")
        with self._lock:
            item = self._pending
            shown = item.data.get("proposal") if item else None
            if item is None or item.done.is_set() or getattr(shown, "id", None) != proposal:
                raise Refused("that proposal is no longer waiting for a decision")
            if not item.hunk_count:
                raise Refused("that proposal is decided as a whole (it has no hunks)")
            if hunk is not None and not 0 <= hunk < item.hunk_count:
                raise Refused(f"hunk must be 0..{item.hunk_count - 1} (got {hunk})")
            if hunk is None:
                item._settle(decision, reason)
            else:
                if hunk in item.hunks:
                    raise Refused(f"hunk {hunk + 1} is decided already")
                item.hunks[hunk] = (decision, reason)
                item.by_hunk = True
                if len(item.hunks) == item.hunk_count:
                    item._settle(decision, reason)
            decisions = item.hunk_decisions()
            finished = item.decision is not None
        if finished:
            item.done.set()
        return decisions

    def reject_all(self, reason: str) -> None:
        with self._lock:
            item = self._pending
        if item is not None and not item.done.is_set():
            item.decision, item.reason = "reject", reason
            item.done.set()
