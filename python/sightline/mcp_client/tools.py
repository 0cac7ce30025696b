"""An MCP server's tools as ordinary Tool entries with a kind, and their results as text.

Kinds: a tool the user declared (`tools = { name = 'read' }`) has that kind; else the server's
declared `kind`; else, only when the user opted in with `trust_annotations`, `read` for a tool
whose annotations say readOnlyHint; else `exec`. An `exec` tool is asked every call through
the review gate, as run_command is. Annotations are always shown to the user, in the ask and
in `:Sightline mcp list`.

Names are unique by construction, whatever servers the user has, and valid for every provider
(Anthropic, OpenAI and Gemini agree on a letter first, then `[a-zA-Z0-9_-]`, at most 64):
`mcp__{server}__{tool}` when that reads back unambiguously — the server's name of letters,
digits and `-` with single inner `_` (so the first `__` ends it), the tool's of letters,
digits, `_` and `-`, 64 characters at most; else `mcp_{h}_{hint}` where h is 12 hex digits of
a hash of the real names and the hint those names made safe, cut to fit. The two shapes never
meet (`mcp__` vs `mcp_` + hex digit), so `a` + `b__c` and `a__b` + `c` get two names. A name
is a function of (server, tool) alone: stable across restarts and whatever else is listed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sightline.domain import narrator, secrets
from sightline.domain.errors import Refused
from sightline.domain.mcp_config import ServerConfig
from sightline.gate import approvals
from sightline.gate.decisions import SCOPES
from sightline.gate.policy import Kind
from sightline.gate.proposals import next_id
from sightline.gate.turn_contract import ToolResult
from sightline.tools.base import Tool
from sightline.tools.output import HeadTail, clip_line

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

MAX_NAME = 64
MAX_DESCRIPTION = 4000
MAX_SCHEMA_BYTES = 65536
MAX_RESULT_BYTES = 30_000
MAX_RESULT_LINES = 400
SMALL_RESOURCE_CHARS = 4000
SHOWN_ARG_LINES = 20
HASH_HEX = 12
_BAD = re.compile(r"[^a-zA-Z0-9_-]")
_PLAIN_SERVER = re.compile(r"[a-zA-Z0-9-]+(?:_[a-zA-Z0-9-]+)*")
_PLAIN_TOOL = re.compile(r"[a-zA-Z0-9_-]+")
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def tool_name(server: str, tool: str) -> str:
    plain = f"mcp__{server}__{tool}"
    if _PLAIN_SERVER.fullmatch(server) and _PLAIN_TOOL.fullmatch(tool) and len(plain) <= MAX_NAME:
        return plain
    # Server names are printable (mcp_config), so NUL separates the two unambiguously.
    key = f"{server}\0{tool}".encode(errors="surrogatepass")
    digest = hashlib.sha256(key).hexdigest()[:HASH_HEX]
    return f"mcp_{digest}_{_BAD.sub('_', f'{server}__{tool}')}"[:MAX_NAME]


def hints_of(tool: Any) -> dict[str, Any]:
    """The hints a server gives (readOnlyHint: True, …), as named in the protocol."""
    found = getattr(tool, "annotations", None)
    if found is None:
        return {}
    data = found.model_dump(by_alias=True, exclude_none=True)
    return {k: v for k, v in data.items() if k in HINTS}


def hints_text(hints: dict[str, Any]) -> str:
    return ", ".join(f"{k}={'true' if v else 'false'}" for k, v in hints.items())


def kind_of(cfg: ServerConfig, tool: str, hints: dict[str, Any]) -> Kind:
    declared = cfg.declared_kind(tool)
    if declared is not None:
        return Kind.READ if declared == "read" else Kind.EXEC
    if cfg.trust_annotations and hints.get("readOnlyHint") is True:
        return Kind.READ
    return Kind.EXEC


def could_offer(cfg: ServerConfig, kinds: frozenset[Kind]) -> bool:
    """Whether a turn allowing `kinds` could get any tool of this server (known before it is
    started: a plan turn never starts a server whose tools can only be exec)."""
    if Kind.EXEC in kinds:
        return True
    if Kind.READ not in kinds:
        return False
    return cfg.kind == "read" or cfg.trust_annotations or any(k == "read" for _, k in cfg.tools)


@dataclass(frozen=True)
class Listed:
    """One server tool as offered (or refused), for the turn and for the listing."""

    name: str  # the server's
    api_name: str
    kind: Kind
    hints: dict[str, Any]
    description: str
    schema: dict[str, Any] | None
    refused: str | None = None


def listed_tools(cfg: ServerConfig, tools: list[Any]) -> list[Listed]:
    out: list[Listed] = []
    seen: set[str] = set()
    for tool in tools:
        raw_name = str(getattr(tool, "name", ""))
        hints = hints_of(tool)
        schema = getattr(tool, "input_schema", None)
        refused = "the server lists it twice" if raw_name in seen else _schema_problem(schema)
        seen.add(raw_name)
        text = getattr(tool, "description", None) or getattr(tool, "title", None) or ""
        out.append(
            Listed(
                name=raw_name,
                api_name=tool_name(cfg.name, raw_name),
                kind=kind_of(cfg, raw_name, hints),
                hints=hints,
                description=str(text)[:MAX_DESCRIPTION],
                schema=schema if refused is None else None,
                refused=refused,
            )
        )
    return out


def _schema_problem(schema: object) -> str | None:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its input schema is not an object schema"
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError):
        return "its input schema is not JSON"
    if size > MAX_SCHEMA_BYTES:
        return f"its input schema is larger than {MAX_SCHEMA_BYTES} bytes"
    return None


Caller = Callable[["Turn", str, dict[str, Any]], Any]


def as_tool(cfg: ServerConfig, listed: Listed, call: Caller) -> Tool:
    assert listed.schema is not None
    about = f"(MCP tool {listed.name} of server {cfg.name}"
    about += ", runs after the user allows it)" if listed.kind == Kind.EXEC else ")"
    description = f"{listed.description}\n{about}" if listed.description else about

    def handler(turn: Turn, args: dict[str, Any]) -> ToolResult:
        return run(turn, cfg, listed, args, call)

    return Tool(listed.api_name, listed.kind, description, listed.schema, handler)


def run(
    turn: Turn, cfg: ServerConfig, listed: Listed, args: dict[str, Any], call: Caller
) -> ToolResult:
    session = turn.session
    if listed.kind == Kind.EXEC:
        denied = _ask(turn, cfg, listed, args)
        if denied is not None:
            return denied
    else:
        session.ui.schedule()  # the call's line shows while the server works
    from sightline.mcp_client.client import McpFailure, Stopped

    try:
        result = call(turn, listed.name, args)
    except Stopped:
        return ToolResult("stopped with the turn; the call was cancelled", True)
    except TimeoutError:
        timeout = session.cfg.mcp_call_timeout_ms / 1000
        session.transcript.add_note(*narrator.mcp_timed_out(cfg.name, listed.name, timeout))
        return ToolResult(
            f"timed out after {timeout:g} s (mcp.call_timeout_ms); the call was cancelled", True
        )
    except McpFailure as err:
        return ToolResult(f"MCP server {cfg.name} failed: {err}", True)
    return format_result(result)


def approval_key(cfg: ServerConfig, listed: Listed) -> list[str]:
    """What a kept approval of this tool names: the server and the tool, and a digest of the
    server's whole definition and of the tool as listed (a change asks again). The digest
    only: env and header values may be secrets."""
    server = {
        "source": cfg.source,
        "command": cfg.command,
        "args": list(cfg.args),
        "env": sorted(cfg.env),
        "url": cfg.url,
        "headers": sorted(cfg.headers),
    }
    tool = {"description": listed.description, "schema": listed.schema, "hints": listed.hints}
    return [cfg.name, listed.name, approvals.digest({"server": server, "tool": tool})]


def _ask(turn: Turn, cfg: ServerConfig, listed: Listed, args: dict[str, Any]) -> ToolResult | None:
    session = turn.session
    summary = f"MCP {cfg.name}/{listed.name}"
    key = approval_key(cfg, listed)
    conversation = session.conversation.id if session.conversation else None
    kept = session.approvals.check(session.workspace, conversation, "mcp", key)
    if kept is not None:
        session.transcript.add_note(*narrator.kept_rule_decided(kept.effect, kept.shown()))
        if kept.effect == "allow":
            return None
        return ToolResult(
            "denied by the user (a rule they kept for this tool); it did not run.", True
        )
    shown_args = json.dumps(args, ensure_ascii=False, indent=1, sort_keys=True)
    lines = shown_args.splitlines()
    if len(lines) > SHOWN_ARG_LINES:
        lines = [*lines[:SHOWN_ARG_LINES], f"… [{len(lines) - SHOWN_ARG_LINES} more lines]"]
    trusted = f"mcp.servers.{cfg.name}.trust_annotations" if cfg.trust_annotations else None
    hints = hints_text(listed.hints) if listed.hints else ""
    clipped = [clip_line(line, 200) for line in lines]
    session.transcript.add_lines(
        [
            *narrator.mcp_ask(summary, clipped, hints, trusted),
            narrator.keeps([f"{cfg.name}/{listed.name} (any arguments, this server as it is)"], ""),
        ]
    )
    session.ui.event(
        "SightlineProposal",
        {
            "id": next_id(),
            "kind": "command",
            "summary": summary,
            "command": shown_args,
            "autoaccept": False,
        },
    )
    offered = tuple(s for s in SCOPES if conversation or s == "always")
    data = {"mcp": cfg.name, "tool": listed.name, "args": args, "remember": offered}
    item = turn.gate.ask("command", summary, data)
    if item.scope != "once" and item.decision is not None:
        effect = "allow" if item.decision == "accept" else "deny"
        shown = f"{cfg.name}/{listed.name}"
        rule = approvals.Rule(effect, "mcp", key, shown)
        try:
            session.approvals.remember(session.workspace, conversation, item.scope, [rule])
            session.transcript.add_note(*narrator.kept(effect, item.scope, [shown]))
        except Refused as err:
            session.transcript.add_note(*narrator.refused("keeping the decision", err.message))
    if item.decision == "accept" and not turn.cancelled():
        return None
    told = "denied by the user" + (f": {item.reason}" if item.reason else "")
    session.transcript.add_note(*narrator.rejected(item.reason))
    return ToolResult(told + "; the tool did not run.", True)


def format_result(result: Any) -> ToolResult:
    parts = [summarise(block) for block in (getattr(result, "content", None) or [])]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    sink = HeadTail(MAX_RESULT_BYTES)
    sink.feed("\n".join(parts).encode("utf-8", "replace"))
    text = secrets.redact(sink.text())
    lines = [clip_line(line) for line in text.splitlines()]
    if len(lines) > MAX_RESULT_LINES:
        cut = len(lines) - MAX_RESULT_LINES
        head, tail = MAX_RESULT_LINES // 4, MAX_RESULT_LINES * 3 // 4
        lines = [*lines[:head], f"… [{cut} lines cut] …", *lines[-tail:]]
    body = "\n".join(lines) or "(no output)"
    return ToolResult(body, bool(getattr(result, "is_error", False)))


def _decoded_size(data: object) -> int:
    if not isinstance(data, str):
        return 0
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def summarise(block: Any) -> str:
    """One content block as text: text as is, anything else described."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "?"
        return f"[{kind}: {mime}, {_decoded_size(getattr(block, 'data', None))} bytes]"
    if kind == "resource_link":
        return f"[resource link: {getattr(block, 'uri', '?')}]"
    if kind == "resource":
        return resource_text(getattr(block, "resource", None), SMALL_RESOURCE_CHARS)
    return f"[{kind or 'unknown'} content]"


def resource_text(contents: Any, small: int) -> str:
    uri = getattr(contents, "uri", "?")
    text = getattr(contents, "text", None)
    mime = getattr(contents, "mime_type", None)
    if isinstance(text, str):
        if len(text) <= small:
            return f"[resource: {uri}]\n{text}"
        return f"[resource: {uri}, {len(text)} characters of text, not shown]"
    size = _decoded_size(getattr(contents, "blob", None))
    return f"[resource: {uri}, {mime or 'binary'}, {size} bytes]"
