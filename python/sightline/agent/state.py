"""A conversation's state: its provider, history, accounts and status, and the ends of a
turn (finish, stop, reset, reopen). agent/session.py starts turns on top of it; the turn
loop (agent/loop.py) and compaction (agent/compacting.py) run them."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from sightline.agent.accounting import Accounts
from sightline.agent.replay import render_records
from sightline.agent.turn import Turn
from sightline.domain import checkpoints, history, narrator, paths
from sightline.domain.config import CoreConfig
from sightline.domain.errors import Refused
from sightline.domain.skills import Skill
from sightline.domain.wire import ABANDONED, cut_off, unanswered
from sightline.editor.port import Editor
from sightline.gate.approvals import Approvals
from sightline.gate.decisions import Gate
from sightline.gate.policy import Kind
from sightline.providers import make_provider
from sightline.providers.base import Provider, Reply
from sightline.tools.base import Tool
from sightline.ui.chips import reference_finder
from sightline.ui.push import Ui
from sightline.ui.transcript import Transcript

MODES = ("normal", "plan")


class SessionState:
    def __init__(
        self,
        editor: Editor,
        cfg: CoreConfig,
        workspace: str,
        registry: list[Tool],
        history_dir: Path | None = None,
    ):
        self.editor = editor
        self.cfg = cfg
        self.workspace = workspace
        self.registry = registry
        self.history_dir = history_dir or paths.history_dir()
        # Checkpoints live with the conversations (domain/checkpoints.py).
        self.checkpoints = checkpoints.Store(self.history_dir / "checkpoints")
        self.mode = "normal"
        # The pane that shows this conversation (core.py's registry); a status names it when
        # it is not the first one, so the Lua side draws it in that pane.
        self.pane = 1
        self.autoaccept = cfg.autoaccept
        self.transcript = Transcript(finder=reference_finder(workspace))
        self.ui = Ui(editor, self.transcript, self.status)
        self.gate = Gate(self.ui.schedule)
        self.approvals = Approvals(paths.approvals_dir())
        self.conversation: history.Conversation | None = None
        self.turn: Turn | None = None
        self.plan: list[dict[str, Any]] = []
        self.accounts = Accounts(
            lambda: self.cfg.provider,
            lambda: self.provider.model,
            lambda: self.provider.capabilities.local,
            lambda: self.provider.capabilities.subscription,
        )
        self._provider: Provider | None = None
        self._turn_ids = 0
        self.draining = False  # a queued message is being sent as the turn before it ended
        self._steer: set[int] = set()  # queued messages to deliver at the next tool boundary
        self._status_seq = itertools.count(1)  # lets the Lua mirror drop out-of-order statuses
        self._lock = threading.RLock()
        # Tools and mention parts from outside the registry (the MCP client; Core sets them).
        # Asked on the turn's worker thread, the one place that may wait on a server.
        self.extra_tools: Callable[[str, frozenset[Kind]], list[Tool]] = lambda ws, kinds: []
        # How a queued message is sent when the turn ends (Core sets it: the same path as
        # the composer's, mentions included); None: Session.send with the text alone.
        self.dispatch: Callable[[str], Any] | None = None
        # The skills the model may load (domain/skills.py: Core sets where they are read).
        self.skills: Callable[[], list[Skill]] = lambda: []

    # -- the provider -------------------------------------------------------------------------

    @property
    def provider(self) -> Provider:
        """The configured provider, made on first use (and again after drop_provider); the
        running turn's own while it runs on a model of its own (`Session.send(model=)`)."""
        turn = self.turn
        if turn is not None and turn.provider is not None:
            return cast(Provider, turn.provider)
        if self._provider is None:
            self._provider = make_provider(self.cfg.provider)
        return self._provider

    def drop_provider(self) -> None:
        """Forget the provider (a new config or model): the next use makes one from `cfg`.
        One that holds a process (an ACP agent) is closed, so the process ends with it."""
        old, self._provider = self._provider, None
        close = getattr(old, "close", None)
        if callable(close):
            close()

    # -- status -------------------------------------------------------------------------------

    def state(self) -> str:
        if self.turn is None:
            return "working" if self.draining else "idle"
        return "awaiting_decision" if self.gate.pending else "working"

    def status(self) -> dict[str, Any]:
        pending = self.gate.pending
        turn = self.turn
        out: dict[str, Any] = {
            "seq": next(self._status_seq),
            "state": self.state(),
            "provider": self.cfg.provider.name,
            "model": self._model_name(),
            # What the model can do (providers/base.py Capabilities): the pane offers no more.
            "capabilities": self.provider.capabilities.to_dict(),
            "agent_mode": getattr(self.provider, "agent_mode", None),  # an ACP agent's own
            "agent_options": getattr(self.provider, "agent_options", None),  # its model, ...
            "mode": self.mode,
            "autoaccept": self.autoaccept,
            "workspace": self.workspace,
            "scope": turn.scope.flat() if turn and turn.scope else None,
            "pending": self.gate.summary(),  # `1 of 3: …` when more wait behind it
            "pending_kind": pending.kind if pending else None,
            # The scopes the question shown can be kept for (`always`, `conversation`).
            "pending_scopes": list(pending.data.get("remember", ())) if pending else [],
            "conversation": self.conversation.id if self.conversation else None,
            "conversation_path": str(self.conversation.path) if self.conversation else None,
            "read_only": bool(self.conversation and self.conversation.read_only),
            "queued": self.queued(),
            "branch": self.conversation.branch if self.conversation else None,
            **self.accounts.usage(),
        }
        if self.pane != 1:
            out["pane"] = self.pane
        return out

    def _model_name(self) -> str:
        """The model the bar names: an ACP agent's own name (its `agent_name`) where the
        provider has one, else the provider's model."""
        provider = self.provider
        named = getattr(provider, "agent_name", None)
        return named if isinstance(named, str) else provider.model

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise Refused(f"mode must be one of: {', '.join(MODES)} (got {mode!r})")
        self.mode = mode
        self.ui.schedule()

    # -- history ------------------------------------------------------------------------------

    def _conversation(self) -> history.Conversation:
        if self.conversation is None:
            self.conversation = history.Conversation.create(
                self.history_dir,
                self.workspace,
                provider=self.cfg.provider.name,
                model=self.provider.model,
            )
        return self.conversation

    def record(self, record: dict[str, Any]) -> None:
        self._conversation().append(record)

    def account(self, usage: dict[str, int]) -> None:
        self.accounts.account(
            Reply(
                input_tokens=usage.get("input", 0),
                output_tokens=usage.get("output", 0),
                cache_read_tokens=usage.get("cache_read", 0),
                cache_write_tokens=usage.get("cache_write", 0),
            )
        )

    def answer_unrun(self, calls: list[dict[str, Any]], why: str) -> None:
        results = [
            {"type": "tool_result", "tool_use_id": c.get("id"), "content": why, "is_error": True}
            for c in calls
        ]
        self.record({"type": "message", "role": "user", "content": results})

    def _answer_dangling(self, why: str) -> bool:
        """Record an answer for every tool_use the history leaves unanswered, so the file
        says what the next request sends (wire.py would answer them anyway); False when
        none was left."""
        if self.conversation is None or self.conversation.read_only:
            return False
        calls = unanswered(self.conversation.records)
        if calls:
            self.answer_unrun(calls, why if why.startswith("not ") else f"not completed: {why}")
        return bool(calls)

    # -- starting turns (agent/session.py) ----------------------------------------------------

    def start(self, turn: Turn) -> None:
        """Run `turn`, made the running one already, on its worker thread."""
        raise NotImplementedError

    def send_text(self, text: str) -> None:
        """Send a message as the composer does (a queued one, when the turn ends)."""
        raise NotImplementedError

    # -- the ends of a turn -------------------------------------------------------------------

    def _begin(self, turn: Turn) -> None:
        """Make `turn` the running one (the caller holds the lock and checked none runs)."""
        self.turn = turn
        self.accounts.new_turn()

    def finish(self, turn: Turn, status: str) -> None:
        """The worker's end of a turn (unless stop() or reset() ended it first)."""
        with self._lock:
            if self.turn is not turn:
                return  # already finished by stop()/reset()
            # The transcript is complete before the state says idle: a push in between must
            # never show an idle turn with its last lines missing.
            self.transcript.end_reply()
            if status in ("done", "limit"):
                seconds = time.monotonic() - turn.started
                self.transcript.add_note(*self.accounts.footer(seconds))
                # Recorded, so a reopened conversation shows it again (and says the turn
                # ended: see wire.cut_off).
                self.record(self.accounts.footer_record(seconds))
            self.turn = None
        self.ui.event("SightlineTurnEnd", {"turn": turn.id, "status": status})
        self.ui.flush()

    # -- queued messages (typed while a turn ran; domain/branches.py) --------------------------

    def queued(self) -> list[dict[str, Any]]:
        """The messages waiting for the turn to end, oldest first (status().queued)."""
        conv = self.conversation
        if conv is None:
            return []
        return [
            {"id": qid, "text": text, "steer": qid in self._steer}
            # A copy first (one C call): a worker may take one meanwhile.
            for qid, text in list(conv.tree.queued.items())
        ]

    def give_back_queued(self) -> None:
        """Every queued message back into the composer (a stop, a failed turn, a reopen):
        recorded as given back, so nothing typed is lost and nothing is sent twice."""
        conv = self.conversation
        if conv is None or not conv.tree.queued:
            return
        texts = list(conv.tree.queued.values())
        if not conv.read_only:
            for qid in list(conv.tree.queued):
                conv.unqueue(qid, "returned")
        else:
            conv.tree.queued.clear()
        self._steer.clear()
        self.ui.to_composer(texts)
        self.ui.flush()  # at once: recorded as given back, it must reach the composer

    def keep_unsent(self) -> None:
        """The core is ending (Neovim quit) while a turn still holds its message unrecorded
        (its credentials or MCP resources were being fetched): kept as "queued, not sent", so
        the next Neovim puts it back into the composer. Touches nothing but the history: the
        editor is gone by now."""
        turn = self.turn
        if turn is None:
            return
        with turn.lock:
            user, turn.user = turn.user, None
        conv = self.conversation
        if user is None or conv is None or conv.read_only:
            return
        conv.queue(str(user.get("visible") or ""))

    def stop(self, why: str = "stopped by the user", *, quiet: bool = False) -> bool:
        """End the turn at once: later output is discarded, pending decisions rejected.
        `quiet` (a regenerate replaces the turn): nothing is said in the transcript, which
        is rebuilt from the new branch, and queued messages stay queued."""
        with self._lock:
            turn = self.turn
            if turn is None:
                return False
            self.turn = None
            # Cancelled before another fork can start (an edit once this lock is free): the
            # worker then builds no further request from a branch that is not its own.
            turn.cancel()
        with turn.lock:
            partial = turn.partial
            user, turn.user = turn.user, None
        (turn.provider or self.provider).cancel()  # (no longer the running turn's: its own)
        self.accounts.charge_live()  # what the stopped reply used is still paid for
        self.gate.reject_all(why)
        if user is not None:
            self.record(user)
        if partial:
            self.record(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": partial}],
                }
            )
        self._answer_dangling(why)
        self.record({"type": "event", "event": "stopped"})
        self.transcript.end_reply()
        if not quiet:
            self.transcript.add_note(*narrator.stopped())
            self.give_back_queued()
        self.ui.event("SightlineTurnEnd", {"turn": turn.id, "status": "stopped"})
        self.ui.flush()
        return True

    def reset(self) -> None:
        self.stop("the conversation was reset")
        if self.conversation is not None:
            self.conversation.close()
        self.conversation = None
        self.plan = []
        self.accounts.reset()
        self.transcript.clear()
        self.ui.flush()

    def open(self, path: Path | str) -> None:
        """Reopen a conversation from history; it continues where it ended.

        Only files of the history store are opened (opening appends to the file); a call the
        previous core never finished (it was restarted, killed or Neovim quit while a
        decision waited) is answered as not completed, and records of a wrong shape are
        skipped and named once in the transcript."""
        if self.turn is not None:
            raise Refused("a turn is running: stop it before opening another conversation")
        try:
            found = history.store_path(self.history_dir, str(path))
            conv = history.Conversation.load(found)
        except ValueError as err:
            raise Refused(f"sightline: {err}") from None
        if self.conversation is not None:
            self.conversation.close()
        self.conversation = conv
        # However the previous core ended while a turn ran, the history says so: each call
        # it left waiting is answered, or else a prompt left without its reply is marked
        # interrupted (the next request then keeps it apart from the next prompt).
        if not self._answer_dangling(ABANDONED) and not conv.read_only and cut_off(conv.records):
            self.record({"type": "event", "event": "interrupted"})
        self.show_branch()
        if conv.skipped:
            self.transcript.add_note(*narrator.damaged(conv.skipped))
        # Typed while a turn ran that never ended here: back into the composer.
        self.give_back_queued()
        self.ui.flush()

    def show_branch(self) -> None:
        """The transcript, accounts and plan of the active branch, rebuilt from its records
        (a reopen, an edit, a regenerate, a switch of branch)."""
        conv = self.conversation
        assert conv is not None
        self.transcript.clear()
        render_records(self.transcript, conv.records)
        # Spent is spent: the totals count every branch; the context is this branch's.
        self.accounts.replay(conv.log, conv.records)
        plans = [r for r in conv.records if r.get("type") == "plan"]
        self.plan = list(plans[-1]["steps"]) if plans else []
