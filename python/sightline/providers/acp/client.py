"""The client side of ACP: what the agent asks of sightline, and what it streams.

The handlers run on the provider's event loop. Stream updates only touch the transcript
and the history (thread-safe, no Neovim call), so they run inline and keep their order.
Reads, writes and permission requests need Neovim or wait for the user: they run on a
worker thread (asyncio.to_thread) so the loop stays free to receive a cancel.

The policy lives here, whatever the agent asked for:
* paths are confined to the workspace (domain/workspace.py);
* a write is a proposal for the review gate (gate/proposals.py): diff, accept/reject, compare
  view, one undo step, the save rule;
* plan mode refuses writes and edit/execute permissions; a scoped turn (Change with Agent)
  accepts only a write that changes the selection, re-anchored as replace_selection is;
* a permission for a file whose buffer has unsaved user changes is refused.
"""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    CurrentModeUpdate,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from sightline.domain import diff, workspace
from sightline.domain.errors import Refused
from sightline.domain.plan import checklist
from sightline.editor.port import FlatRange
from sightline.gate import selection
from sightline.gate.proposals import Proposal, review
from sightline.gate.selection import BYTES, lost, offset
from sightline.mentions.parts import buffer_reader

if TYPE_CHECKING:
    from sightline.gate.turn import Session, Turn

log = logging.getLogger(__name__)

MAX_READ_BYTES = 8 * 1024 * 1024
# Context lines that take in any buffer: a scoped write is checked against the whole text.
WHOLE = 1 << 30
# Kinds of tool call that only look: everything else may change something.
LOOKING = frozenset({"read", "search", "think", "fetch"})
WRITING = frozenset({"edit", "delete", "move"})
STATUS_WORDS = {
    "pending": ("•", "pending", "SightlineNote"),
    "in_progress": ("…", "in progress", "SightlineNote"),
    "completed": ("✔", "done", "SightlineNote"),
    "failed": ("✗", "failed", "SightlineError"),
}
REFUSED = -32001  # the JSON-RPC error code of a request sightline refused


@dataclass
class TurnContext:
    """What the handlers need of the turn in progress."""

    turn: Turn
    client_writes: bool
    written: set[str] = field(default_factory=set)  # real paths the gate wrote
    thought: str = ""
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def session(self) -> Session:
        return self.turn.session


def _lines_record(event: str, lines: list[tuple[str, str | None]], **extra: Any) -> dict[str, Any]:
    """An `acp` history record: wire.py ignores it, the transcript shows its lines."""
    return {"type": "acp", "event": event, "lines": [[t, g] for t, g in lines], **extra}


class SightlineClient:
    """The acp.Client of one provider; `ctx` is the turn in progress (None between turns)."""

    def __init__(self) -> None:
        self.ctx: TurnContext | None = None
        self.loading = False  # session/load replays history: not shown twice
        self.current_mode: str | None = None

    # -- the stream ------------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        ctx = self.ctx
        if isinstance(update, CurrentModeUpdate):
            self.current_mode = update.current_mode_id
            return
        if ctx is None or self.loading or ctx.turn.cancelled():
            return
        try:
            self._update(ctx, update)
        except Exception:
            log.error("session update failed:\n%s", traceback.format_exc())
        ctx.session.ui.schedule()

    def _update(self, ctx: TurnContext, update: Any) -> None:
        session, turn = ctx.session, ctx.turn
        if isinstance(update, AgentThoughtChunk):
            if isinstance(update.content, TextContentBlock):
                ctx.thought += update.content.text
            return
        self.flush_thought(ctx)
        if isinstance(update, AgentMessageChunk):
            if isinstance(update.content, TextContentBlock):
                with turn.lock:
                    if turn.cancelled():
                        return
                    turn.partial += update.content.text
                    session.transcript.append_text(update.content.text)
            return
        if isinstance(update, ToolCallStart | ToolCallProgress):
            self.flush_text(ctx)
            self._tool_call(ctx, update)
        elif isinstance(update, AgentPlanUpdate):
            self.flush_text(ctx)
            steps = [
                {"text": " ".join(e.content.split()) or "(empty)", "done": e.status == "completed"}
                for e in update.entries
            ]
            session.plan = steps
            session.record({"type": "plan", "steps": steps})
            session.transcript.add_lines(checklist(steps))

    def flush_text(self, ctx: TurnContext) -> None:
        """Record the reply text streamed so far as an assistant message (before a tool call
        line, so a reopened conversation shows them in order)."""
        turn = ctx.turn
        with turn.lock:
            if turn.cancelled() or not turn.partial:
                return
            text, turn.partial = turn.partial, ""
            ctx.session.record(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                }
            )
        ctx.session.transcript.end_reply()

    def flush_thought(self, ctx: TurnContext) -> None:
        """Thought chunks become one muted block, shown once the thought is complete."""
        if not ctx.thought.strip():
            ctx.thought = ""
            return
        lines: list[tuple[str, str | None]] = [("▸ thinking", "SightlineNote")]
        lines += [(f"  {line}", "SightlineNote") for line in ctx.thought.strip().split("\n")]
        ctx.thought = ""
        self.flush_text(ctx)
        ctx.session.transcript.add_lines(lines)
        ctx.session.record(_lines_record("thought", lines))

    def _tool_call(self, ctx: TurnContext, update: ToolCallStart | ToolCallProgress) -> None:
        call = ctx.calls.setdefault(update.tool_call_id, {"title": "tool call", "status": None})
        if update.title:
            call["title"] = " ".join(update.title.split())
        if update.kind:
            call["kind"] = update.kind
        status = update.status or ("pending" if isinstance(update, ToolCallStart) else None)
        lines: list[tuple[str, str | None]] = []
        if status and status != call["status"]:
            call["status"] = status
            icon, word, group = STATUS_WORDS[status]
            lines.append((f"{icon} {call['title']} ({word})", group))
        ws = ctx.session.workspace
        for loc in update.locations or []:
            # A location is shown as `path:line`, a chip the user may follow; never a jump.
            rel = _shown_path(ws, loc.path)
            lines.append((f"  ↳ {rel}:{max(1, loc.line or 1)}", "SightlineNote"))
        for item in update.content or []:
            if isinstance(item, FileEditToolCallContent):
                rel = _shown_path(ws, item.path)
                lines.append((f"  diff {rel}", "SightlineNote"))
                lines += diff.compact_diff(item.old_text or "", item.new_text)
        if lines:
            ctx.session.transcript.add_lines(lines)
            ctx.session.record(_lines_record("tool_call", lines, id=update.tool_call_id))

    # -- files -----------------------------------------------------------------------------

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        ctx = self._ctx()
        text = await asyncio.to_thread(self._read, ctx, path)
        if line is not None or limit is not None:
            rows = text.splitlines(keepends=True)
            start = max(0, (line or 1) - 1)
            rows = rows[start : start + limit if limit is not None else None]
            text = "".join(rows)
        return ReadTextFileResponse(content=text)

    def _read(self, ctx: TurnContext, path: str) -> str:
        real = self._confined(ctx, path, "read")
        if real.is_dir():
            raise _refused(f"{path}: a directory, not a file")
        # The buffer when it is loaded (unsaved text included), else the disk.
        content = buffer_reader(ctx.turn.editor)(real, MAX_READ_BYTES)
        if content is None:
            raise RequestError.resource_not_found(path)
        if isinstance(content, bytes):
            if b"\0" in content:
                raise _refused(f"{path}: a binary file")
            return content.decode("utf-8", errors="replace")
        return content

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        ctx = self._ctx()
        await asyncio.to_thread(self._write, ctx, path, content)
        return WriteTextFileResponse()

    def _write(self, ctx: TurnContext, path: str, content: str) -> None:
        session, turn = ctx.session, ctx.turn
        real = self._confined(ctx, path, "write")
        rel = workspace.relative(session.workspace, real)
        if session.mode == "plan":
            self._refuse(ctx, f"write to {rel}", "plan mode changes nothing")
        if turn.cancelled():
            raise _refused("the turn was stopped")
        if turn.scope is not None:
            result = self._scoped_write(ctx, real, rel, content)
        else:
            result = self._proposal(ctx, real, rel, content)
        if result is None:
            return
        if result.is_error:
            raise _refused(result.content)
        ctx.written.add(str(real))

    def _proposal(self, ctx: TurnContext, real: Any, rel: str, content: str) -> Any:
        turn = ctx.turn
        if real.is_dir():
            raise _refused(f"{rel}: a directory, not a file")
        target = turn.editor.load_lines(str(real))
        after = diff.as_buffer_text(content) if content else ""
        if target.get("missing"):
            return review(turn, Proposal("create", rel, str(real), "", after))
        if target.get("error"):
            why = target.get("detail") or target["error"]
            if target["error"] == "load_failed":
                why = f"could not be loaded: {why}"
            self._refuse(ctx, f"write to {rel}", f"{rel} {why}")
        before = diff.buffer_text(list(target["lines"]))
        if after == before:
            return None  # nothing to change, nothing to review
        start, end = unique_region(before, after)
        return review(turn, Proposal("edit", rel, str(real), before, after, start, end))

    def _scoped_write(self, ctx: TurnContext, real: Any, rel: str, content: str) -> Any:
        """Change with Agent: only a write whose change lies inside the selection is taken,
        and it goes to the gate as replace_selection's proposal (re-anchored on accept)."""
        turn = ctx.turn
        sel = turn.scope
        assert sel is not None
        # One round trip: the selection re-anchored, with its whole buffer around it.
        found = turn.editor.reanchor_range(cast(FlatRange, sel.flat()), sel.text, WHOLE)
        if "error" in found:
            self._refuse(
                ctx,
                f"write to {rel}",
                f"refused: the selection changed since it was taken: {lost(dict(found))}. "
                "Nothing was changed.",
            )
        name = str(found.get("path") or "")
        if not name or os.path.realpath(name) != str(real):
            self._refuse(ctx, f"write to {rel}", "this turn may change only the selection")
        sel = sel.moved_to(dict(found["range"]), sel.text)
        lines = list(found["lines"])
        before = diff.buffer_text(lines).encode(errors=BYTES)
        start = offset(lines, sel.start_row, sel.start_col)
        end = offset(lines, sel.end_row, sel.end_col)
        new = diff.as_buffer_text(content).encode(errors=BYTES)
        tail = len(before) - end
        inside = (
            len(new) >= start + tail
            and new[:start] == before[:start]
            and new[len(new) - tail :] == before[end:]
        )
        if not inside:
            self._refuse(ctx, f"write to {rel}", "it changes text outside the selection")
        text = new[start : len(new) - tail].decode(errors=BYTES)
        return selection.replace(turn, {"text": text})

    def _confined(self, ctx: TurnContext, path: str, verb: str) -> Any:
        try:
            return workspace.resolve(ctx.session.workspace, path)
        except Refused as err:
            self._refuse(ctx, f"{verb} {path}", err.message)

    def _refuse(self, ctx: TurnContext, what: str, why: str) -> Any:
        ctx.session.transcript.add_note(f"✗ refused {what}: {why}", "SightlineError")
        ctx.session.ui.schedule()
        raise _refused(f"refused by sightline: {why}")

    # -- permissions -----------------------------------------------------------------------

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        ctx = self.ctx
        if ctx is None or ctx.turn.cancelled():
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        chosen = await asyncio.to_thread(self._permission, ctx, tool_call, options)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    def _permission(
        self, ctx: TurnContext, call: ToolCallUpdate, options: list[PermissionOption]
    ) -> PermissionOption | None:
        session, turn = ctx.session, ctx.turn
        known = ctx.calls.get(call.tool_call_id, {})
        kind = call.kind or known.get("kind") or "other"
        title = " ".join((call.title or known.get("title") or "a tool call").split())

        def pick(*kinds: str) -> PermissionOption | None:
            for wanted in kinds:
                for option in options:
                    if option.kind == wanted:
                        return option
            return None

        def reject(why: str) -> PermissionOption | None:
            session.transcript.add_note(f"✗ refused permission: {title} ({why})", "SightlineError")
            session.ui.schedule()
            return pick("reject_once", "reject_always")

        if kind not in LOOKING:
            if session.mode == "plan":
                return reject("plan mode: nothing may change")
            if turn.scope is not None:
                return reject("Change with Agent may change only the selection")
        paths = _call_paths(session.workspace, call)
        if kind in WRITING:
            dirty = [p for p in paths if _modified(turn, p)]
            if dirty and not ctx.client_writes:
                shown = ", ".join(workspace.relative(session.workspace, p) for p in dirty)
                return reject(f"{shown} has unsaved changes of yours")
            if ctx.client_writes or session.autoaccept:
                # The write itself comes to the review gate (or autoaccept covers edits).
                return pick("allow_once", "allow_always")
        proposal = _permission_proposal(session.workspace, call)
        gate_kind = "edit" if kind in WRITING else "command"
        data: dict[str, Any] = {"permission": [o.name for o in options]}
        if proposal is not None:
            data["proposal"] = proposal
        session.transcript.add_note(f"? permission: {title} (accept or reject)", "SightlineWarning")
        item = turn.gate.ask(gate_kind, f"allow {title}", data)
        if item.decision != "accept" or turn.cancelled():
            why = f"rejected: {item.reason}" if item.reason else "rejected"
            session.transcript.add_note(f"✗ {why}", "SightlineWarning")
            return pick("reject_once", "reject_always")
        session.transcript.add_note(f"✔ allowed {title}")
        if item.reason.strip().lower() == "always":
            return pick("allow_always", "allow_once")
        return pick("allow_once", "allow_always")

    def _ctx(self) -> TurnContext:
        ctx = self.ctx
        if ctx is None or ctx.turn.cancelled():
            raise _refused("no turn is running")
        return ctx


def _refused(message: str) -> RequestError:
    return RequestError(REFUSED, message)


def _shown_path(ws: str, path: str) -> str:
    try:
        return workspace.relative(ws, workspace.resolve(ws, path))
    except Refused:
        return path


def _call_paths(ws: str, call: ToolCallUpdate) -> list[Any]:
    raw = [loc.path for loc in call.locations or []]
    raw += [c.path for c in call.content or [] if isinstance(c, FileEditToolCallContent)]
    out = []
    for path in raw:
        try:
            out.append(workspace.resolve(ws, path))
        except Refused:
            continue
    return out


def _modified(turn: Turn, path: Any) -> bool:
    got = turn.editor.read_lines(str(path), 0, 0, 0)  # None when no buffer is loaded
    return bool(got and got["modified"])


def _permission_proposal(ws: str, call: ToolCallUpdate) -> Proposal | None:
    """A diff in the tool call, for the compare view of the permission (never applied)."""
    for item in call.content or []:
        if isinstance(item, FileEditToolCallContent):
            rel = _shown_path(ws, item.path)
            before = item.old_text or ""
            return Proposal("edit" if before else "create", rel, item.path, before, item.new_text)
    return None


def unique_region(before: str, after: str) -> tuple[int, int]:
    """The region of `before` a whole-file write replaces: its changed span grown to whole
    lines, then line by line until that text occurs once (the apply anchors on it)."""
    span = diff.changed_span(before, after)
    start = before.rfind("\n", 0, span.start) + 1
    end = before.find("\n", span.end)
    end = len(before) if end < 0 else end + 1
    while diff.count_occurrences(before, before[start:end]) != 1 or start == end:
        if start == 0 and end == len(before):
            break
        if start > 0:
            start = before.rfind("\n", 0, start - 1) + 1
        if end < len(before):
            nxt = before.find("\n", end)
            end = len(before) if nxt < 0 else nxt + 1
    return start, end
