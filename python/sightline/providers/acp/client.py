"""The client side of ACP: what the agent asks of sightline, and what it streams.

The handlers run on the provider's event loop. Stream updates only touch the transcript
and the history (thread-safe, no Neovim call), so they run inline and keep their order.
Reads, writes and permission requests need Neovim or wait for the user: they run on a
worker thread (asyncio.to_thread) so the loop stays free to receive a cancel.

The policy lives here, whatever the agent asked for:
* paths are confined to the workspace (domain/workspace.py);
* a write is a proposal for the review gate (gate/proposals.py): diff, accept/reject, compare
  view, one undo step, the save rule;
* plan mode refuses writes, edit/execute permissions and terminals; a scoped turn (Change
  with Agent) accepts only a write that changes the selection, re-anchored as
  replace_selection is;
* a terminal runs as run_command does (terminals.py): asked, in the workspace, killed with
  its whole tree on stop;
* a permission for a file whose buffer has unsaved user changes is refused.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CreateTerminalResponse,
    CurrentModeUpdate,
    DeniedOutcome,
    FileEditToolCallContent,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from sightline.domain import diff, disk, narrator, workspace
from sightline.domain.errors import Refused
from sightline.domain.narrator import checklist
from sightline.editor.port import FlatRange
from sightline.gate import approvals, selection
from sightline.gate.decisions import SCOPES
from sightline.gate.policy import Kind, allowed_kinds
from sightline.gate.proposals import Proposal, apply_text, review
from sightline.gate.selection import BYTES, lost, offset
from sightline.gate.turn_contract import ToolResult
from sightline.mentions.parts import buffer_reader
from sightline.providers.acp import modes, options
from sightline.providers.acp.terminals import Terminal, Terminals

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Session, Turn

log = logging.getLogger(__name__)
_R = TypeVar("_R")

MAX_READ_BYTES = 8 * 1024 * 1024
# Context lines that take in any buffer: a scoped write is checked against the whole text.
WHOLE = 1 << 30
# Kinds of tool call that only look: everything else may change something.
LOOKING = frozenset({"read", "search", "think", "fetch"})
WRITING = frozenset({"edit", "delete", "move"})
UNASKED_KINDS = WRITING | {"execute"}  # named when they run without a permission request
UNASKED_GRACE_S = 1.0  # how long a call reported in progress may wait for its permission request
REFUSED = -32001  # the JSON-RPC error code of a request sightline refused
# sightline's own MCP server, injected into every session (AcpProvider._mcp_servers).
MCP_SERVER = "sightline"
# sightline's own MCP tools by kind (tools/view.py defines them; providers do not import
# tools, and a unit test holds the two equal).
OWN_TOOLS: dict[str, Kind] = {
    "reveal_editor_range": Kind.VIEW,
    "reveal_attachment": Kind.VIEW,
    "go_to_position": Kind.NAVIGATE,
}


@dataclass
class TurnContext:
    """What the handlers need of the turn in progress."""

    turn: Turn
    client_writes: bool
    written: set[str] = field(default_factory=set)  # real paths the gate wrote
    permitted: set[str] = field(default_factory=set)  # real paths the user let the agent write
    deferred: dict[str, dict[str, Any]] = field(default_factory=dict)  # calls judged unasked later
    thought: str = ""
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)  # tool calls a permission was asked for
    ended: bool = False  # the agent ended the turn: what it asks now is refused
    terminals: Terminals = field(default_factory=Terminals)
    allowed_commands: list[str] = field(default_factory=list)  # titles of execute permissions
    _inflight: int = 0  # requests being handled on worker threads
    _idle: threading.Condition = field(default_factory=threading.Condition)

    @property
    def session(self) -> Session:
        return self.turn.session

    def over(self) -> bool:
        return self.ended or self.turn.cancelled()

    def allowed_command(self, shown: str) -> bool:
        """Whether the user allowed, in this turn, a permission that names this command (the
        agent asked before it opened the terminal)."""
        wanted = " ".join(shown.split())
        return any(
            wanted and wanted in " ".join(t.replace("`", "").split()) for t in self.allowed_commands
        )

    def handle(self, place: int | None, work: Callable[..., _R], *args: Any) -> _R:
        """Run one request's work (on a worker thread), counted until it is answered; with
        the `place` in line it took as it arrived, what it asks the user is queued in order."""
        with self._idle:
            self._inflight += 1
        try:
            if place is None:
                return work(*args)
            with self.session.gate.in_line(place):
                return work(*args)
        finally:
            with self._idle:
                self._inflight -= 1
                self._idle.notify_all()

    def finish(self, reason: str, timeout: float = 5.0) -> None:
        """End the turn: every request still in flight is answered (a question waiting in
        the gate is rejected), so none is left without its answer."""
        self.ended = True
        deadline = time.monotonic() + timeout
        with self._idle:
            while True:
                self.session.gate.reject_all(reason)
                left = deadline - time.monotonic()
                if not self._inflight or left <= 0:
                    return
                self._idle.wait(min(left, 0.05))


def _command(command: Any) -> tuple[str, str, str]:
    """One announced command as (name, description, input hint)."""
    given = getattr(command, "input", None)
    hint = getattr(getattr(given, "root", given), "hint", None)
    return (str(command.name), str(command.description or ""), str(hint or ""))


def _lines_record(event: str, lines: list[tuple[str, str | None]], **extra: Any) -> dict[str, Any]:
    """An `acp` history record: wire.py ignores it, the transcript shows its lines."""
    return {"type": "acp", "event": event, "lines": [[t, g] for t, g in lines], **extra}


class SightlineClient:
    """The acp.Client of one provider; `ctx` is the turn in progress (None between turns)."""

    def __init__(self) -> None:
        self.ctx: TurnContext | None = None
        self.loading = False  # session/load replays history: not shown twice
        self.current_mode: str | None = None
        self.chosen_mode: str | None = None  # provider.agent_mode, the user's by name
        self.context_used: tuple[int, int] | None = None  # usage_update: (used, size) tokens
        # The user's decisions the agent's model was not told in words (a rejection's note, the
        # hunks taken): sent with the next prompt (prompt.decisions_block), then cleared.
        self.decisions: list[str] = []
        self.config_options: list[options.Option] = []  # the agent's, as it last sent them
        self.changed: Callable[[], None] = lambda: None  # redraw the bar (between turns too)
        self.collected: list[tuple[str, str]] | None = None  # a replay being collected
        # The agent's slash commands (available_commands_update): (name, description, hint).
        self.commands: list[tuple[str, str, str]] = []
        self.commands_seq = 0  # how many lists it announced: the `/` menu lists again
        self.commands_changed: Callable[[], None] = lambda: None  # an open `/` menu asks again

    # -- the stream ------------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.collected is not None:
            self._collect(update)  # a session resumed from the agent's list: its history
            return
        ctx = self.ctx
        if isinstance(update, AvailableCommandsUpdate):
            # Any time, in a turn or not: each update replaces the list (the composer's `/`).
            self.commands = [_command(c) for c in update.available_commands]
            self.commands_seq += 1
            self.commands_changed()
            return
        mode = side_mode(update)
        if isinstance(update, CurrentModeUpdate):
            mode = update.current_mode_id
        if mode is not None:
            self.current_mode = mode
            if ctx is not None and modes.bypasses(mode) and mode != self.chosen_mode:
                ctx.session.transcript.add_note(*narrator.agent_switched_mode(mode))
            self.changed()  # the bar shows the agent's mode
            return
        if isinstance(update, UsageUpdate):
            self.context_used = (update.used, update.size)
            return
        if isinstance(update, ConfigOptionUpdate):
            self.config_options = options.of(update.config_options)  # the whole set, at once
            self.changed()
            return
        if ctx is None or self.loading or ctx.turn.cancelled():
            return
        try:
            self._update(ctx, update)
        except Exception:
            log.error("session update failed:\n%s", traceback.format_exc())
        ctx.session.ui.schedule()

    def _collect(self, update: Any) -> None:
        assert self.collected is not None
        if isinstance(update, UserMessageChunk | AgentMessageChunk) and side_mode(update) is None:
            if isinstance(update.content, TextContentBlock) and update.content.text:
                who = "user" if isinstance(update, UserMessageChunk) else "agent"
                self.collected.append((who, update.content.text))
        elif isinstance(update, ToolCallStart) and update.title:
            status = update.status or "completed"
            self.collected.append(
                ("tool", narrator.call_status(" ".join(update.title.split()), status)[0])
            )

    def _update(self, ctx: TurnContext, update: Any) -> None:
        session, turn = ctx.session, ctx.turn
        if isinstance(update, AgentThoughtChunk):
            if isinstance(update.content, TextContentBlock):
                self._think(ctx, update.content.text)
            return
        self.flush_thought(ctx)
        if isinstance(update, AgentMessageChunk):
            # An empty chunk would open a reply that history, holding no text, cannot show.
            if isinstance(update.content, TextContentBlock) and update.content.text:
                with turn.lock:
                    if turn.cancelled():
                        return
                    turn.partial += update.content.text
                    session.transcript.append_text(update.content.text)
            return
        if isinstance(update, ToolCallStart | ToolCallProgress):
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

    def _think(self, ctx: TurnContext, text: str) -> None:
        """A thought chunk streams into the reply's folded thinking section, as the built-in
        provider's thinking does; it is recorded once the agent moves on (flush_thought)."""
        turn = ctx.turn
        if not ctx.thought and not text.strip():
            return  # no empty fold for a thought that is only a line break so far
        with turn.lock:
            if turn.cancelled():
                return
            # Reply text before this thought is recorded first: history keeps their order.
            self._record_text(ctx)
            ctx.thought += text
            ctx.session.transcript.append_thinking(text)

    def _record_text(self, ctx: TurnContext) -> bool:
        """Record the reply text streamed so far as an assistant message; the caller holds
        the turn's lock or runs after the stream."""
        turn = ctx.turn
        if turn.cancelled() or not turn.partial:
            return False
        text, turn.partial = turn.partial, ""
        ctx.session.record(
            {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}
        )
        return True

    def flush_text(self, ctx: TurnContext) -> None:
        """Record the reply text streamed so far and end the reply (before a tool call line,
        so a reopened conversation shows them in order)."""
        with ctx.turn.lock:
            if not self._record_text(ctx):
                return
        ctx.session.transcript.end_reply()

    def flush_thought(self, ctx: TurnContext) -> None:
        """Record the thought streamed so far (already shown): an `acp` record that wire.py
        ignores and render_records shows as the same folded thinking section."""
        if not ctx.thought:
            return
        text, ctx.thought = ctx.thought, ""
        ctx.session.record({"type": "acp", "event": "thought", "text": text})

    def _tool_call(self, ctx: TurnContext, update: ToolCallStart | ToolCallProgress) -> None:
        """A tool call is one status line, rewritten in place as its status changes, with
        its locations (chips) and diffs under it. The reply text before it is recorded and
        ends only when the update shows something: what history holds, it shows the same."""
        call = ctx.calls.setdefault(
            update.tool_call_id, {"title": "tool call", "status": None, "row": None}
        )
        if update.title:
            call["title"] = " ".join(update.title.split())
        if update.kind:
            call["kind"] = update.kind
        status = update.status or ("pending" if isinstance(update, ToolCallStart) else None)
        transcript = ctx.session.transcript
        self._unasked(ctx, update.tool_call_id, call, status)
        head: tuple[str, str | None] | None = None
        if status and status != call["status"]:
            call["status"] = status
            head = narrator.call_status(call["title"], status)
            if call["row"] is not None:
                self.flush_text(ctx)
                transcript.set_line(call["row"], *head)
                ctx.session.record(
                    {
                        "type": "acp",
                        "event": "tool_status",
                        "id": update.tool_call_id,
                        "line": list(head),
                    }
                )
                head = None
        lines: list[tuple[str, str | None]] = [head] if head else []
        ws = ctx.session.workspace
        # Agents repeat a call's locations and diff in each update (Gemini CLI does): each
        # is shown once per call, and a diff the review gate showed already is not repeated.
        shown: set[str] = call.setdefault("shown", set())
        for loc in update.locations or []:
            # A location is shown as `path:line`, a chip the user may follow; never a jump.
            chip = narrator.call_location(_shown_path(ws, loc.path), max(1, loc.line or 1))
            if chip[0] not in shown:
                shown.add(chip[0])
                lines.append(chip)
        for item in update.content or []:
            if isinstance(item, FileEditToolCallContent):
                rel = _shown_path(ws, item.path)
                key = f"diff {rel}\0{item.old_text}\0{item.new_text}"
                if key in shown or _real(ws, item.path) in ctx.written:
                    continue
                shown.add(key)
                lines.append(narrator.call_diff_header(rel))
                lines += diff.compact_diff(item.old_text or "", item.new_text)
        if lines:
            self.flush_text(ctx)
            row = transcript.add_lines(lines)
            extra: dict[str, Any] = {"id": update.tool_call_id}
            if head:
                call["row"] = row
                extra["status_row"] = 0  # lines[0] is the status line tool_status rewrites
            ctx.session.record(_lines_record("tool_call", lines, **extra))

    def _unasked(
        self,
        ctx: TurnContext,
        call_id: str,
        call: dict[str, Any],
        status: Any,
        late: bool = False,
    ) -> None:
        """A write or a command that runs without a permission request is named while it runs (an
        edit of an agent whose edits come as fs/write_text_file is reviewed there)."""
        kind = call.get("kind")
        if status not in ("in_progress", "completed", "failed") or kind not in UNASKED_KINDS:
            return
        if call_id in ctx.asked or call.get("unasked") or own_tool(call["title"]) is not None:
            return
        if kind == "edit" and ctx.client_writes:
            return
        if status == "in_progress" and not late:
            # Some agents (codex-acp) report the call in progress, then ask: judged after a
            # moment, when it ends, or when the turn does, whichever comes first.
            ctx.deferred[call_id] = call
            asyncio.get_running_loop().call_later(
                UNASKED_GRACE_S, self._unasked, ctx, call_id, call, status, True
            )
            return
        if ctx.deferred.pop(call_id, None) is None and late:
            return  # judged already: it ended, or the turn did
        if ctx.turn.cancelled():
            return
        call["unasked"] = True
        self.flush_text(ctx)
        lines = narrator.agent_unasked(call["title"])
        ctx.session.transcript.add_lines(lines)
        ctx.session.record(_lines_record("unasked", lines))
        ctx.session.ui.schedule()

    def flush_unasked(self, ctx: TurnContext) -> None:
        """At the end of the turn: a call reported in progress that was never asked for."""
        for call_id, call in list(ctx.deferred.items()):
            self._unasked(ctx, call_id, call, "in_progress", True)

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
        text = await asyncio.to_thread(ctx.handle, None, self._read, ctx, path)
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

        # The buffer when it is loaded (unsaved text included, else up to date with the
        # file), else the disk. A buffer kept although its file changed is not handed over
        # as the file: the read fails with what is wrong (the agent's only channel).
        def kept(_: Any, code: str) -> None:
            rel = workspace.relative(ctx.session.workspace, real)
            raise _refused(disk.refused_read(rel, code))

        content = buffer_reader(ctx.turn.editor, kept)(real, MAX_READ_BYTES)
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
        place = ctx.session.gate.place()  # here, on the loop: in the order writes arrive
        await asyncio.to_thread(ctx.handle, place, self._write, ctx, path, content)
        return WriteTextFileResponse()

    def _write(self, ctx: TurnContext, path: str, content: str) -> None:
        session, turn = ctx.session, ctx.turn
        real = self._confined(ctx, path, "write")
        rel = workspace.relative(session.workspace, real)
        if session.mode == "plan":
            self._refuse(ctx, f"write to {rel}", "plan mode changes nothing")
        if ctx.over():
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
        proposal = Proposal("edit", rel, str(real), before, after, start, end)
        proposal.buffer = int(target.get("buffer") or 0)  # its hunks reviewed in the buffer
        result = review(turn, proposal)
        if result.is_error or result.content.startswith("partly accepted"):
            # What was taken (and why the rest was not) reaches the model with the next
            # message: ACP's write answer has no text, and Gemini CLI shows a refusal's
            # error object as "[object Object]".
            self.decisions.append(f"your write to {rel}: {result.content}")
        return result

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
        ctx.session.transcript.add_note(*narrator.refused(what, why))
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
        if ctx is None or ctx.over():
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        ctx.asked.add(tool_call.tool_call_id)
        place = ctx.session.gate.place()  # here, on the loop: in the order requests arrive
        chosen = await asyncio.to_thread(
            ctx.handle, place, self._permission, ctx, tool_call, options
        )
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
            session.transcript.add_note(*narrator.refused(f"permission: {title}", why))
            session.ui.schedule()
            return pick("reject_once", "reject_always")

        own = own_tool(title)
        if own is not None:
            # The built-in agent's rule for these tools, which never asks: a view is always
            # allowed, navigation only where the turn may act (Gemini CLI asks for every MCP
            # tool, so without this each reveal would wait for the user).
            if OWN_TOOLS[own] in allowed_kinds(session.mode, turn.scope is not None):
                return pick("allow_once", "allow_always")
            return reject("it moves your cursor, which this turn may not")
        if kind == "fetch":
            # The agent's own fetch is the network kind of the one policy (gate/policy.py):
            # never in Change with Agent, in plan mode only where hosts are allowed.
            hosts = bool(session.cfg.network.allow_hosts)
            if Kind.NETWORK not in allowed_kinds(session.mode, turn.scope is not None, hosts):
                if turn.scope is not None:
                    return reject("Change with Agent does not reach the network")
                return reject("plan mode reaches the network only with tools.network.allow_hosts")
        paths = _call_paths(session.workspace, call)
        if kind not in LOOKING:
            if session.mode == "plan":
                return reject("plan mode: nothing may change")
            if turn.scope is not None:
                if kind == "edit" and ctx.client_writes and _in_scope_file(ctx, paths):
                    # Its write comes as fs/write_text_file, held there to the selection.
                    return pick("allow_once", "allow_always")
                return reject("Change with Agent may change only the selection")
        # Only an edit's change comes back as fs/write_text_file, to be reviewed there: a
        # delete or a move is done by the agent itself, so it is asked here whatever the agent.
        reviewed_later = kind == "edit" and ctx.client_writes
        if kind in WRITING:
            dirty = [p for p in paths if _modified(turn, p)]
            if dirty and not reviewed_later:
                shown = ", ".join(workspace.relative(session.workspace, p) for p in dirty)
                return reject(f"{shown} has unsaved changes of yours")
            if reviewed_later or (kind == "edit" and session.autoaccept):
                # The write itself comes to the review gate (or autoaccept covers edits).
                return pick("allow_once", "allow_always")
        proposal = _permission_proposal(session.workspace, call)
        gate_kind = "edit" if kind in WRITING else "command"
        # What an "always" given to this request covers: the same call asked again; kept
        # (gate/approvals.py) when the agent offers an "always" option of its own.
        covers = (kind, title)
        key = [approvals.digest(session.cfg.provider.agent), kind, title]
        conversation = session.conversation.id if session.conversation else None
        kept = session.approvals.check(session.workspace, conversation, "acp", key)
        if kept is not None:
            session.transcript.add_note(*narrator.kept_rule_decided(kept.effect, kept.shown()))
            if kept.effect == "allow":
                return pick("allow_once", "allow_always")
            return pick("reject_once", "reject_always")
        if kind == "edit" and not reviewed_later:
            whole = self._whole_edit(ctx, call)
            if whole is not None:
                # Its diff reviewed hunk by hunk in the file's buffer, as a write would be.
                return self._reviewed_edit(ctx, title, whole, pick)
        keeps = any(o.kind in ("allow_always", "reject_always") for o in options)
        offered = tuple(s for s in SCOPES if keeps and (conversation or s == "always"))
        data: dict[str, Any] = {
            "permission": [o.name for o in options],
            "covers": covers,
            "remember": offered,
            "remember_why": "" if keeps else "the agent offers no “always” for it",
        }
        if proposal is not None:
            data["proposal"] = proposal
        session.transcript.add_note(*narrator.asked_permission(title))
        item = turn.gate.ask(gate_kind, f"allow {title}", data, cancelled=ctx.over)
        if proposal is not None and proposal.compared:
            # The view showed what the agent would write; nothing there is applied.
            turn.editor.close_compare(proposal.id)
        if turn.cancelled():
            return None  # the protocol's answer to a permission the user stopped: cancelled
        effect = "allow" if item.decision == "accept" else "deny"
        if item.scope != "once":
            rule = approvals.Rule(effect, "acp", key, title)
            try:
                session.approvals.remember(session.workspace, conversation, item.scope, [rule])
                session.transcript.add_note(*narrator.kept(effect, item.scope, [title]))
            except Refused as err:
                session.transcript.add_note(*narrator.refused("keeping the decision", err.message))
            # The same request waiting behind this one is decided by the same answer.
            turn.gate.decide_where(
                lambda other: other.data.get("covers") == covers,
                item.decision or "reject",
                scope=item.scope,
            )
        if item.decision != "accept":
            session.transcript.add_note(*narrator.rejected(item.reason))
            if item.reason.strip():
                self.decisions.append(f"rejected {title}: {item.reason.strip()}")
            if item.scope == "always":
                return pick("reject_always", "reject_once")
            return pick("reject_once", "reject_always")
        if kind in WRITING:
            # Allowed here, written by the agent itself: not a write past the gate.
            ctx.permitted.update(str(p) for p in paths)
        if kind == "execute":
            ctx.allowed_commands.append(title)
        session.transcript.add_note(*narrator.allowed(title))
        if item.scope == "always":
            return pick("allow_always", "allow_once")
        return pick("allow_once", "allow_always")

    def _whole_edit(self, ctx: TurnContext, call: ToolCallUpdate) -> _WholeEdit | None:
        """The file an edit permission would write, before and after, when its diff says it
        exactly: one file of the workspace, each diff block either the whole new text (no
        old text) or a fragment found once in the file (or everywhere, by the call's
        `replace_all`: Claude Code's Edit) and replaced. None when it cannot be told."""
        blocks = [c for c in call.content or [] if isinstance(c, FileEditToolCallContent)]
        ws = ctx.session.workspace
        reals = {_real(ws, b.path) for b in blocks}
        if not blocks or len(reals) != 1 or None in reals:
            return None
        real = workspace.resolve(ws, blocks[0].path)
        if real.is_dir():
            return None
        target = ctx.turn.editor.load_lines(str(real))
        if target.get("error"):
            return None
        missing = bool(target.get("missing"))
        before = "" if missing else diff.buffer_text(list(target["lines"]))
        raw = call.raw_input if isinstance(call.raw_input, dict) else {}
        text = before
        for block in blocks:
            if not block.old_text:
                text = block.new_text
                continue
            found = diff.count_occurrences(text, block.old_text)
            if found == 1 or (found > 1 and raw.get("replace_all") is True):
                text = text.replace(block.old_text, block.new_text)
            else:
                return None  # not where the diff says: the agent's own write will tell it
        after = diff.as_buffer_text(text) if text else ""
        if after == before:
            return None
        rel = workspace.relative(ws, real)
        if missing:
            return _WholeEdit(Proposal("create", rel, str(real), "", after))
        start, end = unique_region(before, after)
        proposal = Proposal("edit", rel, str(real), before, after, start, end)
        proposal.buffer = int(target.get("buffer") or 0)  # its hunks reviewed in the buffer
        return _WholeEdit(proposal)

    def _reviewed_edit(
        self,
        ctx: TurnContext,
        title: str,
        whole: _WholeEdit,
        pick: Callable[..., PermissionOption | None],
    ) -> PermissionOption | None:
        """The review of an agent's edit that it writes itself (its permission carries the
        diff). The agent's write is the user's decision only when the user took all of it:
        then the permission is allowed and the agent writes. Anything else (some hunks, an
        edit in the compare view, nothing) is refused to the agent; what the user took is
        applied by the gate itself (one undo step, the save rule), and the agent's model is
        told which hunks with the next message (prompt.decisions_block)."""
        turn, proposal = ctx.turn, whole.proposal
        real, rel = proposal.abspath, proposal.path

        def applier(turn: Turn, p: Proposal, text: str) -> ToolResult:
            if text == p.after:
                whole.agent_writes = True
                return ToolResult(f"accepted: the agent writes {rel}")
            p.applier = None  # the gate's own apply, by kind
            return apply_text(turn, p, text)

        proposal.applier = applier
        result = review(turn, proposal)
        if turn.cancelled():
            return None
        if whole.agent_writes and not result.is_error:
            ctx.permitted.add(real)  # written by the agent itself, as the user allowed
            return pick("allow_once", "allow_always")
        if not result.is_error:
            ctx.written.add(real)  # what the user took, applied by the gate
        self.decisions.append(
            f"your edit of {rel} ({title}) was not applied by you; the user's review: "
            f"{result.content}"
        )
        return pick("reject_once", "reject_always")

    # -- terminals: run as run_command is (providers/acp/terminals.py) ---------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        ctx = self._ctx()
        place = ctx.session.gate.place()  # here, on the loop: in the order requests arrive
        variables = {str(e.name): str(e.value) for e in env or []}
        try:
            terminal_id = await asyncio.to_thread(
                ctx.handle,
                place,
                ctx.terminals.create,
                ctx,
                command,
                args,
                variables,
                cwd,
                output_byte_limit,
                ctx.allowed_command,
            )
        except Refused as err:
            if not err.message.startswith("denied by the user"):
                ctx.session.transcript.add_note(*narrator.refused("terminal", err.message))
                ctx.session.ui.schedule()
            raise _refused(f"refused by sightline: {err.message}") from None
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        term = self._terminal(terminal_id)
        got = term.exit_status()
        status = None if got is None else TerminalExitStatus(exit_code=got[0], signal=got[1])
        return TerminalOutputResponse(
            output=term.text(), truncated=term.truncated, exit_status=status
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        ctx = self._ctx()
        self._terminal(terminal_id)
        code, sig = await asyncio.to_thread(ctx.handle, None, ctx.terminals.wait, ctx, terminal_id)
        return WaitForTerminalExitResponse(exit_code=code, signal=sig)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        ctx = self._ctx()
        self._terminal(terminal_id)
        await asyncio.to_thread(ctx.handle, None, ctx.terminals.kill, ctx, terminal_id)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        ctx = self.ctx
        if ctx is None:
            return ReleaseTerminalResponse()  # the turn's end released it already
        self._terminal(terminal_id)
        await asyncio.to_thread(ctx.handle, None, ctx.terminals.release, ctx, terminal_id)
        return ReleaseTerminalResponse()

    def _terminal(self, terminal_id: str) -> Terminal:
        ctx = self._ctx()
        try:
            return ctx.terminals.get(terminal_id)
        except Refused as err:
            raise RequestError.resource_not_found(terminal_id) from err

    def _ctx(self) -> TurnContext:
        ctx = self.ctx
        if ctx is None or ctx.over():
            raise _refused("no turn is running")
        return ctx


@dataclass
class _WholeEdit:
    """An agent's edit as a proposal of the whole file, and whether the user took it whole."""

    proposal: Proposal
    agent_writes: bool = False


# Gemini CLI tells its approval-mode changes as a whole message chunk of this form (its
# handleApprovalModeChanged): a side message, not part of the reply.
_MODE_UPDATE = re.compile(r"\[MODE_UPDATE\] ?(\S+)\s*")


def side_mode(update: Any) -> str | None:
    """The mode a message chunk that is an agent's side message names, else None."""
    if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
        found = _MODE_UPDATE.fullmatch(update.content.text)
        if found:
            return found.group(1)
    return None


def own_tool(title: str) -> str | None:
    """Which of sightline's own MCP tools a permission request is for, or None. Only the
    exact titles agents are known to give them: Gemini CLI's `NAME (SERVER MCP Server)` and
    Claude Code's `mcp__SERVER__NAME`; anything else goes to the gate."""
    for name in OWN_TOOLS:
        if title in (f"{name} ({MCP_SERVER} MCP Server)", f"mcp__{MCP_SERVER}__{name}"):
            return name
    return None


def _refused(message: str) -> RequestError:
    return RequestError(REFUSED, message)


def _shown_path(ws: str, path: str) -> str:
    try:
        return workspace.relative(ws, workspace.resolve(ws, path))
    except Refused:
        return path


def _real(ws: str, path: str) -> str | None:
    try:
        return str(workspace.resolve(ws, path))
    except Refused:
        return None


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


def _in_scope_file(ctx: TurnContext, paths: list[Any]) -> bool:
    """Whether a permission names only the file of the turn's selection (and names one)."""
    sel = ctx.turn.scope
    if sel is None or not paths:
        return False
    try:
        target = workspace.resolve(ctx.session.workspace, sel.name)
    except Refused:
        return False  # a selection in a buffer without a workspace file
    return all(p == target for p in paths)


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
