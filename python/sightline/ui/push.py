"""Pushes to the Lua layer: transcript deltas, status and events, paced by Neovim.

Streaming text arrives token by token; pushing each would flood Neovim's loop, and holding
each for a fixed interval would delay what the user reads. So an update goes out at once
when Neovim has applied every push before it (and the last went out PACE_S ago or more),
and what arrives while one is still being applied waits for that one and then goes out in
one push. The pace is Neovim's own when it is busy; when it is not, PACE_S bounds how many
pushes a stream costs it (each one is parsed, applied and drawn), and no token waits longer
than that plus the time one push takes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from sightline.editor.port import Editor
from sightline.ui.transcript import Transcript

# Under a frame at 60 Hz (16.7 ms): a token reaches the buffer within a frame, and a reply
# streamed as fast as an API sends costs Neovim at most this many pushes a second (each is
# decoded, applied and drawn: about half of Neovim's CPU for a long reply; `make bench`).
PACE_S = 0.014
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
        self._composer: list[str] = []  # texts given back to the composer, not yet pushed
        self._slash = False  # the `/` commands changed: an open `/` menu asks again
        self._unapplied = 0  # pushes sent that Neovim has not applied yet
        self._pending = False  # something changed since the last push was built
        self._sent_at = float("-inf")  # time.monotonic() of the last push
        self._timer: threading.Timer | None = None  # the pace's wait, while one runs

    def event(self, name: str, data: dict[str, Any] | None = None) -> None:
        with self._lock:
            self._events.append({"name": name, "data": data or {}})
        self.schedule()

    def to_composer(self, texts: list[str]) -> None:
        """Put `texts` back into the composer (queued messages that were not sent)."""
        with self._lock:
            self._composer.extend(texts)
        self.schedule()

    def slash_changed(self) -> None:
        """The `/` commands changed (an ACP agent announced new ones): the composer's open
        `/` menu, or the one its text would show, asks again."""
        with self._lock:
            self._slash = True
        self.schedule()

    def schedule(self) -> None:
        """Send what changed: now when no push is being applied, else once it was."""
        with self._lock:
            self._pending = True
            if not self._due():
                return  # sent once the push in flight is applied, or the pace allows
        self.flush()

    def _due(self) -> bool:
        """Whether what is pending may go out now; if only the pace holds it, a timer sends
        it when the pace allows. Called with the lock held."""
        if self._unapplied or self._timer is not None or not self._pending:
            return False
        wait = self._sent_at + PACE_S - time.monotonic()
        if wait <= 0:
            return True
        timer = threading.Timer(wait, lambda: self._paced(timer))
        timer.daemon = True
        self._timer = timer
        timer.start()
        return False

    def _paced(self, timer: threading.Timer) -> None:
        with self._lock:
            if self._timer is not timer:
                return  # cancelled by a push that went out meanwhile
            self._timer = None
            if not self._due():
                return
        self.flush()

    def flush(self) -> None:
        """Send what is pending now (also called directly when order matters)."""
        self._send(self._take_events())

    def _take_events(self) -> list[dict[str, Any]]:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._unapplied += 1
            self._pending = False
            self._sent_at = time.monotonic()
            events, self._events = self._events, []
        return events

    def _send(self, events: list[dict[str, Any]], built: threading.Event | None = None) -> None:
        def build() -> dict[str, Any]:
            try:
                with self._lock:
                    # Built later than it was queued: what arrived in between goes with it.
                    self._pending = False
                    events.extend(self._events)
                    self._events.clear()
                return self._payload(events)
            finally:
                if built is not None:
                    built.set()

        self._editor.notify_ui(build, self._applied)

    def _applied(self) -> None:
        """Neovim applied a push (or could not): send what waited for it."""
        with self._lock:
            self._unapplied = max(0, self._unapplied - 1)
            if not self._due():
                return
        self.flush()

    def show_now(self) -> None:
        """Flush, and wait (briefly) until the update is built: for a stream's first text.

        Called on a turn's worker, which would otherwise go on parsing the rest of the burst
        the network delivered with it and hold the GIL the loop thread needs to send this
        update (milliseconds under CPython's 5 ms switch interval). Never on the loop thread.
        """
        built = threading.Event()
        self._send(self._take_events(), built)
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
        with self._lock:
            composer, self._composer = self._composer, []
            slash, self._slash = self._slash, False
        if composer:
            payload["composer"] = composer
        if slash:
            payload["slash"] = True
        return payload
