"""The running turn: its id, scope and cancellation, and what was streamed of it so far."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sightline.domain.scope import Selection
from sightline.editor.port import Editor
from sightline.gate import turn_contract as turn_view
from sightline.gate.checkpoint import TurnFiles
from sightline.gate.decisions import Gate

log = logging.getLogger(__name__)


@dataclass
class Turn:
    id: int
    # The session as the code below the agent sees it (gate/turn_contract.py): the agent's
    # own code is handed its Session itself, so a turn never needs more of it.
    session: turn_view.Session
    scope: Selection | None = None
    started: float = field(default_factory=time.monotonic)
    partial: str = ""
    # The user's message until it is recorded: by the worker once the key is known, or by
    # stop() if that comes first, so the history holds it before the stop.
    user: dict[str, Any] | None = None
    # Parts that need a worker thread (MCP resources): given the bytes the parts so far
    # hold, the parts to add after them.
    late: Callable[[int], list[str]] | None = None
    retry_row: int | None = None  # the transcript row saying a request is being retried
    # A regenerated reply: the turn sends the branch's history again, with no new message.
    regenerate: bool = False
    # Runs first on the worker (a regenerate waits there for the turn it replaced to end).
    prelude: Callable[[], None] | None = None
    # A provider of its own for this turn alone (a prompt file's `model`): the session's
    # `provider` is this one while the turn runs, and the configured one again after it.
    provider: Any = None
    thread: threading.Thread | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: TurnFiles = field(default_factory=TurnFiles)  # what it changed: its checkpoint
    _cancelled: threading.Event = field(default_factory=threading.Event)
    _on_cancel: list[Callable[[], None]] = field(default_factory=list)

    @property
    def workspace(self) -> str:
        return self.session.workspace

    @property
    def editor(self) -> Editor:
        return self.session.editor

    @property
    def gate(self) -> Gate:
        return self.session.gate

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run callback when the turn is stopped (kill a process, close a stream)."""
        self._on_cancel.append(callback)

    def cancel(self) -> None:
        self._cancelled.set()
        for callback in self._on_cancel:
            try:
                callback()
            except Exception:
                log.exception("cancel callback failed")


if TYPE_CHECKING:
    # The code below the agent sees a turn through gate/turn_contract.py's Protocols: mypy checks
    # here that the real one fits them.
    def _fits(turn: Turn) -> turn_view.Turn:
        return turn
