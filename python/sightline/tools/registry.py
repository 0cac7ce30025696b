"""The explicit list of every tool the core knows (tools_for() picks a turn's subset), and
the label of a call, which reads the called tool's schema."""

from __future__ import annotations

import json
import re
from typing import Any

from sightline.domain import secrets
from sightline.tools import (
    command,
    diagnostics,
    network,
    plan,
    read,
    search,
    selection,
    skills,
    view,
    write,
)
from sightline.tools.base import Tool


def default_registry() -> list[Tool]:
    tools: list[Tool] = [
        *read.TOOLS,
        *diagnostics.TOOLS,
        skills.LOAD_SKILL,
        *write.TOOLS,
        *command.TOOLS,
        *network.TOOLS,
        *search.TOOLS,
        *plan.TOOLS,
        selection.REPLACE_SELECTION,
        view.REVEAL,
        view.ATTACHMENT,
        view.GO_TO,
    ]
    return tools


# The argument that says what a call is about, in the order looked for.
_LABEL_KEYS = ("path", "file_path", "command", "pattern", "glob", "url", "query")
# An MCP tool's label: at most this many characters of arguments, of each value.
LABEL_CHARS = 80
LABEL_VALUE_CHARS = 40
# Arguments whose values are never shown (a token passed to an MCP tool).
_SECRET_ARG = re.compile(r"token|secret|passw|api.?key|auth|credential|cookie|private", re.I)


def call_label(name: str, args: dict[str, Any]) -> str:
    """One line naming a tool call for the transcript, e.g. `read_file src/app.py`.

    Only an argument the tool declares may label it: the model can send any argument, and
    one the tool ignores (a `path` for replace_selection) would name what the call does not
    touch. An MCP tool (`mcp__…`) gets every argument in short, since the server receives
    them all (`mcp__docs__search query="gate", limit=3`); another tool the core does not
    know is labelled by its name alone."""
    if name.startswith("mcp__"):
        shown = arguments(args)
        return f"{name} {shown}" if shown else name
    tool = next((t for t in default_registry() if t.name == name), None)
    declared = tool.input_schema.get("properties", {}) if tool is not None else {}
    for key in _LABEL_KEYS:
        value = args.get(key)
        if key in declared and isinstance(value, str) and value:
            first = value.splitlines()[0] if value.strip() else value
            if len(first) > 80:
                first = first[:79] + "…"
            return f"{name} {first}"
    return name


def arguments(args: dict[str, Any]) -> str:
    """`query="gate", limit=3`: the arguments in short, one line, secrets left out (a value
    the redactor knows, or any value of an argument named like a token or a password)."""
    parts: list[str] = []
    for key, value in args.items():
        if _SECRET_ARG.search(str(key)):
            shown = "…"
        else:
            shown = json.dumps(value, ensure_ascii=False, default=str)
            shown = " ".join(secrets.redact(shown).split())
            if len(shown) > LABEL_VALUE_CHARS:
                shown = shown[: LABEL_VALUE_CHARS - 1] + "…"
        parts.append(f"{key}={shown}")
    line = ", ".join(parts)
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"
