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
    Usage,
)
from sightline.scope import Selection
from sightline.tools.base import Tool, ToolResult, call_label, tools_for
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
    usage: dict[str, int] | None = None  # the reply being streamed, live (input, output)
    accounted: dict[str, int] = field(default_factory=dict)  # its finished replies
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


def wire_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for the API: role and content only, consecutive same-role messages merged
    (a stopped or failed turn leaves a user message without a reply)."""
    out: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") != "message":
            continue
        content = record["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if out and out[-1]["role"] == record["role"]:
            out[-1]["content"] = out[-1]["content"] + list(blocks)
        else:
            out.append({"role": record["role"], "content": list(blocks)})
    return out


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
            "turn_tokens": self._turn_tokens(turn),
        }

    def _turn_tokens(self, turn: Turn | None) -> dict[str, int] | None:
        """Tokens of the running turn: its finished rounds plus the reply streaming now."""
        if turn is None:
            return None
        live = turn.usage or {"input": 0, "output": 0}
        done = turn.accounted
        return {k: done.get(k, 0) + live.get(k, 0) for k in ("input", "output")}

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

    def _tools(self, turn: Turn) -> list[Tool]:
        return tools_for(self.registry, self.mode, turn.scope is not None)

    def _run(self, turn: Turn, user: dict[str, Any]) -> None:
        status = "done"
        try:
            try:
                # Credentials first (api_key_cmd): the key must be known to the redactor
                # before the user's message is written to history.
                self.provider.prepare()
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
        tools = self._tools(turn)
        by_name = {tool.name: tool for tool in tools}
        for iteration in range(self.cfg.max_iterations + 1):
            assert self.conversation is not None
            request = Request(
                system=system_prompt(self.workspace, self.mode, turn.scope is not None),
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
            with turn.lock:
                for key, n in (("input", reply.input_tokens), ("output", reply.output_tokens)):
                    turn.accounted[key] = turn.accounted.get(key, 0) + n
                turn.usage = None
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
            results = [self._run_tool(turn, by_name, call) for call in calls]
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
            elif isinstance(event, Usage):
                turn.usage = {"input": event.input_tokens, "output": event.output_tokens}
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

    def _run_tool(
        self, turn: Turn, by_name: dict[str, Tool], call: dict[str, Any]
    ) -> dict[str, Any]:
        name = str(call.get("name"))
        tool = by_name.get(name)
        if tool is None:
            # The policy is enforced here, whatever the model asked for: nothing runs.
            allowed = ", ".join(sorted(by_name)) or "none"
            result = ToolResult(
                f"tool {name!r} is not available in this turn (available: {allowed})", True
            )
            self.transcript.add_note(
                f"✗ refused tool {name} (not available here)", "SightlineError"
            )
        else:
            args = dict(call.get("input") or {})
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
        """A tool_use recorded without its tool_result would make every later request invalid."""
        if self.conversation is None:
            return
        messages = self.conversation.messages()
        if not messages or messages[-1].get("role") != "assistant":
            return
        calls = [b for b in messages[-1]["content"] if b.get("type") == "tool_use"]
        if calls:
            self._answer_unrun(calls, f"not completed: {why}")

    def reset(self) -> None:
        self.stop("the conversation was reset")
        if self.conversation is not None:
            self.conversation.close()
        self.conversation = None
        self.plan = []
        self.tokens = {"input": 0, "output": 0, "cache_read": 0}
        self.transcript.clear()
        self.ui.flush()

    def open(self, path: Path) -> None:
        """Reopen a conversation from history; it continues where it ended."""
        if self.turn is not None:
            raise Refused("a turn is running: stop it before opening another conversation")
        if not path.is_file():
            raise Refused(f"no such conversation: {path}")
        if self.conversation is not None:
            self.conversation.close()
        self.conversation = history.Conversation.load(path)
        self.transcript.clear()
        render_records(self.transcript, self.conversation.records)
        plans = [r for r in self.conversation.records if r.get("type") == "plan"]
        self.plan = list(plans[-1].get("steps", [])) if plans else []
        self.ui.flush()


def render_records(transcript: Transcript, records: list[dict[str, Any]]) -> None:
    """Rebuild the transcript of a conversation reopened from history."""
    calls: dict[str, tuple[int, str, str]] = {}  # tool_use id -> (note row, name, label)
    for record in records:
        kind = record.get("type")
        if kind == "message" and record.get("role") == "user" and "visible" in record:
            transcript.add_user(str(record["visible"]), record.get("note"), record.get("chip"))
        elif kind == "message" and record.get("role") == "assistant":
            for block in record.get("content", []):
                if block.get("type") == "text":
                    transcript.append_text(block["text"])
                elif block.get("type") == "tool_use":
                    name = str(block.get("name"))
                    label = call_label(name, dict(block.get("input") or {}))
                    calls[str(block.get("id"))] = (transcript.add_note(f"• {label}"), name, label)
            transcript.end_reply()
        elif kind == "message" and record.get("role") == "user":
            for block in record.get("content", []):
                call = calls.pop(str(block.get("tool_use_id")), None)
                if isinstance(block, dict) and block.get("type") == "tool_result" and call:
                    content = block.get("content")
                    text = content if isinstance(content, str) else ""
                    show_outcome(transcript, *call, text, bool(block.get("is_error")))
        elif kind == "event" and record.get("event") == "error":
            transcript.add_note("✗ " + str(record.get("text", "")), "SightlineError")
        elif kind == "event" and record.get("event") == "stopped":
            transcript.add_note("■ Stopped.", "SightlineWarning")
        elif kind == "plan":
            transcript.add_lines(checklist(list(record.get("steps", []))))
        elif kind == "proposal":
            transcript.add_lines([(str(t), g) for t, g in record.get("lines", [])])


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
