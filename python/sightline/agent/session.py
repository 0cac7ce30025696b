"""A conversation and its turns: the loop that streams a reply, runs tools and records history."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.agent import compaction
from sightline.agent.prompt import load_rules, rules_note, system_prompt
from sightline.domain import history, paths, pricing
from sightline.domain.config import CoreConfig
from sightline.domain.errors import Refused
from sightline.domain.plan import checklist
from sightline.domain.presets import preset
from sightline.domain.scope import Selection
from sightline.domain.wire import ABANDONED, clean_text, is_compaction, unanswered, wire_messages
from sightline.editor.port import Editor
from sightline.gate import turn as turn_view
from sightline.gate.decisions import Gate
from sightline.gate.policy import Kind, allowed_kinds
from sightline.gate.turn import ToolResult
from sightline.providers import make_provider
from sightline.providers.base import (
    Notice,
    Provider,
    ProviderError,
    Reply,
    Request,
    Retrying,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from sightline.tools.base import Tool, call_label, tools_for
from sightline.ui.chips import reference_finder
from sightline.ui.push import Ui
from sightline.ui.transcript import Transcript

log = logging.getLogger(__name__)

MODES = ("normal", "plan")


@dataclass
class Turn:
    id: int
    session: Session
    scope: Selection | None = None
    started: float = field(default_factory=time.monotonic)
    partial: str = ""
    # The user's message until it is recorded: by the worker once the key is known, or by
    # stop() if that comes first, so the history holds it before the stop.
    user: dict[str, Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
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


class Session:
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
        self.mode = "normal"
        self.autoaccept = cfg.autoaccept
        self.transcript = Transcript(finder=reference_finder(workspace))
        self.ui = Ui(editor, self.transcript, self.status)
        self.gate = Gate(self.ui.schedule)
        self.conversation: history.Conversation | None = None
        self.turn: Turn | None = None
        self.plan: list[dict[str, Any]] = []
        self._reset_tokens()
        self._provider: Provider | None = None
        self._turn_ids = 0
        self._status_seq = itertools.count(1)  # lets the Lua mirror drop out-of-order statuses
        self._lock = threading.RLock()
        # Tools and mention parts from outside the registry (the MCP client; Core sets them).
        # Asked on the turn's worker thread, the one place that may wait on a server.
        self.extra_tools: Callable[[str, frozenset[Kind]], list[Tool]] = lambda ws, kinds: []
        self.late_parts: Callable[[str, str, int], list[str]] = lambda ws, text, used: []

    # -- status -------------------------------------------------------------------------------

    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = make_provider(self.cfg.provider)
        return self._provider

    # -- tokens and cost ----------------------------------------------------------------------

    def _reset_tokens(self) -> None:
        self.tokens = pricing.Tokens()  # finished replies of this conversation
        self.turn_tokens = pricing.Tokens()  # those of the current (or last) turn
        self.live = pricing.Tokens()  # the reply streaming now, as far as the API said
        self.spent: float | None = 0.0  # dollars of `tokens`; None once a price was unknown
        self.turn_spent: float | None = 0.0
        # The whole input plus output of the last reply: what the next request holds at least
        # (0 after a compaction, until the next reply says).
        self.last_context = 0

    def _price(self) -> pricing.Price | None:
        cfg = self.cfg.provider
        found = preset(cfg.name)
        if found is not None and found.local:
            return {}  # a local server: free
        return pricing.price_of(self.provider.model, cfg.prices)

    def _cost(self, tokens: pricing.Tokens) -> float | None:
        price = self._price()
        return None if price is None else pricing.cost(tokens, price)

    def _account(self, reply: Reply) -> None:
        used = _tokens(reply.usage())
        cost = self._cost(used)
        self.tokens += used
        self.turn_tokens += used
        self.live = pricing.Tokens()
        self.spent = _plus(self.spent, cost)
        self.turn_spent = _plus(self.turn_spent, cost)

    def context_window(self) -> int:
        found = preset(self.cfg.provider.name)
        return pricing.context_window(
            self.provider.model,
            local=bool(found and found.local),
            configured=self.cfg.provider.context_window,
        )

    def usage(self) -> dict[str, Any]:
        """status().tokens and status().cost: per conversation and per turn, live."""
        live = self.live
        live_cost = self._cost(live) if live != pricing.Tokens() else 0.0
        total, turn = _plus(self.spent, live_cost), _plus(self.turn_spent, live_cost)
        tokens: dict[str, Any] = (self.tokens + live).to_dict()
        tokens["turn"] = (self.turn_tokens + live).to_dict()
        return {
            "tokens": tokens,
            "cost": None if total is None else {"total": total, "turn": turn or 0.0},
            "usage_line": usage_line(self.tokens + live, total),
        }

    def state(self) -> str:
        if self.turn is None:
            return "idle"
        return "awaiting_decision" if self.gate.pending else "working"

    def status(self) -> dict[str, Any]:
        pending = self.gate.pending
        turn = self.turn
        return {
            "seq": next(self._status_seq),
            "state": self.state(),
            "provider": self.cfg.provider.name,
            "model": _model_label(self.cfg)
            if self.cfg.provider.name == "acp"
            else self.provider.model,
            "mode": self.mode,
            "autoaccept": self.autoaccept,
            "workspace": self.workspace,
            "scope": turn.scope.flat() if turn and turn.scope else None,
            "pending": self.gate.summary(),  # `1 of 3: …` when more wait behind it
            "pending_kind": pending.kind if pending else None,
            "conversation": self.conversation.id if self.conversation else None,
            "conversation_path": str(self.conversation.path) if self.conversation else None,
            "read_only": bool(self.conversation and self.conversation.read_only),
            **self.usage(),
            "turn_tokens": self._turn_tokens(turn),
        }

    def _turn_tokens(self, turn: Turn | None) -> dict[str, int] | None:
        """Tokens of the running turn (the bar's live count): its finished rounds plus the
        reply streaming now."""
        if turn is None:
            return None
        tokens = self.turn_tokens + self.live
        return {"input": tokens.input + tokens.cache_write, "output": tokens.output}

    # -- conversation ---------------------------------------------------------------------------

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

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise Refused(f"mode must be one of: {', '.join(MODES)} (got {mode!r})")
        self.mode = mode
        self.ui.schedule()

    # -- turns --------------------------------------------------------------------------

    def send(
        self,
        text: str,
        *,
        extra_parts: list[str] | None = None,
        scope: Selection | None = None,
        note: str | None = None,
        chip: dict[str, Any] | None = None,
    ) -> Turn:
        """Start a turn; returns once it is accepted (the worker runs on its own thread)."""
        with self._lock:
            if self.turn is not None:
                raise Refused("a turn is already running: wait for it or :Sightline stop")
            if not text.strip():
                raise Refused("nothing to send: the message is empty")
            conv = self._conversation()
            if conv.read_only:
                raise Refused("this conversation is open in another Neovim (read-only)")
            parts = [text, *(extra_parts or [])]
            content = [{"type": "text", "text": part} for part in parts]
            user: dict[str, Any] = {
                "type": "message",
                "role": "user",
                "content": content,
                "visible": text,
            }
            if note:  # display only: how the transcript labels the message when reopened
                user.update(note=note, chip=chip)
            self._turn_ids += 1
            turn = Turn(self._turn_ids, self, scope=scope, user=user)
            self.turn = turn
            self.turn_tokens, self.turn_spent, self.live = pricing.Tokens(), 0.0, pricing.Tokens()
        self.transcript.add_user(text, note, chip)
        self.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": scope is not None})
        threading.Thread(
            target=self._run, args=(turn,), name=f"turn-{turn.id}", daemon=True
        ).start()
        return turn

    def _tools(self, turn: Turn, mode: str | None = None) -> list[Tool]:
        mode = self.mode if mode is None else mode
        scoped = turn.scope is not None
        extra = self.extra_tools(self.workspace, allowed_kinds(mode, scoped))
        return tools_for([*self.registry, *extra], mode, scoped)

    def _run(self, turn: Turn) -> None:
        status = "done"
        try:
            try:
                # Credentials first (api_key_cmd): the key must be known to the redactor
                # before the user's message is written to history.
                self.provider.prepare()
                pending = turn.user
                if pending is not None:
                    # Parts that need a worker thread (MCP resources), after the typed text.
                    content = pending["content"]
                    used = sum(_utf8_len(str(b.get("text", ""))) for b in content[1:])
                    late = self.late_parts(self.workspace, pending["visible"], used)
                    with turn.lock:
                        content.extend({"type": "text", "text": part} for part in late)
            finally:
                with turn.lock:
                    user, turn.user = turn.user, None
                    if user is not None:
                        self.record(user)
            if turn.cancelled() or user is None:
                return  # stopped while the key was fetched: nothing is sent
            # The seam for providers that run whole turns (providers/base.py TurnRunner).
            run_turn = getattr(self.provider, "run_turn", None)
            status = run_turn(turn, user) if callable(run_turn) else self._loop(turn)
        except ProviderError as err:
            status = "error"
            if not turn.cancelled():
                self.transcript.add_note("✗ " + err.message, "SightlineError")
                self.record({"type": "event", "event": "error", "text": err.message})
        except Exception as err:
            status = "error"
            log.error("turn %d failed:\n%s", turn.id, traceback.format_exc())
            if not turn.cancelled():
                text = f"✗ internal error: {type(err).__name__}: {err} (details in the log)"
                self.transcript.add_note(text, "SightlineError")
        finally:
            self._finish(turn, status)

    def _loop(self, turn: Turn) -> str:
        mode = self.mode
        # Read once per turn: the system prompt stays the same for every request of the turn
        # (the prompt cache serves it).
        rules = load_rules(self.workspace) if self.cfg.rules else []
        if rules:
            self.transcript.add_note(rules_note(rules))
            self.ui.schedule()
        system = system_prompt(self.workspace, mode, turn.scope is not None, rules)
        for iteration in range(self.cfg.max_iterations + 1):
            # Each request asks again: an MCP server that died since is left out.
            tools = self._tools(turn, mode)
            by_name = {tool.name: tool for tool in tools}
            assert self.conversation is not None
            if self.last_context >= compaction.TRIGGER * self.context_window():
                self._auto_compact(turn)
                if turn.cancelled():
                    return "stopped"
            request = Request(
                # The workspace path may hold bytes that are not UTF-8 (surrogate escapes).
                system=clean_text(system),
                messages=wire_messages(self.conversation.records),
                tools=[tool.spec() for tool in tools],
            )
            reply = self._stream(turn, request)
            if reply is None:
                return "stopped"
            with turn.lock:
                if turn.cancelled():
                    return "stopped"
                turn.partial = ""
                if reply.content:
                    self.record(
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": reply.content,
                            "stop_reason": reply.stop_reason,
                            "usage": {
                                "input": reply.input_tokens,
                                "output": reply.output_tokens,
                                "cache_read": reply.cache_read_tokens,
                                "cache_write": reply.cache_write_tokens,
                            },
                        }
                    )
            self._account(reply)
            self.last_context = _context_of(reply)
            if reply.stop_reason == "max_tokens":
                self.transcript.add_note(
                    "The reply stopped at provider.max_tokens "
                    f"({self.cfg.provider.max_tokens} tokens).",
                    "SightlineWarning",
                )
            calls = [b for b in reply.content if b.get("type") == "tool_use"]
            if not calls:
                return "done"
            if iteration == self.cfg.max_iterations:
                self._answer_unrun(calls, "not run: the turn reached tools.max_iterations")
                self.transcript.add_note(
                    f"Stopped after {self.cfg.max_iterations} tool rounds (tools.max_iterations).",
                    "SightlineWarning",
                )
                return "limit"
            results = self._run_calls(turn, by_name, calls)
            with turn.lock:
                if turn.cancelled():
                    return "stopped"
                self.record({"type": "message", "role": "user", "content": results})
        return "done"

    def _stream(self, turn: Turn, request: Request) -> Reply | None:
        reply: Reply | None = None
        first = True
        for event in self.provider.stream(request, turn.cancelled):
            if turn.cancelled():
                return None
            if isinstance(event, TextDelta):
                with turn.lock:
                    if turn.cancelled():
                        return None
                    turn.partial += event.text
                    self.transcript.append_text(event.text)
                if first:  # the first text shows at once; the rest is batched
                    first = False
                    self.ui.show_now()
                else:
                    self.ui.schedule()
            elif isinstance(event, ThinkingDelta):
                with turn.lock:
                    if turn.cancelled():
                        return None
                    self.transcript.append_thinking(event.text)
                if first:
                    first = False
                    self.ui.show_now()
                else:
                    self.ui.schedule()
            elif isinstance(event, Usage):
                self.live = _tokens(event)
                self.ui.schedule()
            elif isinstance(event, Notice):
                self.transcript.add_note(event.text, "SightlineWarning")
                self.ui.schedule()
            elif isinstance(event, Retrying):
                self.transcript.add_note(
                    f"↻ {event.reason} Retrying in {event.delay_s:g} s "
                    f"(retry {event.attempt} of {event.of}).",
                    "SightlineWarning",
                )
                self.ui.schedule()
            else:
                reply = event
        return None if turn.cancelled() else reply

    # -- compaction ---------------------------------------------------------------------

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
            self.turn = turn
            self.turn_tokens, self.turn_spent, self.live = pricing.Tokens(), 0.0, pricing.Tokens()
        self.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": False})
        threading.Thread(
            target=self._run_compact, args=(turn,), name=f"compact-{turn.id}", daemon=True
        ).start()
        return turn

    def _run_compact(self, turn: Turn) -> None:
        status = "done"
        try:
            self.provider.prepare()
            assert self.conversation is not None
            if not self._compact(turn, len(self.conversation.records)):
                status = "stopped"
        except ProviderError as err:
            status = "error"
            if not turn.cancelled():
                self.transcript.add_note(
                    "✗ The conversation was not compacted: " + err.message, "SightlineError"
                )
        except Exception as err:
            status = "error"
            log.error("compaction failed:\n%s", traceback.format_exc())
            if not turn.cancelled():
                text = f"✗ internal error: {type(err).__name__}: {err} (details in the log)"
                self.transcript.add_note(text, "SightlineError")
        finally:
            self._finish(turn, status)

    def _auto_compact(self, turn: Turn) -> None:
        """The conversation nears the context window: summarise what came before the
        current prompt. A failure is said and the turn goes on uncompacted."""
        assert self.conversation is not None
        records = self.conversation.records
        upto = compaction.current_prompt(records)
        if upto is None or not compaction.summarisable(records[:upto]):
            return
        try:
            self._compact(turn, upto)
        except ProviderError as err:
            if not turn.cancelled():
                self.transcript.add_note(
                    f"⚠ The conversation could not be compacted ({err.message}); it goes on "
                    "in full.",
                    "SightlineWarning",
                )
                self.last_context = 0  # not tried again before the next reply
                self.ui.schedule()

    def _compact(self, turn: Turn, upto: int) -> bool:
        """Summarise records[:upto] by a model request and record the compaction; False
        when stopped (then nothing is recorded)."""
        assert self.conversation is not None
        records = list(self.conversation.records)
        replaced = compaction.summarisable(records[:upto])
        self.transcript.add_note("⟲ Compacting the conversation…")
        self.ui.flush()
        reply: Reply | None = None
        for event in self.provider.stream(compaction.request(records[:upto]), turn.cancelled):
            if turn.cancelled():
                return False
            if isinstance(event, Usage):
                self.live = _tokens(event)
            elif isinstance(event, Reply):
                reply = event
        if reply is None or turn.cancelled():
            return False
        self._account(reply)
        summary = compaction.summary_of(reply)
        if not summary:
            raise ProviderError("The model answered the summarising request with no text.")
        with turn.lock:
            if turn.cancelled():
                return False
            keep = len(self.conversation.records) - upto
            self.record(compaction.record(summary, keep, replaced))
        self.last_context = 0
        self.transcript.add_note(compaction.note(replaced))
        self.ui.schedule()
        return True

    def _run_calls(
        self, turn: Turn, by_name: dict[str, Tool], calls: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """One result per call, in order. A call whose id an earlier call of the same reply
        already used is answered without running (the API requires unique ids; the request
        gives it a fresh one, see wire.py)."""
        seen: set[Any] = set()
        results = []
        for call in calls:
            key = call.get("id")
            if isinstance(key, str) and key not in seen:
                seen.add(key)
                results.append(self._run_tool(turn, by_name, call))
                continue
            why = "not run: this tool_use has the same id as another call in this reply"
            if not isinstance(key, str):
                why = "not run: this tool_use has no id"
            self.transcript.add_note(f"✗ refused tool {call.get('name')} ({why})", "SightlineError")
            results.append(
                {"type": "tool_result", "tool_use_id": key, "content": why, "is_error": True}
            )
        return results

    def _run_tool(
        self, turn: Turn, by_name: dict[str, Tool], call: dict[str, Any]
    ) -> dict[str, Any]:
        name = str(call.get("name"))
        tool = by_name.get(name)
        raw_input = call.get("input")
        if tool is not None and not isinstance(raw_input, dict):
            # The model's arguments must be a JSON object; anything else is answered with an
            # error it can read, and the call is not run.
            got = _json_kind(raw_input)
            result = ToolResult(
                f"tool {name} was not run: its input must be a JSON object of arguments "
                f"(got {got})",
                True,
            )
            self.transcript.add_note(
                f"✗ refused tool {name} (its input is {got}, not an object)", "SightlineError"
            )
        elif tool is None:
            # The policy is enforced here, whatever the model asked for: nothing runs.
            allowed = ", ".join(sorted(by_name)) or "none"
            result = ToolResult(
                f"tool {name!r} is not available in this turn (available: {allowed})", True
            )
            self.transcript.add_note(
                f"✗ refused tool {name} (not available here)", "SightlineError"
            )
        else:
            args = dict(raw_input or {})
            label = call_label(name, args)
            row = self.transcript.add_note(f"• {label}")
            try:
                result = tool.handler(turn, args)
            except Refused as err:
                result = ToolResult(err.message, True)
            except Exception as err:
                log.error("tool %s failed:\n%s", name, traceback.format_exc())
                result = ToolResult(f"tool {name} failed: {type(err).__name__}: {err}", True)
            show_outcome(self.transcript, row, name, label, result.content, result.is_error)
        self.ui.schedule()
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call.get("id"),
            "content": result.content or "(no output)",
        }
        if result.is_error:
            block["is_error"] = True
        return block

    def _answer_unrun(self, calls: list[dict[str, Any]], why: str) -> None:
        results = [
            {"type": "tool_result", "tool_use_id": c.get("id"), "content": why, "is_error": True}
            for c in calls
        ]
        self.record({"type": "message", "role": "user", "content": results})

    def _finish(self, turn: Turn, status: str) -> None:
        with self._lock:
            if self.turn is not turn:
                return  # already finished by stop()/reset()
            # The transcript is complete before the state says idle: a push in between must
            # never show an idle turn with its last lines missing.
            self.transcript.end_reply()
            elapsed = time.monotonic() - turn.started
            if status in ("done", "limit"):
                self.transcript.add_note(f"─ {elapsed:.1f} s" + self._turn_summary())
            self.turn = None
        self.ui.event("SightlineTurnEnd", {"turn": turn.id, "status": status})
        self.ui.flush()

    def _turn_summary(self) -> str:
        used = self.turn_tokens
        if not (used.input or used.output or used.cache_read or used.cache_write):
            return ""
        out = f" · {used.input} in · {used.output} out"
        if used.cache_read:
            out += f" · {used.cache_read} from cache"
        if used.cache_write:
            out += f" · {used.cache_write} to cache"
        if self.turn_spent is not None:
            out += f" · {format_cost(self.turn_spent)}"
        return out

    def stop(self, why: str = "stopped by the user") -> bool:
        """End the turn at once: later output is discarded, pending decisions rejected."""
        with self._lock:
            turn = self.turn
            if turn is None:
                return False
            self.turn = None
        with turn.lock:
            turn.cancel()
            partial = turn.partial
            user, turn.user = turn.user, None
        self.provider.cancel()
        if self.live != pricing.Tokens():  # what the stopped reply used is still paid for
            live = self.live
            self._account(
                Reply(
                    input_tokens=live.input,
                    output_tokens=live.output,
                    cache_read_tokens=live.cache_read,
                    cache_write_tokens=live.cache_write,
                )
            )
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
        self.transcript.add_note("■ Stopped.", "SightlineWarning")
        self.ui.event("SightlineTurnEnd", {"turn": turn.id, "status": "stopped"})
        self.ui.flush()
        return True

    def _answer_dangling(self, why: str) -> None:
        """Record an answer for every tool_use the history leaves unanswered, so the file
        says what the next request sends (wire.py would answer them anyway)."""
        if self.conversation is None or self.conversation.read_only:
            return
        calls = unanswered(self.conversation.records)
        if calls:
            self._answer_unrun(calls, why if why.startswith("not ") else f"not completed: {why}")

    def reset(self) -> None:
        self.stop("the conversation was reset")
        if self.conversation is not None:
            self.conversation.close()
        self.conversation = None
        self.plan = []
        self._reset_tokens()
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
        self._answer_dangling(ABANDONED)
        self.transcript.clear()
        render_records(self.transcript, conv.records)
        if conv.skipped:
            n = len(conv.skipped)
            self.transcript.add_note(
                f"⚠ {n} damaged record{'s' if n > 1 else ''} of this conversation "
                f"{'were' if n > 1 else 'was'} skipped ({conv.skipped[0]}"
                f"{', …' if n > 1 else ''})",
                "SightlineWarning",
            )
        self._reset_tokens()
        for record in conv.records:
            if record.get("type") == "message" and isinstance(record.get("usage"), dict):
                self._account(_recorded_usage(record["usage"]))
        self.turn_tokens, self.turn_spent = pricing.Tokens(), 0.0
        for record in conv.records:
            if record.get("type") == "compaction":
                self.last_context = 0
            elif record.get("type") == "message" and isinstance(record.get("usage"), dict):
                self.last_context = _context_of(_recorded_usage(record["usage"]))
        plans = [r for r in conv.records if r.get("type") == "plan"]
        self.plan = list(plans[-1]["steps"]) if plans else []
        self.ui.flush()


def _plus(a: float | None, b: float | None) -> float | None:
    """A sum of costs: unknown when either is."""
    return None if a is None or b is None else a + b


def _context_of(reply: Reply) -> int:
    """The tokens the next request holds at least: this one's whole input and the reply."""
    return (
        reply.input_tokens
        + reply.cache_read_tokens
        + reply.cache_write_tokens
        + reply.output_tokens
    )


def _tokens(usage: Usage) -> pricing.Tokens:
    return pricing.Tokens(usage.input, usage.output, usage.cache_read, usage.cache_write)


def _recorded_usage(raw: dict[str, Any]) -> Reply:
    """The usage of a recorded reply (any shape: it comes from a file)."""

    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    return Reply(
        input_tokens=count("input"),
        output_tokens=count("output"),
        cache_read_tokens=count("cache_read"),
        cache_write_tokens=count("cache_write"),
    )


def _count(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def usage_line(tokens: pricing.Tokens, dollars: float | None) -> str:
    """The pane bar's usage segment: `12.3k in · 456 out · 2000 cached · $0.012`."""
    if tokens == pricing.Tokens():
        return ""
    parts = [f"{_count(tokens.input + tokens.cache_write)} in", f"{_count(tokens.output)} out"]
    if tokens.cache_read:
        parts.append(f"{_count(tokens.cache_read)} cached")
    if dollars is not None:
        parts.append(format_cost(dollars))
    return " · ".join(parts)


def format_cost(dollars: float) -> str:
    """`$0.012`, `$1.23`: enough digits to see a cheap turn move."""
    return f"${dollars:.2f}" if dollars >= 1 else f"${dollars:.4f}".rstrip("0").rstrip(".")


def _model_label(cfg: CoreConfig) -> str:
    """The status bar's model: echo, an ACP agent's name, or the configured model."""
    if cfg.provider.name == "echo":
        return "echo"
    if cfg.provider.name == "acp":
        agent = cfg.provider.agent
        if agent is not None and agent.cmd:
            return os.path.basename(agent.cmd[0])
        return agent.preset if agent is not None and agent.preset else "gemini"
    return cfg.provider.model


def _json_kind(value: Any) -> str:
    """How the model's JSON value is named in an error (`an array [1, 2]`)."""
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    kind = kinds.get(type(value), "a number" if isinstance(value, int | float) else "a value")
    if value is None:
        return kind
    shown = repr(value)
    return f"{kind} {shown[:40] + '…' if len(shown) > 40 else shown}"


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


ABANDONED_NOTE = "✗ not completed: the session ended before this call finished"


def render_records(transcript: Transcript, records: list[dict[str, Any]]) -> None:
    """Rebuild the transcript of a conversation reopened from history. Tolerates any record
    (they come from a file): what it cannot show it leaves out. A call's note is marked with
    its outcome once its result is read, as it was live."""
    waiting: list[Any] = []  # ids of the last reply's calls with no answer yet
    calls: dict[Any, tuple[int, str, str]] = {}  # tool_use id -> (note row, name, label)

    def abandon() -> None:
        for _ in waiting:
            transcript.add_note(ABANDONED_NOTE, "SightlineError")
        waiting.clear()

    acp_rows: dict[str, int] = {}  # an ACP tool call's id -> its status line's row

    for i, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "message" and record.get("role") == "user":
            results = [b for b in _blocks(record.get("content")) if b.get("type") == "tool_result"]
            for block in results:
                if block.get("tool_use_id") in waiting:
                    waiting.remove(block["tool_use_id"])
                    call = calls.pop(block["tool_use_id"], None)
                    content = block.get("content")
                    if content == ABANDONED:
                        transcript.add_note(ABANDONED_NOTE, "SightlineError")
                    elif call is not None:
                        text = content if isinstance(content, str) else ""
                        show_outcome(transcript, *call, text, bool(block.get("is_error")))
            abandon()  # the next user message answers them, or the request does
            if isinstance(record.get("visible"), str):
                note, chip = record.get("note"), record.get("chip")
                transcript.add_user(
                    record["visible"],
                    note if isinstance(note, str) else None,
                    chip if isinstance(chip, dict) else None,
                )
        elif kind == "message" and record.get("role") == "assistant":
            for block in _blocks(record.get("content")):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    transcript.append_text(block["text"])
                elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
                    transcript.append_thinking(block["thinking"])
                elif block.get("type") == "redacted_thinking":
                    transcript.append_thinking("(redacted by the API)")
                elif block.get("type") == "tool_use":
                    args = block.get("input")
                    name = str(block.get("name"))
                    label = call_label(name, args if isinstance(args, dict) else {})
                    row = transcript.add_note(f"• {label}")
                    waiting.append(block.get("id"))
                    if isinstance(block.get("id"), str):
                        calls[block["id"]] = (row, name, label)
            if not _acp_event(records[i + 1 : i + 2], "thought"):
                transcript.end_reply()  # an ACP thought after the text stays in this reply
        elif kind == "acp" and record.get("event") == "thought":
            if isinstance(record.get("text"), str):
                transcript.append_thinking(record["text"])
        elif kind == "acp" and record.get("event") == "tool_status":
            line, at = record.get("line"), acp_rows.get(str(record.get("id")))
            if isinstance(line, list) and len(line) == 2 and isinstance(line[0], str):
                group = line[1] if isinstance(line[1], str) else None
                if at is None:
                    transcript.add_lines([(line[0], group)])
                else:
                    transcript.set_line(at, line[0], group)
        elif kind == "event" and record.get("event") == "error":
            transcript.add_note("✗ " + str(record.get("text", "")), "SightlineError")
        elif is_compaction(record):
            replaced = record.get("replaced")
            count = replaced if isinstance(replaced, int) and not isinstance(replaced, bool) else 0
            transcript.add_note(compaction.note(max(0, count)))
        elif kind == "event" and record.get("event") == "stopped":
            transcript.add_note("■ Stopped.", "SightlineWarning")
        elif kind == "plan" and isinstance(record.get("steps"), list):
            steps = [s for s in record["steps"] if isinstance(s, dict)]
            transcript.add_lines(checklist(steps))
        elif kind in ("proposal", "acp") and isinstance(record.get("lines"), list):
            lines = record["lines"]
            shown = [
                (str(ln[0]), ln[1] if isinstance(ln[1], str) else None)
                for ln in lines
                if isinstance(ln, list) and len(ln) == 2
            ]
            first = transcript.add_lines(shown)
            whole = len(shown) == len(lines) > 0  # row `first` is then lines[0]
            if whole and record.get("status_row") == 0 and isinstance(record.get("id"), str):
                acp_rows[record["id"]] = first
    abandon()


def _acp_event(records: list[Any], event: str) -> bool:
    return any(
        isinstance(r, dict) and r.get("type") == "acp" and r.get("event") == event for r in records
    )


def show_outcome(
    transcript: Transcript, row: int, name: str, label: str, content: str, is_error: bool
) -> None:
    """A tool call's note, once its result is known: a failure is marked with its reason
    (what the model was told), and run_command's output is shown, long output folded."""
    if is_error:
        reason = next((line for line in content.splitlines() if line.strip()), "failed")
        if len(reason) > 160:
            reason = reason[:159] + "…"
        transcript.set_line(row, f"✗ {label} — {reason}", "SightlineError")
    if name == "run_command":
        _status, _, output = content.partition("\n")
        if output and output != "(no output)":
            transcript.add_output(output)


def _utf8_len(text: str) -> int:
    """Bytes of `text` as sent; a selection may hold bytes that are not UTF-8 (surrogates)."""
    return len(text.encode("utf-8", errors="surrogateescape"))


if TYPE_CHECKING:
    # The code below the agent sees a turn through gate/turn.py's Protocols: mypy checks
    # here that the real ones fit them.
    def _fits(turn: Turn) -> turn_view.Turn:
        return turn
