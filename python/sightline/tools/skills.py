"""`load_skill` (kind read): a skill's instructions and the list of its files, which
read_file then reads as `skill:{name}/{path}`, confined to that skill's folder.

The skills a turn may use are the session's active ones (domain/skills.py: the user's,
and the workspace's enabled for their current content); the model sees their names and
descriptions in the system prompt (agent/prompt.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.domain.errors import Refused
from sightline.domain.skills import Skill
from sightline.domain.workspace import Outside, within
from sightline.gate.policy import Kind
from sightline.gate.turn_contract import ToolResult
from sightline.tools.base import Tool

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

PREFIX = "skill:"


def _active(turn: Turn) -> list[Skill]:
    found = getattr(turn.session, "skills", None)
    return list(found()) if callable(found) else []


def _named(turn: Turn, name: str) -> Skill:
    skills = _active(turn)
    for skill in skills:
        if skill.name == name:
            return skill
    known = ", ".join(s.name for s in skills) or "none"
    raise Refused(f"no skill named {name[:64]!r}; the skills: {known}")


def load_skill(turn: Turn, args: dict[str, Any]) -> ToolResult:
    name = args.get("name")
    if not isinstance(name, str) or not name:
        raise Refused("name: required (one of the skills the system prompt lists)")
    skill = _named(turn, name)
    listing = "\n".join(f"  {PREFIX}{skill.name}/{f}" for f in skill.files)
    return ToolResult(
        f"<skill name={skill.name!r}>\n{skill.body}\n</skill>\n\n"
        f"Its files (read them with read_file and these paths):\n{listing}"
    )


def resolve(turn: Turn, arg: str) -> tuple[Path, str]:
    """`skill:{name}/{path}`: the real path inside that skill's folder, and how it is named."""
    name, _, rel = arg[len(PREFIX) :].partition("/")
    skill = _named(turn, name)
    try:
        path = within(skill.root, rel or ".")
    except Outside:
        raise Refused(f"{arg}: outside the skill's folder; only its files can be read") from None
    return path, arg


LOAD_SKILL = Tool(
    name="load_skill",
    kind=Kind.READ,
    description=(
        "Load one of the skills the system prompt lists: its instructions, and the paths of "
        "its files, which read_file reads."
    ),
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name."}},
        "required": ["name"],
    },
    handler=load_skill,
)
