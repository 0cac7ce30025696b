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
    # Reaches the network (fetch_url, web_search): asked every call unless the host is in
    # tools.network.allow_hosts; autoaccept never covers it (tools/network.py).
    NETWORK = "network"


def allowed_kinds(mode: str, scoped: bool, hosts_allowed: bool = False) -> frozenset[Kind]:
    """The policy is a rule over kinds, so a new tool is placed by its kind alone.

    `hosts_allowed`: the user allowed hosts (tools.network.allow_hosts), the only way the
    network reaches a plan turn (and there, only those hosts); never a scoped one."""
    kinds = {Kind.READ, Kind.VIEW}
    if mode == "plan":
        kinds.add(Kind.PLAN)
        if hosts_allowed and not scoped:
            kinds.add(Kind.NETWORK)
    elif scoped:
        kinds.add(Kind.SCOPED_WRITE)
    else:
        kinds |= {Kind.WRITE, Kind.EXEC, Kind.NAVIGATE, Kind.NETWORK}
    return frozenset(kinds)
