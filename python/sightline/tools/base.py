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
