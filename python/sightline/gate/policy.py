"""The tool policy: which kinds of tool a turn may use, keyed on its mode and whether it is
scoped. A rule over kinds, so a new tool (built-in, MCP or an ACP agent's) is placed by its
kind alone; it lives in the gate because the agent, the tools and the ACP provider all obey it."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    READ = "read"
    WRITE = "write"
    EXEC = "exec"
    SCOPED_WRITE = "scoped_write"
    PLAN = "plan"
    VIEW = "view"
    NAVIGATE = "navigate"


def allowed_kinds(mode: str, scoped: bool) -> frozenset[Kind]:
    """The policy is a rule over kinds, so a new tool is placed by its kind alone."""
    kinds = {Kind.READ, Kind.VIEW}
    if mode == "plan":
        kinds.add(Kind.PLAN)
    elif scoped:
        kinds.add(Kind.SCOPED_WRITE)
    else:
        kinds |= {Kind.WRITE, Kind.EXEC, Kind.NAVIGATE}
    return frozenset(kinds)
