"""Batched pushes to the Lua layer: transcript deltas, status and events, coalesced.

Streaming text arrives token by token; pushing each would flood Neovim's loop. Updates
are gathered and sent at most every FLUSH_S, in one call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sightline.editor.port import Editor
from sightline.ui.transcript import Transcript

FLUSH_S = 0.03
# How long a worker waits for its urgent update to be built (bounded: a busy loop thread
# only delays the worker's own reading, never the editor).
SHOW_WAIT_S = 0.05


class Ui:
    def __init__(
        self, editor: Editor, transcript: Transcript, status: Callable[[], dict[str, Any]]
    ):
        self._editor = editor
        self._transcript = transcript
        self._status = status
        self._lock = threading.Lock()
        self._events: list[dict[str, Any]] = []
        self._timer: threading.Timer | None = None

    def event(self, name: str, data: dict[str, Any] | None = None) -> None:
        with self._lock:
            self._events.append({"name": name, "data": data or {}})
        self.schedule()

    def schedule(self) -> None:
        with self._lock:
            if self._timer is not None:
                return
            self._timer = threading.Timer(FLUSH_S, self.flush)
            self._timer.daemon = True
            self._timer.start()

    def flush(self) -> None:
        """Send what is pending now (also called directly when order matters)."""
        events = self._take_events()
        self._editor.notify_ui(lambda: self._payload(events))

    def _take_events(self) -> list[dict[str, Any]]:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            events, self._events = self._events, []
        return events

    def show_now(self) -> None:
        """Flush, and wait (briefly) until the update is built: for a stream's first text.

        Called on a turn's worker, which would otherwise go on parsing the rest of the burst
        the network delivered with it and hold the GIL the loop thread needs to send this
        update (milliseconds under CPython's 5 ms switch interval). Never on the loop thread.
        """
        events = self._take_events()
        built = threading.Event()

        def build() -> dict[str, Any]:
            try:
                return self._payload(events)
            finally:
                built.set()

        self._editor.notify_ui(build)
        built.wait(SHOW_WAIT_S)

    def _payload(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        payload: dict[str, Any] = {}
        delta = self._transcript.take_delta()
        if delta is not None:
            payload["transcript"] = delta
            if self._transcript.pending():  # a long line: the rest with the next push
                self.schedule()
        # Always sent: request answers also update the Lua mirror, so a diff against what
        # this channel sent last would miss changes.
        payload["status"] = self._status()
        if events:
            payload["events"] = events
        return payload
