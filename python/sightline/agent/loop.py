"""The turn loop: stream a reply, run the tools it calls, record both, until the reply
calls none (or the turn is stopped, fails or reaches tools.max_iterations)."""

from __future__ import annotations

import logging
import traceback
from typing import Any

from sightline.agent import checkpointing, compacting, compaction, steering
from sightline.agent.prompt import RULES_MAX_FILE_BYTES, load_rules, system_prompt
from sightline.agent.replay import show_images, show_outcome
from sightline.agent.state import SessionState
from sightline.agent.turn import Turn
from sightline.domain import images, narrator
from sightline.domain.errors import Refused
from sightline.domain.wire import clean_text, wire_messages
from sightline.gate.policy import allowed_kinds
from sightline.gate.turn_contract import ToolResult
from sightline.providers import vision
from sightline.providers.base import (
    Notice,
    ProviderError,
    Reply,
    Request,
    Retrying,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from sightline.tools.base import Tool, tools_for
from sightline.tools.registry import call_label

log = logging.getLogger(__name__)


def run(session: SessionState, turn: Turn) -> None:
    """A turn's worker thread, from the credentials to its end."""
    status = "done"
    try:
        if turn.prelude is not None:
            turn.prelude()  # a regenerate's branch, once the turn it replaces let go
        try:
            # Credentials first (api_key_cmd): the key must be known to the redactor
            # before the user's message is written to history.
            session.provider.prepare()
            pending = turn.user
            if pending is not None and turn.late is not None:
                # Parts that need a worker thread (MCP resources), after the typed text.
                content = pending["content"]
                used = sum(_utf8_len(str(b.get("text", ""))) for b in content[1:])
                late = turn.late(used)
                with turn.lock:
                    content.extend({"type": "text", "text": part} for part in late)
        finally:
            with turn.lock:
                user, turn.user = turn.user, None
                if user is not None:
                    session.record(user)
        if turn.cancelled() or (user is None and not turn.regenerate):
            return  # stopped while the key was fetched: nothing is sent
        # An ACP agent runs the whole turn itself (Provider.run_turn).
        provider = session.provider
        status = (
            provider.run_turn(turn, user)
            if provider.capabilities.runs_turns and user is not None
            else _loop(session, turn)
        )
    except (ProviderError, Refused) as err:
        status = "error"
        if not turn.cancelled():
            _say(session, turn, narrator.error(err.message))
            session.record({"type": "event", "event": "error", "text": err.message})
    except Exception as err:
        status = "error"
        log.error("turn %d failed:\n%s", turn.id, traceback.format_exc())
        if not turn.cancelled():
            note = narrator.internal_error(err)
            session.transcript.add_note(*note)
            # Recorded as errors are: the history says how the turn ended (wire.cut_off).
            text = note.text.removeprefix(narrator.error("").text)
            session.record({"type": "event", "event": "error", "text": text})
    finally:
        checkpointing.finish(session, turn)  # before idle: a rewind right after sees it
        session.finish(turn, status)


def tools(session: SessionState, turn: Turn, mode: str, skills: bool = True) -> list[Tool]:
    """The turn's tools by the one policy; `load_skill` only when there is a skill to load
    (a tool with nothing to offer would only widen the list the model reads)."""
    scoped = turn.scope is not None
    hosts = bool(session.cfg.network.allow_hosts)
    extra = session.extra_tools(session.workspace, allowed_kinds(mode, scoped, hosts))
    offered = tools_for([*session.registry, *extra], mode, scoped, session.cfg)
    return offered if skills else [tool for tool in offered if tool.name != "load_skill"]


def _loop(session: SessionState, turn: Turn) -> str:
    mode = session.mode
    cfg = session.cfg
    accounts = session.accounts
    # Read once per turn: the system prompt stays the same for every request of the turn
    # (the prompt cache serves it).
    rules = load_rules(session.workspace) if cfg.rules else []
    if rules:
        cut = [r.path for r in rules if r.cut]
        used = [r.path for r in rules if r.refused is None]
        left_out = [f"{r.path} ({r.refused})" for r in rules if r.refused is not None]
        note = narrator.rules(used, cut, RULES_MAX_FILE_BYTES // 1024, left_out)
        session.transcript.add_note(*note)
        session.ui.schedule()
    skills = [(skill.name, skill.description) for skill in session.skills()]
    system = system_prompt(session.workspace, mode, turn.scope is not None, rules, skills)
    for iteration in range(cfg.max_iterations + 1):
        # Each request asks again: an MCP server that died since is left out. A model
        # without tools (its capabilities) is offered none: it chats.
        offered = (
            tools(session, turn, mode, bool(skills)) if session.provider.capabilities.tools else []
        )
        by_name = {tool.name: tool for tool in offered}
        assert session.conversation is not None
        if accounts.last_context >= compaction.TRIGGER * accounts.context_window():
            compacting.auto(session, turn)
            if turn.cancelled():
                return "stopped"
        with turn.lock:
            if turn.cancelled():
                return "stopped"
            messages = wire_messages(
                session.conversation.records,
                signatures=session.provider.capabilities.signed_parts,
            )
        request = Request(
            # The workspace path may hold bytes that are not UTF-8 (surrogate escapes).
            system=clean_text(system),
            messages=images.inline(messages),
            tools=[tool.spec() for tool in offered],
        )
        reply = _stream(session, turn, request)
        if reply is None:
            return "stopped"
        with turn.lock:
            if turn.cancelled():
                return "stopped"
            turn.partial = ""
            if reply.content:
                session.record(
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
        accounts.replied(reply)
        if reply.stop_reason == "max_tokens":
            session.transcript.add_note(*narrator.token_limit(cfg.provider.max_tokens))
        calls = [b for b in reply.content if b.get("type") == "tool_use"]
        if not calls:
            return "done"
        if iteration == cfg.max_iterations:
            session.answer_unrun(calls, "not run: the turn reached tools.max_iterations")
            session.transcript.add_note(*narrator.iteration_limit(cfg.max_iterations))
            session.record({"type": "event", "event": "limit", "rounds": cfg.max_iterations})
            return "limit"
        results = _run_calls(session, turn, by_name, calls)
        with turn.lock:
            if turn.cancelled():
                return "stopped"
            answer: dict[str, Any] = {"type": "message", "role": "user", "content": results}
            # Steered messages go after the results, in the same user turn: the model reads
            # them before it goes on (the results must come first on the wire).
            steered = steering.take_steered(session)
            if steered:
                text = "\n\n".join(t for _, t in steered)
                answer["content"] = [*results, {"type": "text", "text": text}]
                answer["visible"] = text
            session.record(answer)
        if steered:
            session.transcript.add_user(answer["visible"], key=answer)
            session.transcript.add_note(*narrator.steered())
            session.ui.schedule()
    return "done"


def _stream(session: SessionState, turn: Turn, request: Request) -> Reply | None:
    transcript, ui = session.transcript, session.ui
    reply: Reply | None = None
    first = True
    for event in session.provider.stream(request, turn.cancelled):
        if turn.cancelled():
            return None
        if isinstance(event, TextDelta | ThinkingDelta):
            with turn.lock:
                if turn.cancelled():
                    return None
                if isinstance(event, TextDelta):
                    turn.partial += event.text
                    transcript.append_text(event.text)
                else:
                    transcript.append_thinking(event.text)
            if first:  # the first text shows at once; the rest is batched
                first = False
                ui.show_now()
            else:
                ui.schedule()
        elif isinstance(event, Usage):
            session.accounts.streaming(event)
            ui.schedule()
        elif isinstance(event, Notice):
            transcript.add_note(*narrator.notice(event.text))
            ui.schedule()
        elif isinstance(event, Retrying):
            note = narrator.retrying(event.reason, event.delay_s, event.attempt, event.of)
            _say(session, turn, note, keep=True)
            ui.schedule()
            continue
        else:
            reply = event
        turn.retry_row = None  # the request went through: a later fault says so anew
    return None if turn.cancelled() else reply


def _run_calls(
    session: SessionState, turn: Turn, by_name: dict[str, Tool], calls: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One result per call, in order. A call whose id an earlier call of the same reply
    already used is answered without running (the API requires unique ids; the request
    gives it a fresh one, see domain/wire.py)."""
    seen: set[Any] = set()
    results = []
    for call in calls:
        key = call.get("id")
        if isinstance(key, str) and key not in seen:
            seen.add(key)
            results.append(_run_tool(session, turn, by_name, call))
            continue
        why = "not run: this tool_use has the same id as another call in this reply"
        if not isinstance(key, str):
            why = "not run: this tool_use has no id"
        session.transcript.add_note(*narrator.refused_tool(str(call.get("name")), why))
        results.append(
            {"type": "tool_result", "tool_use_id": key, "content": why, "is_error": True}
        )
    return results


def _run_tool(
    session: SessionState, turn: Turn, by_name: dict[str, Tool], call: dict[str, Any]
) -> dict[str, Any]:
    transcript = session.transcript
    name = str(call.get("name"))
    tool = by_name.get(name)
    raw_input = call.get("input")
    if tool is not None and not isinstance(raw_input, dict):
        # The model's arguments must be a JSON object; anything else is answered with an
        # error it can read, and the call is not run.
        got = _json_kind(raw_input)
        result = ToolResult(
            f"tool {name} was not run: its input must be a JSON object of arguments (got {got})",
            True,
        )
        transcript.add_note(*narrator.refused_tool(name, f"its input is {got}, not an object"))
    elif tool is None:
        # The policy is enforced here, whatever the model asked for: nothing runs.
        allowed = ", ".join(sorted(by_name)) or "none"
        result = ToolResult(
            f"tool {name!r} is not available in this turn (available: {allowed})", True
        )
        transcript.add_note(*narrator.refused_tool(name, "not available here"))
    else:
        args = dict(raw_input or {})
        label = call_label(name, args)
        row = transcript.add_note(*narrator.tool_call(label))
        try:
            result = tool.handler(turn, args)
        except Refused as err:
            result = ToolResult(err.message, True)
        except Exception as err:
            log.error("tool %s failed:\n%s", name, traceback.format_exc())
            result = ToolResult(f"tool {name} failed: {type(err).__name__}: {err}", True)
        # run_command showed its output itself (before the turn's stop line, if stopped).
        outcome = (result.content, result.is_error, result.shown)
        show_outcome(transcript, row, name, label, *outcome, show_output=False)
    session.ui.schedule()
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call.get("id"),
        "content": result.content or "(no output)",
    }
    if result.is_error:
        block["is_error"] = True
    if result.shown is not None:
        block["shown"] = result.shown  # for the history's reader; never sent (domain/wire.py)
    if result.images:
        if vision.sees_images(session.provider):
            block["content"] = [{"type": "text", "text": block["content"]}, *result.images]
            show_images(transcript, list(result.images))
        else:
            block["content"] += "\n(not sent: the model in use cannot look at images)"
    return block


def _json_kind(value: Any) -> str:
    """How the model's JSON value is named in an error (`an array [1, 2]`)."""
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    kind = kinds.get(type(value), "a number" if isinstance(value, int | float) else "a value")
    if value is None:
        return kind
    shown = repr(value)
    return f"{kind} {shown[:40] + '…' if len(shown) > 40 else shown}"


def _utf8_len(text: str) -> int:
    """Bytes of `text` as sent; a selection may hold bytes that are not UTF-8 (surrogates)."""
    return len(text.encode("utf-8", errors="surrogateescape"))


def _say(session: SessionState, turn: Turn, note: narrator.Note, keep: bool = False) -> None:
    """A retry, then the failure, on one transcript line: each retry rewrites the line the
    first one added, and the final error replaces it (said once, not once per attempt).
    `keep` leaves the row for the next retry to rewrite."""
    row = turn.retry_row
    if row is None:
        row = session.transcript.add_note(*note)
    else:
        session.transcript.set_line(row, *note)
    turn.retry_row = row if keep else None
