"""`:Sightline skills [list]`, `enable {name}`, `disable {name}`: the core's answers (the
listing's rows, the confirmation's words)."""

from __future__ import annotations

from typing import Any

from sightline.domain import skills
from sightline.domain.errors import Refused


def listing(workspace: str, config_dir: str | None) -> list[dict[str, Any]]:
    found, skipped = skills.discover(workspace, config_dir)
    rows: list[dict[str, Any]] = [
        {
            "name": s.name,
            "description": s.description,
            "origin": s.origin,
            "state": skills.status(s, workspace),
            "files": len(s.files),
        }
        for s in found
    ]
    rows.extend({"name": s.where, "state": "skipped", "error": s.why} for s in skipped)
    return rows


def switch(workspace: str, config_dir: str | None, name: str, enabled: bool) -> str:
    found, _ = skills.discover(workspace, config_dir)
    skill = next((s for s in found if s.name == name), None)
    if skill is None:
        known = ", ".join(s.name for s in found) or "none"
        raise Refused(f"sightline: no skill named {name!r} (the skills: {known})")
    if skill.source == "user":
        raise Refused(
            f"sightline: {name} is your own skill ({skill.origin}): it is always on; "
            "move it out of that folder to turn it off"
        )
    skills.set_enabled(skill, enabled, workspace)
    if enabled:
        return (
            f"sightline: skill {name} enabled for this workspace, for its files as they are "
            "now (a change needs a new enable)"
        )
    return f"sightline: skill {name} disabled for this workspace"
