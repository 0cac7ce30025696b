"""The explicit list of every tool the core knows; tools_for() picks a turn's subset."""

from __future__ import annotations

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
