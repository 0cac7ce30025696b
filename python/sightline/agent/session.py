"""A conversation and its turns: the loop that streams a reply, runs tools and records history."""

from __future__ import annotations

import itertools
import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sightline import history, paths
from sightline.agent.gate import Gate
from sightline.agent.prompt import system_prompt
from sightline.agent.wire import ABANDONED, clean_text, unanswered, wire_messages
from sightline.chips import reference_finder
from sightline.config import CoreConfig
from sightline.editor import Editor
from sightline.errors import Refused
from sightline.providers import make_provider
from sightline.providers.base import (
    Provider,
    ProviderError,
    Reply,
    Request,
    Retrying,
    TextDelta,
)
from sightline.scope import Selection
from sightline.tools.base import Kind, Tool, ToolResult, allowed_kinds, call_label, tools_for
from sightline.tools.plan import checklist
from sightline.transcript import Transcript
from sightline.ui import Ui

log = logging.getLogger(__name__)

MODES = ("normal", "plan")


@dataclass
class Turn:
    id: int
    session: Session
    scope: Selection | None = None
    started: float = field(default_factory=time.monotonic)
    partial: str = ""
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
        self.tokens = {"input": 0, "output": 0, "cache_read": 0}
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
            "model": self.cfg.provider.model if self.cfg.provider.name != "echo" else "echo",
            "mode": self.mode,
            "autoaccept": self.autoaccept,
            "workspace": self.workspace,
            "scope": turn.scope.flat() if turn and turn.scope else None,
            "pending": pending.summary if pending else None,
            "pending_kind": pending.kind if pending else None,
            "conversation": self.conversation.id if self.conversation else None,
            "conversation_path": str(self.conversation.path) if self.conversation else None,
            "read_only": bool(self.conversation and self.conversation.read_only),
            "tokens": dict(self.tokens),
        }

    # -- conversation ---------------------------------------------------------------------------

    def _conversation(self) -> history.Conversation:
        if self.conversation is None:
            self.conversation = history.Conversation.create(
                self.history_dir,
                self.workspace,
                provider=self.cfg.provider.name,
                model=self.cfg.provider.model,
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
            self._turn_ids += 1
            turn = Turn(self._turn_ids, self, scope=scope)
            self.turn = turn
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
        self.transcript.add_user(text, note, chip)
        self.ui.event("SightlineTurnStart", {"turn": turn.id, "scoped": scope is not None})
        threading.Thread(
            target=self._run, args=(turn, user), name=f"turn-{turn.id}", daemon=True
        ).start()
        return turn

    def _tools(self, turn: Turn, mode: str | None = None) -> list[Tool]:
        mode = self.mode if mode is None else mode
        scoped = turn.scope is not None
        extra = self.extra_tools(self.workspace, allowed_kinds(mode, scoped))
        return tools_for([*self.registry, *extra], mode, scoped)

    def _run(self, turn: Turn, user: dict[str, Any]) -> None:
        status = "done"
        try:
            try:
                # Credentials first (api_key_cmd): the key must be known to the redactor
                # before the user's message is written to history.
                self.provider.prepare()
                used = sum(len(str(b.get("text", "")).encode()) for b in user["content"][1:])
                late = self.late_parts(self.workspace, user["visible"], used)
                user["content"].extend({"type": "text", "text": part} for part in late)
            finally:
                self.record(user)
            status = self._loop(turn)
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
        for iteration in range(self.cfg.max_iterations + 1):
            # Each request asks again: an MCP server that died since is left out.
            tools = self._tools(turn, mode)
            by_name = {tool.name: tool for tool in tools}
            assert self.conversation is not None
            request = Request(
                # The workspace path may hold bytes that are not UTF-8 (surrogate escapes).
                system=clean_text(system_prompt(self.workspace, self.mode, turn.scope is not None)),
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
                            "usage": {"input": reply.input_tokens, "output": reply.output_tokens},
                        }
                    )
            self._account(reply)
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
        for event in self.provider.stream(request, turn.cancelled):
            if turn.cancelled():
                return None
            if isinstance(event, TextDelta):
                with turn.lock:
                    if turn.cancelled():
                        return None
                    turn.partial += event.text
                    self.transcript.append_text(event.text)
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

    def _account(self, reply: Reply) -> None:
        self.tokens["input"] += reply.input_tokens
        self.tokens["output"] += reply.output_tokens
        self.tokens["cache_read"] += reply.cache_read_tokens

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
            self.transcript.add_note(f"• {call_label(name, args)}")
            try:
                result = tool.handler(turn, args)
            except Refused as err:
                result = ToolResult(err.message, True)
            except Exception as err:
                log.error("tool %s failed:\n%s", name, traceback.format_exc())
                result = ToolResult(f"tool {name} failed: {type(err).__name__}: {err}", True)
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
                summary = f"─ {elapsed:.1f} s"
                if self.tokens["input"] or self.tokens["output"]:
                    summary += f" · {self.tokens['input']} in · {self.tokens['output']} out"
                    if self.tokens["cache_read"]:
                        summary += f" · {self.tokens['cache_read']} from cache"
                self.transcript.add_note(summary)
            self.turn = None
        self.ui.event("SightlineTurnEnd", {"turn": turn.id, "status": status})
        self.ui.flush()

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
        self.provider.cancel()
        self.gate.reject_all(why)
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
        self.tokens = {"input": 0, "output": 0, "cache_read": 0}
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
        plans = [r for r in conv.records if r.get("type") == "plan"]
        self.plan = list(plans[-1]["steps"]) if plans else []
        self.ui.flush()


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
    (they come from a file): what it cannot show it leaves out."""
    waiting: list[Any] = []  # ids of the last reply's calls with no answer yet

    def abandon() -> None:
        for _ in waiting:
            transcript.add_note(ABANDONED_NOTE, "SightlineError")
        waiting.clear()

    for record in records:
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind == "message" and record.get("role") == "user":
            results = [b for b in _blocks(record.get("content")) if b.get("type") == "tool_result"]
            for block in results:
                if block.get("tool_use_id") in waiting:
                    waiting.remove(block["tool_use_id"])
                    if block.get("content") == ABANDONED:
                        transcript.add_note(ABANDONED_NOTE, "SightlineError")
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
                elif block.get("type") == "tool_use":
                    args = block.get("input")
                    label = call_label(
                        str(block.get("name")), args if isinstance(args, dict) else {}
                    )
                    transcript.add_note(f"• {label}")
                    waiting.append(block.get("id"))
            transcript.end_reply()
        elif kind == "event" and record.get("event") == "error":
            transcript.add_note("✗ " + str(record.get("text", "")), "SightlineError")
        elif kind == "event" and record.get("event") == "stopped":
            transcript.add_note("■ Stopped.", "SightlineWarning")
        elif kind == "plan" and isinstance(record.get("steps"), list):
            steps = [s for s in record["steps"] if isinstance(s, dict)]
            transcript.add_lines(checklist(steps))
        elif kind == "proposal" and isinstance(record.get("lines"), list):
            lines = record["lines"]
            transcript.add_lines(
                [
                    (str(ln[0]), ln[1] if isinstance(ln[1], str) else None)
                    for ln in lines
                    if isinstance(ln, list) and len(ln) == 2
                ]
            )
    abandon()
