"""The review gate: a worker thread asks, the user decides (accept or reject, with a reason)."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sightline.domain.errors import Refused

DECISIONS = ("accept", "reject")
# A reason that is one of these words keeps the decision (gate/approvals.py): the question
# offers them in data["remember"] (with data["remember_why"] saying why it offers none).
SCOPES = ("conversation", "always")


def scope_of(reason: str) -> str:
    """The scope a decision's reason names: `always`, `conversation`, or `once`."""
    word = reason.strip().lower()
    return word if word in SCOPES else "once"


@dataclass
class Pending:
    id: int
    kind: str  # "edit" or "command"
    summary: str
    data: dict[str, Any]
    decision: str | None = None
    reason: str = ""
    scope: str = "once"  # "conversation" or "always": the decision is to be kept
    done: threading.Event = field(default_factory=threading.Event)
    # An edit decided hunk by hunk: how many it has, and each one's (decision, note) so far.
    hunk_count: int = 0
    hunks: dict[int, tuple[str, str]] = field(default_factory=dict)
    by_hunk: bool = False  # some hunk was decided on its own (else it was decided as a whole)

    def hunk_decisions(self) -> list[str]:
        """Per hunk: "accept", "reject" or "" (undecided)."""
        return [self.hunks.get(i, ("", ""))[0] for i in range(self.hunk_count)]

    def _settle(self, decision: str, reason: str) -> None:
        """The whole decided: without hunks as given; with hunks, the undecided ones take
        `decision` and the whole is accepted if any hunk is."""
        if not self.hunk_count:
            self.decision, self.reason = decision, reason
            return
        for i in range(self.hunk_count):
            self.hunks.setdefault(i, (decision, reason))
        taken = any(d == "accept" for d, _ in self.hunks.values())
        self.decision = "accept" if taken else "reject"
        self.reason = reason


class Gate:
    """The questions that wait for the user, in the order they were asked.

    Several may wait at once (an ACP agent sends requests concurrently): the first is the
    one shown and decided; the others wait their turn behind it. Every question asked is
    answered exactly once: by the user, by a decision that covers it (`decide_where`), or
    by `reject_all` when the turn ends.
    """

    def __init__(self, on_change: Callable[[], None]):
        self._on_change = on_change
        self._lock = threading.Lock()
        self._turns = threading.Condition(self._lock)  # notified when the head changes
        self._queue: list[Pending] = []
        self._ids = itertools.count(1)
        # Places in line, taken as requests arrive (place()); a question asked on a thread
        # that holds one is queued only after those taken before it (or given up).
        self._places = itertools.count()
        self._low = 0  # every place below this one has been queued or given up
        self._passed: set[int] = set()
        self._local = threading.local()

    def place(self) -> int:
        """A place in line for a request that may ask, taken where requests arrive in order
        (an ACP agent's, on the event loop); the thread that handles it holds it (in_line)."""
        with self._lock:
            return next(self._places)

    @contextlib.contextmanager
    def in_line(self, place: int) -> Iterator[None]:
        """While the calling thread handles the request that took `place`: what it asks is
        queued in the order the requests arrived. The place is given up at the end."""
        self._local.place = place
        try:
            yield
        finally:
            self._local.place = None
            self._pass(place)

    def _pass(self, place: int) -> None:
        with self._turns:
            self._passed.add(place)
            while self._low in self._passed:
                self._passed.discard(self._low)
                self._low += 1
            self._turns.notify_all()

    def _undecided(self) -> list[Pending]:
        return [i for i in self._queue if i.decision is None]

    @property
    def pending(self) -> Pending | None:
        """The question shown now: the first one asked that is not decided yet, or None."""
        with self._lock:
            return next(iter(self._undecided()), None)

    def summary(self) -> str | None:
        """The bar's line: what is shown, and `1 of N` when more wait behind it."""
        with self._lock:
            waiting = self._undecided()
        if not waiting:
            return None
        head = waiting[0].summary
        return head if len(waiting) == 1 else f"1 of {len(waiting)}: {head}"

    def ask(
        self,
        kind: str,
        summary: str,
        data: dict[str, Any],
        hunks: int = 0,
        *,
        cancelled: Callable[[], bool] | None = None,
        shown: Callable[[Pending], None] | None = None,
    ) -> Pending:
        """Block the calling (worker) thread until the user decides or the turn ends.

        With `hunks`, the user may decide them one by one (decide_hunk); deciding the whole
        then decides the hunks still undecided. `shown` runs (on this thread) when the
        question comes first in line, before anyone can decide it hunk by hunk; with
        `cancelled`, a question asked as the turn is stopped is rejected at once (the stop's
        reject_all may have run before it was queued).
        """
        item = Pending(next(self._ids), kind, summary, data, hunk_count=0 if shown else hunks)
        place: int | None = getattr(self._local, "place", None)
        with self._turns:
            if place is not None:
                # Requests that arrived earlier are queued first (a bounded wait: each one
                # is queued or given up as soon as its thread gets there).
                while self._low < place and not (cancelled and cancelled()):
                    self._turns.wait(0.1)
            self._queue.append(item)
        if place is not None:
            self._pass(place)
        self._on_change()
        try:
            if cancelled is not None and cancelled():
                self._answer(item, "reject", "the turn was stopped")
            if shown is not None:
                with self._turns:
                    self._turns.wait_for(lambda: item.done.is_set() or self._queue[0] is item)
                if not item.done.is_set():
                    shown(item)
            item.done.wait()
        finally:
            # However this ends (showing it failed), it leaves the line: the questions
            # behind it must still be shown, and each one answered.
            self._answer(item, "reject", "it could not be shown")
            with self._turns:
                self._queue.remove(item)
                self._turns.notify_all()
            self._on_change()
        return item

    def show_hunks(self, item: Pending, hunks: int, draw: Callable[[], bool]) -> None:
        """Draw the question's `hunks`, each decidable on its own; `draw` says whether they
        were drawn (not drawn, the question is decided as a whole). They are decidable from
        before the drawing: a key typed as soon as it shows can reach the gate before `draw`
        has returned here."""
        with self._lock:
            if item.done.is_set():
                return
            item.hunk_count = hunks
        drawn = False
        try:
            drawn = draw()
        finally:
            if not drawn:
                with self._lock:
                    if not item.hunks:
                        item.hunk_count = 0

    def _answer(self, item: Pending, decision: str, reason: str, scope: str = "once") -> bool:
        with self._lock:
            if item.done.is_set() or item.decision is not None:
                return False
            item._settle(decision, reason)
            item.scope = scope
        item.done.set()
        return True

    def decide(self, decision: str, reason: str = "") -> Pending:
        if decision not in DECISIONS:
            raise Refused(f"decision must be one of: {', '.join(DECISIONS)} (got {decision!r})")
        scope = scope_of(reason)
        with self._lock:
            item = next(iter(self._undecided()), None)
            if item is None:
                raise Refused("nothing is waiting for a decision")
            if scope != "once":
                offered = item.data.get("remember", ())
                if scope not in offered:
                    why = item.data.get("remember_why") or "only a command or a tool is kept"
                    raise Refused(
                        f"this cannot be kept ({why}): decide it once "
                        f"(:Sightline {decision} with no {scope})"
                    )
                item.scope, reason = scope, ""
            item._settle(decision, reason)
        item.done.set()
        return item

    def decide_where(
        self,
        covered: Callable[[Pending], bool],
        decision: str,
        reason: str = "",
        scope: str = "once",
    ) -> int:
        """Decide every waiting question `covered` says a decision already made covers (an
        "always" given to one of them, whose `scope` they take); returns how many."""
        with self._lock:
            items = [i for i in self._queue if i.decision is None and covered(i)]
        return sum(self._answer(i, decision, reason, scope) for i in items)

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
            item = next(iter(self._undecided()), None)
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
        """Reject every question that waits (a stop, a crash, the end of the turn)."""
        with self._lock:
            items = list(self._queue)
        for item in items:
            self._answer(item, "reject", reason)
