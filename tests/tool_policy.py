"""The design's tool policy table: which tools each mode and scope offers."""

from __future__ import annotations

from sightline.tools.registry import default_registry

# DESIGN.md, "Tools and the policy that picks them": tool → (normal, plan, scoped, scoped+plan).
TABLE = {
    "read_file": (1, 1, 1, 1),
    "list_files": (1, 1, 1, 1),
    "grep": (1, 1, 1, 1),
    "get_diagnostics": (1, 1, 1, 1),
    "load_skill": (1, 1, 1, 1),
    "propose_edit": (1, 0, 0, 0),
    "propose_create": (1, 0, 0, 0),
    "run_command": (1, 0, 0, 0),
    "replace_selection": (0, 0, 1, 0),
    "update_plan": (0, 1, 0, 1),
    "reveal_editor_range": (1, 1, 1, 1),
    "reveal_attachment": (1, 1, 1, 1),
    "go_to_position": (1, 0, 0, 0),
    # kind network: in plan mode only when tools.network.allow_hosts names hosts
    "fetch_url": (1, 0, 0, 0),
    "web_search": (1, 0, 0, 0),
}
# Offered only when the user's config gives them what they need (a search service).
NEEDS_CONFIG = {"web_search"}
# Offered to a turn only when there is a skill to load (agent/loop.py tools).
NEEDS_SKILLS = {"load_skill"}


COLUMNS = [("normal", False), ("plan", False), ("normal", True), ("plan", True)]


def expected(column: int, skills: bool = True) -> set[str]:
    """The tools of a column; `skills`: the workspace has a skill to load."""
    registered = {t.name for t in default_registry()}
    return {
        name
        for name, cols in TABLE.items()
        if cols[column]
        and name in registered
        and name not in NEEDS_CONFIG
        and (skills or name not in NEEDS_SKILLS)
    }
