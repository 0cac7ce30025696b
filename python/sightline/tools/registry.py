"""The explicit list of every tool the core knows (tools_for() picks a turn's subset), and
the label of a call, which reads the called tool's schema."""

from __future__ import annotations

from typing import Any

from sightline.tools import command, diagnostics, plan, read, selection, view, write
from sightline.tools.base import Tool


def default_registry() -> list[Tool]:
    tools: list[Tool] = [
        *read.TOOLS,
        *diagnostics.TOOLS,
        *write.TOOLS,
        *command.TOOLS,
        *plan.TOOLS,
        selection.REPLACE_SELECTION,
        view.REVEAL,
        view.ATTACHMENT,
        view.GO_TO,
    ]
    return tools


# The argument that says what a call is about, in the order looked for.
_LABEL_KEYS = ("path", "file_path", "command", "pattern", "glob")


def call_label(name: str, args: dict[str, Any]) -> str:
    """One line naming a tool call for the transcript, e.g. `read_file src/app.py`.

    Only an argument the tool declares may label it: the model can send any argument, and
    one the tool ignores (a `path` for replace_selection) would name what the call does not
    touch. A tool the core does not know is labelled by its name alone."""
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
