"""`@mcp:{server}:{uri}` mentions: the enabled MCP servers' resources in the composer's `@`
completion, and their text for the model when the message is sent.

The hooks the rest of the code calls (one place each): `complete()` from
ComposerCompletion.candidates, `parts()` from the turn's worker (Turn.late, set by
Core) — reading a resource waits on the server, which pynvim's thread must never do.
Like `@ext`: only servers enabled for the workspace count (a mentioned one not started
yet is started, on the worker), each resource
once, an unknown one is skipped silently, the text is bounded by mentions.max_file_bytes and
what remains of mentions.max_total_bytes, and the parts come after the typed text.
A server name holding `:` or whitespace cannot be mentioned (the grammar is
domain/mentions.py's; the send parses its text once and passes the mentions here).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sightline.domain import secrets
from sightline.domain.mentions import Mention
from sightline.domain.text import clean_display_text
from sightline.mentions.completion import CompletionItem
from sightline.mentions.menu_fit import cut_middle

if TYPE_CHECKING:
    from sightline.mcp_client.manager import Manager

log = logging.getLogger(__name__)

PREFIX = "mcp:"
MAX_ITEMS = 50
READ_TIMEOUT_S = 10.0


def complete(
    manager: Manager, workspace: str, token: str, items: list[CompletionItem]
) -> list[CompletionItem]:
    """The completion items for the text after `@`: with `mcp:`, only resources; otherwise
    the items found so far, then matching resources. Never waits: a mention's `@` starts the
    enabled servers in the background, so their resources are there a few keys later."""
    if token == "" or token.startswith(PREFIX):
        manager.start_in_background(workspace)
    query = token[len(PREFIX) :] if token.startswith(PREFIX) else token
    found = []
    for name, server in manager.running(workspace).items():
        if ":" in name or _has_space(name):
            continue
        for res in server.resources:
            word = f"@{PREFIX}{name}:{res.uri!s}"
            if query.lower() in word[len(PREFIX) + 1 :].lower():
                title = res.title or res.name or ""
                about = clean_display_text(res.description or title, 60)
                found.append(
                    CompletionItem(
                        kind="mcp",
                        word=word,
                        abbr=cut_middle(clean_display_text(word), 80),
                        menu=clean_display_text(name, 20) + (f" · {about}" if about else ""),
                        info=clean_display_text(f"{title} {res.description or ''}".strip()),
                    )
                )
    if token.startswith(PREFIX):
        starting = _starting(manager, workspace, token)
        return found[: MAX_ITEMS - len(starting)] + starting
    return items + found[: max(0, MAX_ITEMS - len(items))]


def _starting(manager: Manager, workspace: str, token: str) -> list[CompletionItem]:
    """While servers start, `@mcp:` says so with an item that inserts nothing new (its word
    is what was typed); the composer asks again until they are up (KindStyle.pending)."""
    names = [n for n in manager.starting(workspace) if ":" not in n and not _has_space(n)]
    if not names:
        return []
    listed = clean_display_text(", ".join(names), 40)
    return [
        CompletionItem(
            kind="mcp_starting",
            word="@" + token,
            abbr="starting…",
            menu=listed,
            info=f"MCP servers starting: {listed}; their resources show here once they are up.",
        )
    ]


def _has_space(name: str) -> bool:
    return any(c.isspace() for c in name)


def parts(
    manager: Manager,
    workspace: str | Path,
    found: Sequence[Mention],
    max_file_bytes: int,
    remaining_bytes: int,
) -> list[str]:
    """The parts of the message's `@mcp:` mentions (others in `found` are not ours)."""
    mentions = [(m.server, m.uri) for m in found if m.kind == "mcp"]
    if not mentions:
        return []
    from sightline.mcp_client.client import McpFailure

    running = manager.for_mentions(workspace, {name for name, _ in mentions})
    out = []
    for name, uri in mentions:
        server = running.get(name)
        if server is None or not any(str(r.uri) == uri for r in server.resources):
            continue
        try:
            result = manager.read_resource(server, uri, READ_TIMEOUT_S)
        except (McpFailure, TimeoutError) as err:
            log.debug("@mcp:%s:%s not attached: %s", name, uri, err)
            continue
        body = "\n".join(_content_text(c) for c in getattr(result, "contents", []) or [])
        data = secrets.redact(body).encode("utf-8", "replace")
        cut = len(data) > max_file_bytes
        data = data[:max_file_bytes]
        attr = _attr(f"{name}:{uri}")
        if len(data) > remaining_bytes:
            out.append(
                f'<mcp_resource uri="{attr}" omitted="true">\n[left out: {len(data)} bytes do '
                "not fit in what remains of the context budget of this message]\n</mcp_resource>"
            )
            continue
        remaining_bytes -= len(data)
        shown = data.decode("utf-8", "ignore")
        shown = shown if shown.endswith("\n") or not shown else shown + "\n"
        note = f"[cut: only the first {max_file_bytes} bytes are shown]\n" if cut else ""
        out.append(f'<mcp_resource uri="{attr}">\n{shown}{note}</mcp_resource>')
    return out


def _content_text(contents: object) -> str:
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return text
    from sightline.mcp_client.tools import resource_text

    return resource_text(contents, 0)


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
