"""get_diagnostics: what Neovim's diagnostics (LSP, linters) say, for one file or every
loaded buffer of the workspace. A read tool: allowed in every turn kind.

The data comes from lua/sightline/port.lua (`diagnostics`); the wording is made here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.domain import workspace
from sightline.domain.errors import Refused
from sightline.editor.port import DiagnosticsQuery
from sightline.gate.policy import Kind
from sightline.gate.turn_contract import ToolResult
from sightline.tools.base import Tool
from sightline.tools.output import clip_line

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

MAX_ITEMS = 200
MAX_MESSAGE_CHARS = 300
MAX_BYTES = 20_000
SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


def format_items(root: str, found: dict[str, Any], rel: str | None) -> str:
    """The model's text: one line per diagnostic, worst first, bounded."""
    items = [i for i in found.get("items") or [] if isinstance(i, dict)]
    if rel is not None and not found.get("loaded"):
        return f"{rel} is not loaded in the editor: no diagnostics are known for it"
    if not items:
        where = rel if rel is not None else "the loaded buffers of the workspace"
        return f"no diagnostics in {where}"
    items.sort(
        key=lambda i: (int(i.get("severity") or 4), str(i.get("path")), int(i.get("lnum") or 0))
    )
    lines: list[str] = []
    size = 0
    for item in items[:MAX_ITEMS]:
        path = workspace.relative(root, Path(str(item.get("path"))))
        sev = SEVERITY.get(int(item.get("severity") or 4), "hint")
        code = f" {item['code']}" if item.get("code") else ""
        source = f" [{item['source']}{code}]" if item.get("source") else ""
        message = clip_line(" ".join(str(item.get("message", "")).split()), MAX_MESSAGE_CHARS)
        row, col = int(item.get("lnum") or 0) + 1, int(item.get("col") or 0) + 1
        line = f"{path}:{row}:{col}: {sev}: {message}{source}"
        size += len(line) + 1
        if size > MAX_BYTES:
            break
        lines.append(line)
    shown = len(lines)
    if shown < len(items) or found.get("truncated"):
        lines.append(f"[{shown} of {len(items)}{'+' if found.get('truncated') else ''} shown]")
    return "\n".join(lines)


def get_diagnostics(turn: Turn, args: dict[str, Any]) -> ToolResult:
    path = args.get("path")
    if path is not None and path != "" and not isinstance(path, str):
        raise Refused("path: expected a string")
    root = str(workspace.resolve(turn.workspace, "."))
    rel = None
    opts: DiagnosticsQuery = {"root": root}
    if path:
        real = workspace.resolve(turn.workspace, path)  # confined like read_file
        rel = workspace.relative(turn.workspace, real)
        opts["path"] = str(real)
    found = turn.editor.diagnostics(opts)
    return ToolResult(format_items(root, dict(found) if isinstance(found, dict) else {}, rel))


GET_DIAGNOSTICS = Tool(
    name="get_diagnostics",
    kind=Kind.READ,
    description=(
        "The diagnostics (errors, warnings, hints from language servers and linters) Neovim "
        "has for one file, or for every loaded buffer of the workspace when path is omitted. "
        "Only buffers open in the editor have diagnostics."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace root."}
        },
    },
    handler=get_diagnostics,
)

TOOLS = [GET_DIAGNOSTICS]
