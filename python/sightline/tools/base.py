"""The Tool dataclass, its kinds, and the policy that picks a turn's tools."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sightline.gate.policy import Kind, allowed_kinds
from sightline.gate.turn_contract import ToolResult

if TYPE_CHECKING:
    from sightline.domain.config import CoreConfig

Handler = Callable[[Any, dict[str, Any]], ToolResult]


def always(cfg: CoreConfig | None) -> bool:
    return True


@dataclass(frozen=True)
class Tool:
    name: str
    kind: Kind
    description: str
    input_schema: dict[str, Any]
    handler: Handler = field(compare=False)
    # Whether the user's config offers it at all (web_search needs a search backend);
    # None = the config before the Lua side sent one, or a caller that has none.
    offered: Callable[[CoreConfig | None], bool] = field(default=always, compare=False)

    def spec(self) -> dict[str, Any]:
        """The definition sent to the model."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def tools_for(
    registry: Iterable[Tool], mode: str, scoped: bool, cfg: CoreConfig | None = None
) -> list[Tool]:
    hosts = cfg is not None and bool(cfg.network.allow_hosts)
    kinds = allowed_kinds(mode, scoped, hosts)
    return [tool for tool in registry if tool.kind in kinds and tool.offered(cfg)]
