"""The Tool dataclass, its kinds, and the policy that picks a turn's tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sightline.gate.policy import Kind, allowed_kinds
from sightline.gate.turn_contract import ToolResult

Handler = Callable[[Any, dict[str, Any]], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    kind: Kind
    description: str
    input_schema: dict[str, Any]
    handler: Handler = field(compare=False)

    def spec(self) -> dict[str, Any]:
        """The definition sent to the model."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def tools_for(registry: Iterable[Tool], mode: str, scoped: bool) -> list[Tool]:
    kinds = allowed_kinds(mode, scoped)
    return [tool for tool in registry if tool.kind in kinds]


# The argument that says what a call is about, in the order looked for.
_LABEL_KEYS = ("path", "file_path", "command", "pattern", "glob")


def call_label(name: str, args: dict[str, Any]) -> str:
    """One line naming a tool call for the transcript, e.g. `read_file src/app.py`.

    Only an argument the tool declares may label it: the model can send any argument, and
    one the tool ignores (a `path` for replace_selection) would name what the call does not
    touch. A tool the core does not know is labelled by its name alone."""
    from sightline.tools.registry import default_registry  # the registry imports this module

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
