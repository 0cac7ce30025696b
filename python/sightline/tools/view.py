"""The view and navigate tools: reveal_editor_range and go_to_position.

One definition serves the agent's registry and the MCP server (`sightline.mcp`): both call
the plugin's Lua in Neovim with the same chunk and the same arguments.
"""

from __future__ import annotations

from typing import Any

from sightline.tools.base import Kind, Tool, ToolResult

KINDS = ["for", "while", "if", "switch", "try", "block", "function"]

REVEAL_DEF: dict[str, Any] = {
    "name": "reveal_editor_range",
    "description": (
        "Show the user a range of code in their Neovim: it scrolls into view (or appears in a "
        "small temporary window) with a highlight for a few seconds. Never moves the cursor, "
        "changes the selection or edits anything. Use it to point at code ('look here'); use "
        "go_to_position only when the user should start editing there. Give start_line and "
        "end_line, or member_key (optionally with syntax_scope) to find the code even if it "
        "moved since you read it. Returns 'OK', 'OK (what could not be resolved)' or an error."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "Path of the file, relative to the editor's working directory.",
            },
            "start_line": {"type": "integer", "description": "First line, 1-based."},
            "end_line": {"type": "integer", "description": "Last line, 1-based, inclusive."},
            "member_key": {
                "type": "string",
                "description": "A function, class or member name, or a dotted path: A.b",
            },
            "syntax_scope": {
                "type": "array",
                "description": (
                    "Steps down from the member: each picks the n-th (0-based) statement of "
                    "that kind directly inside the previous step (the member's body first)."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": KINDS},
                        "index_in_parent": {"type": "integer"},
                    },
                    "required": ["kind", "index_in_parent"],
                },
            },
            "duration_ms": {
                "type": "integer",
                "description": "How long the highlight stays (100..60000; default 3000).",
            },
        },
        "required": ["file_path"],
    },
}

GOTO_DEF: dict[str, Any] = {
    "name": "go_to_position",
    "description": (
        "Open a file in the user's Neovim editor window and move the cursor there; with an end "
        "position, select the text (visual mode). This changes the user's cursor and selection: "
        "use reveal_editor_range just to show code."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Path of the file."},
            "line": {"type": "integer", "description": "Line, 1-based."},
            "column": {"type": "integer", "description": "Character column, 1-based."},
            "end_line": {"type": "integer", "description": "Select up to this line."},
            "end_column": {"type": "integer", "description": "Select up to this column."},
        },
        "required": ["file_path", "line"],
    },
}

# Arguments pass through as one table; `pcall(require)` turns a Neovim without the plugin into
# a clear answer instead of a Lua error.
LUA_CALL = """
local fn, args = ...
local ok, mod = pcall(require, 'sightline.reveal')
if not ok then
  return 'sightline is not installed in this Neovim: ' .. tostring(mod):match('^[^\\n]*')
end
return mod[fn](args)
"""


def _lua(fn: str) -> Any:
    def handler(turn: Any, args: dict[str, Any]) -> ToolResult:
        result = turn.editor.lua(LUA_CALL, fn, args)
        text = result if isinstance(result, str) else f"unexpected answer from Neovim: {result!r}"
        if fn == "go_to_position" and text.startswith("OK (") and text.endswith(")"):
            # The focus stayed where the user types: tell them, not only the model, where
            # the cursor went and that gv selects there.
            turn.session.transcript.add_note("↳ " + text[4:-1])
        return ToolResult(text, not text.startswith("OK"))

    return handler


def _tool(definition: dict[str, Any], kind: Kind, fn: str) -> Tool:
    return Tool(
        name=definition["name"],
        kind=kind,
        description=definition["description"],
        input_schema=definition["inputSchema"],
        handler=_lua(fn),
    )


def mcp_spec(tool: Tool) -> dict[str, Any]:
    """The tool as the MCP SDK lists it."""
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}


REVEAL = _tool(REVEAL_DEF, Kind.VIEW, "reveal")
GO_TO = _tool(GOTO_DEF, Kind.NAVIGATE, "go_to_position")
