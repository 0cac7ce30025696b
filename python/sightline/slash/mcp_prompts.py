"""MCP prompts of the user's enabled servers as `/mcp:{server}:{prompt}` commands.

Typing `/` starts the enabled servers in the background (as `@mcp:` does); their prompts
are offered once they are up, with their arguments as `name=value` words (completed after
the command's name).  Sent, a missing required argument is asked for (vim.ui.input), the
prompt is fetched on a worker thread (it waits on the server, which Neovim's thread never
does) and its messages' text becomes the user turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sightline.domain import secrets
from sightline.domain.text import clean_display_text
from sightline.mentions.completion import CompletionItem
from sightline.slash.catalog import Command
from sightline.slash.expand import words

if TYPE_CHECKING:
    from sightline.mcp_client.manager import Manager

PREFIX = "mcp:"
GET_TIMEOUT_S = 20.0
MAX_PROMPT_BYTES = 256 * 1024


@dataclass(frozen=True)
class Argument:
    name: str
    description: str
    required: bool


@dataclass(frozen=True)
class McpPrompt:
    server: str
    prompt: str
    arguments: tuple[Argument, ...]


def _plain(name: str) -> bool:
    return bool(name) and ":" not in name and not any(c.isspace() for c in name)


def commands(manager: Manager, workspace: str) -> list[Command]:
    """The running servers' prompts (the enabled ones are started in the background)."""
    manager.start_in_background(workspace)
    out: list[Command] = []
    for server_name, server in manager.running(workspace).items():
        if not _plain(server_name):
            continue
        for prompt in server.prompts:
            name = getattr(prompt, "name", "")
            if not isinstance(name, str) or not name or any(c.isspace() for c in name):
                continue
            args = tuple(
                Argument(
                    str(a.name),
                    clean_display_text(getattr(a, "description", None) or ""),
                    bool(getattr(a, "required", False)),
                )
                for a in (getattr(prompt, "arguments", None) or [])
                if _plain(str(getattr(a, "name", "")))
            )
            hint = " ".join(a.name + "=" if a.required else f"[{a.name}=]" for a in args)
            about = getattr(prompt, "description", None) or getattr(prompt, "title", None) or ""
            out.append(
                Command(
                    f"{PREFIX}{server_name}:{name}",
                    "mcp",
                    str(about) or f"a prompt of the MCP server {server_name}",
                    f"MCP {server_name}",
                    hint,
                    McpPrompt(server_name, name, args),
                )
            )
    return out


def given(prompt: McpPrompt, arguments: str) -> dict[str, str]:
    """The `name=value` words typed for the prompt's arguments."""
    names = {a.name for a in prompt.arguments}
    out: dict[str, str] = {}
    for word in words(arguments):
        key, eq, value = word.partition("=")
        if eq and key in names:
            out[key] = value
    return out


def argument_items(prompt: McpPrompt, arguments: str, current: str) -> list[CompletionItem]:
    """`name=` items for the arguments not typed yet whose name starts with `current`."""
    typed = given(prompt, arguments)
    return [
        CompletionItem(
            kind="mcp_prompt",
            word=f"{a.name}=",
            abbr=f"{a.name}=",
            menu=("required" if a.required else "optional")
            + (f" · {clean_display_text(a.description, 50)}" if a.description else ""),
            info=a.description,
        )
        for a in prompt.arguments
        if a.name not in typed and a.name.startswith(current)
    ]


def fetch_text(manager: Manager, workspace: str, prompt: McpPrompt, args: dict[str, str]) -> str:
    """The prompt's messages as one text (waits on the server: a worker thread only)."""
    from sightline.mcp_client.client import McpFailure

    running = manager.for_mentions(workspace, {prompt.server})
    server = running.get(prompt.server)
    if server is None:
        raise McpFailure(f"the MCP server {prompt.server} is not running")
    result = manager.get_prompt(server, prompt.prompt, args, GET_TIMEOUT_S)
    parts = [_message_text(m) for m in getattr(result, "messages", None) or []]
    text = "\n\n".join(p for p in parts if p)
    data = secrets.redact(text).encode("utf-8", "replace")[:MAX_PROMPT_BYTES]
    return data.decode("utf-8", "ignore")


def _message_text(message: Any) -> str:
    content = getattr(message, "content", None)
    role = getattr(message, "role", "user")
    text = getattr(content, "text", None)
    if not isinstance(text, str):
        resource = getattr(content, "resource", None)
        text = getattr(resource, "text", None)
        if not isinstance(text, str):
            kind = getattr(content, "type", "content")
            text = f"[{kind} left out: only text is sent]"
    return text if role == "user" else f"(the prompt's {role} message:)\n{text}"
