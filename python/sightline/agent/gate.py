"""The review gate: a worker thread asks, the user decides (accept or reject, with a reason)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sightline.errors import Refused

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

    def ask(self, kind: str, summary: str, data: dict[str, Any]) -> Pending:
        """Block the calling (worker) thread until the user decides or the turn ends."""
        item = Pending(next(self._ids), kind, summary, data)
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
            item.decision, item.reason = decision, reason
        item.done.set()
        return item

    def reject_all(self, reason: str) -> None:
        with self._lock:
            item = self._pending
        if item is not None and not item.done.is_set():
            item.decision, item.reason = "reject", reason
            item.done.set()
