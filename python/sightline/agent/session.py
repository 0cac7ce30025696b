"""A conversation and its turns, as the core drives them: send a message, compact, stop,
reset, reopen. The rooms behind it:

* agent/state.py       the state: provider, history, accounts, status; a turn's ends
* agent/turn.py        the running turn (its scope, cancellation, streamed text)
* agent/loop.py        the turn loop: stream a reply, run its tools, record both
* agent/compacting.py  compaction as it runs (what it asks: agent/compaction.py)
* agent/accounting.py  tokens, cost and the context window
* agent/replay.py      a reopened conversation shown again
* agent/steering.py    edit, regenerate, fork, and messages queued while a turn runs
* domain/narrator.py   every sentence the transcript says of its own
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from sightline.agent import checkpointing, compacting, compaction, loop, steering
from sightline.agent.replay import show_images
from sightline.agent.state import MODES, SessionState
from sightline.agent.turn import Turn
from sightline.domain.errors import Refused
from sightline.domain.scope import Selection
from sightline.providers import make_provider

__all__ = ["MODES", "Session", "Turn"]


class Session(SessionState):
    def send(
        self,
        text: str,
        *,
        extra_parts: list[str] | None = None,
        scope: Selection | None = None,
        note: str | None = None,
        chip: dict[str, Any] | None = None,
        late: Callable[[int], list[str]] | None = None,
        shown: str | None = None,
        images: list[dict[str, Any]] | None = None,
        edit_at: int | None = None,
        model: str | None = None,
    ) -> Turn:
        """Start a turn; returns once it is accepted (the worker runs on its own thread).
        `late` adds the parts that must wait on the worker (see Turn.late). With `edit_at`
        (a record index of the active branch: one of the user's messages), the message
        replaces that one on a new branch (steering.edit).
        `shown`: what the user typed when `text` is its expansion (a `/` prompt file); the
        transcript shows it with the expanded text folded under it, history keeps both.
        `model`: this turn alone runs on that model of the configured provider (a prompt
        file's front matter; the caller checked the provider offers it)."""
        with self._lock:
            if self.turn is not None:
                raise Refused("a turn is already running: wait for it or :Sightline stop")
            if not text.strip():
                raise Refused("nothing to send: the message is empty")
            conv = self._conversation()
            if conv.read_only:
                raise Refused("this conversation is open in another Neovim (read-only)")
            if edit_at is not None:
                steering.edit(self, edit_at)
            parts = [text, *(extra_parts or [])]
            content = [{"type": "text", "text": part} for part in parts]
            # Image references (domain/images.py): the bytes are kept once, by hash.
            content += images or []
            user: dict[str, Any] = {
                "type": "message",
                "role": "user",
                "content": content,
                "visible": text if shown is None else shown,
            }
            if shown is not None:
                user["expanded"] = text
            if note:  # display only: how the transcript labels the message when reopened
                user.update(note=note, chip=chip)
            self._turn_ids += 1
            turn = Turn(self._turn_ids, self, scope=scope, user=user, late=late)
            if model and model != self.provider.model:
                turn.provider = make_provider(dataclasses.replace(self.cfg.provider, model=model))
            checkpointing.begin(self, turn, text)
            self._begin(turn)
        self.transcript.add_user(
            user["visible"], note, chip, key=user, expanded=user.get("expanded")
        )
        show_images(self.transcript, images or [])
        self.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": scope is not None})
        self.start(turn)
        return turn

    def start(self, turn: Turn) -> None:
        """Run `turn` (made the running one already) on its worker thread."""
        # In the context of the request that started it: what the worker asks the core
        # (a note, a queued message) goes to this conversation's pane (core.py's _PANE).
        turn.thread = threading.Thread(
            target=contextvars.copy_context().run,
            args=(loop.run, self, turn),
            name=f"turn-{turn.id}",
            daemon=True,
        )
        turn.thread.start()

    def send_text(self, text: str) -> None:
        if self.dispatch is not None:
            self.dispatch(text)
        else:
            self.send(text)

    def finish(self, turn: Turn, status: str) -> None:
        super().finish(turn, status)
        steering.drain(self, status)

    def compact(self) -> Turn:
        """`:Sightline compact`: summarise the whole conversation so far, on a worker thread
        (a turn of its own: the bar says working, Stop ends it, nothing else is changed)."""
        with self._lock:
            if self.turn is not None:
                raise Refused("a turn is running: wait for it or :Sightline stop")
            conv = self.conversation
            if conv is None or not compaction.summarisable(conv.records):
                raise Refused("nothing to compact: the conversation has no earlier messages")
            if conv.read_only:
                raise Refused("this conversation is open in another Neovim (read-only)")
            self._turn_ids += 1
            turn = Turn(self._turn_ids, self)
            self._begin(turn)
        self.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": False})
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(compacting.run, self, turn),
            name=f"compact-{turn.id}",
            daemon=True,
        ).start()
        return turn
