"""A fake editor whose notify_ui runs as Neovim's side does: queued, built later on the
loop's thread, applied when the test says so (tests/unit/test_first_text.py and
test_push_pacing.py)."""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

Build = Callable[[], dict[str, Any]]


class LoopEditor:
    """notify_ui as Neovim's side runs it: queued, built later on another thread, and
    applied (its `applied` called) when the test says so."""

    def __init__(self) -> None:
        self.queued: queue.Queue[tuple[Build, Callable[[], None] | None]] = queue.Queue()
        self.sent: list[dict[str, Any]] = []

    def notify_ui(self, build: Build, applied: Callable[[], None] | None = None) -> None:
        self.queued.put((build, applied))

    def run_one(self, apply: bool = True) -> Callable[[], None] | None:
        """Build and send the next update; Neovim applies it now unless `apply` is False
        (then the caller gets what applies it)."""
        build, applied = self.queued.get(timeout=5)
        self.sent.append(build())
        if apply and applied is not None:
            applied()
            return None
        return applied
