"""The explicit list of every tool the core knows; tools_for() picks a turn's subset."""

from __future__ import annotations

from sightline.tools import command, plan, read, view, write
from sightline.tools.base import Tool


def default_registry() -> list[Tool]:
    tools: list[Tool] = [
        *read.TOOLS,
        *write.TOOLS,
        *command.TOOLS,
        *plan.TOOLS,
        view.REVEAL,
        view.GO_TO,
    ]
    return tools
