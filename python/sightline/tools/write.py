"""Write tools: propose_edit and propose_create. Each becomes a proposal for the review gate;
nothing changes until the user accepts, and then the change goes to the buffer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sightline.domain import diff, disk, workspace
from sightline.domain.errors import Refused
from sightline.gate.policy import Kind
from sightline.gate.proposals import Proposal, review
from sightline.gate.turn_contract import ToolResult
from sightline.tools.base import Tool

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

# Lines of context around an edit that cross RPC with it (the diff shows 2).
CONTEXT_LINES = 3


def _str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise Refused(f"{key}: required, a string")
    return value


def propose_edit(turn: Turn, args: dict[str, Any]) -> ToolResult:
    old, new = _str(args, "old_string"), _str(args, "new_string")
    if not old:
        raise Refused("old_string: must not be empty (use propose_create for a new file)")
    if old == new:
        raise Refused("old_string and new_string are the same: nothing would change")
    path = workspace.resolve(turn.workspace, _str(args, "path"))
    rel = workspace.relative(turn.workspace, path)
    if path.is_dir():
        raise Refused(f"{rel}: a directory, not a file")
    found = turn.editor.find_unique(str(path), old, CONTEXT_LINES)
    if found.get("missing"):
        raise Refused(f"{rel}: no such file (propose_create makes a new one)")
    if found.get("error"):
        why = found.get("detail") or found["error"]
        if found["error"] == "load_failed":
            why = f"could not be loaded: {why}"
        raise Refused(f"{rel} {why}: edits to it are refused")
    count = int(found.get("count", 0))
    if count != 1:
        hint = (
            "include more surrounding text to make it unique"
            if count
            else (
                "read the file again: it must match exactly, whitespace included "
                "(without read_file's line numbers)"
            )
        )
        said = disk.note(rel, found.get("disk"))
        raise Refused(
            f"old_string occurs {count} times in {rel}; it must occur exactly once: {hint}"
            + (f"\nnote: {said}" if said else "")
        )
    # Only the lines around the match cross RPC: the excerpt holds old_string once (any
    # occurrence in it is one in the buffer).
    before = diff.buffer_text(list(found["lines"]))
    at = before.find(old)
    after = diff.as_buffer_text(before[:at] + new + before[at + len(old) :])
    proposal = Proposal(
        "edit",
        rel,
        str(path),
        before,
        after,
        at,
        at + len(old),
        first_line=int(found["first_line"]),
        excerpt=True,
    )
    proposal.buffer = int(found.get("buffer") or 0)  # where the hunks are drawn
    return review(turn, proposal)


def propose_create(turn: Turn, args: dict[str, Any]) -> ToolResult:
    content = _str(args, "content")
    path = workspace.resolve(turn.workspace, _str(args, "path"))
    rel = workspace.relative(turn.workspace, path)
    if path.exists():
        raise Refused(f"{rel} exists: use propose_edit to change it")
    after = diff.as_buffer_text(content) if content else ""
    return review(turn, Proposal("create", rel, str(path), "", after))


TOOLS = [
    Tool(
        name="propose_edit",
        kind=Kind.WRITE,
        description=(
            "Propose replacing old_string with new_string in a workspace file. old_string must "
            "occur exactly once in the file (as the editor holds it, unsaved changes included); "
            "include enough context. The user reviews the diff and accepts or rejects it; the "
            "result says which."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace root."},
                "old_string": {"type": "string", "description": "Exact text to replace."},
                "new_string": {"type": "string", "description": "Text to put in its place."},
            },
            "required": ["path", "old_string", "new_string"],
        },
        handler=propose_edit,
    ),
    Tool(
        name="propose_create",
        kind=Kind.WRITE,
        description=(
            "Propose a new file with the given content (refused if the file exists). The user "
            "reviews it and accepts or rejects it."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace root."},
                "content": {"type": "string", "description": "The whole file."},
            },
            "required": ["path", "content"],
        },
        handler=propose_create,
    ),
]
