"""The view and navigate tools: reveal_editor_range, reveal_attachment and go_to_position.

One definition serves the agent's registry and the MCP server (`sightline.entry.mcp`): both check
the arguments here, then call the same methods of the typed editor port (editor/port.py).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from sightline.domain import narrator, pyresolve, secrets
from sightline.editor.port import Editor, EditorError, PythonResolution
from sightline.gate.policy import Kind
from sightline.gate.turn_contract import ToolResult, Turn
from sightline.tools.base import Handler, Tool

# Mirrors of the config schema (lua/sightline/config.lua SYNTAX_SCOPE_KINDS and
# REVEAL_DURATION_MS), which the Lua side checks arguments against; the tool definitions
# must be static (the MCP server lists them with no Neovim attached), so a test compares.
KINDS = ["for", "while", "if", "switch", "try", "block", "function"]
DURATION_MS = {"min": 100, "max": 60000, "default": 3000}

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
                "description": (
                    "How long the highlight stays "
                    f"({DURATION_MS['min']}..{DURATION_MS['max']}; "
                    f"default {DURATION_MS['default']})."
                ),
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

ATTACHMENT_DEF: dict[str, Any] = {
    "name": "reveal_attachment",
    "description": (
        "Show the user a code reference of the conversation (a chip in the transcript) by its "
        "attachment_id, as their click on it does: the user's selection (which follows their "
        "later edits) or a file they mentioned with @path. The ids are named in the messages "
        "('attachment_id: sel-…'). With select = true it selects the code in the editor "
        "(like go_to_position); without select the user's setting decides (default: reveal, "
        "which moves nothing). Returns 'OK…' or an error."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "attachment_id": {"type": "string", "description": "The chip's id, e.g. sel-1a2b3c4d."},
            "select": {
                "type": "boolean",
                "description": "true: select it in the editor; false: only reveal it.",
            },
        },
        "required": ["attachment_id"],
    },
}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _describe(value: Any) -> str:
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def check_args(definition: dict[str, Any], args: Any) -> tuple[dict[str, Any] | None, str]:
    """(arguments, "") or (None, what is wrong): an object, no unknown names, each of the
    declared JSON type. Null is taken as absent. Whole floats (JSON's 3.0) count as integers.
    Which arguments are required, and the ranges, are checked by the Lua side."""
    name = definition["name"]
    if not isinstance(args, dict):
        return None, f"{name} expects an object of arguments, got {_describe(args)}"
    props: dict[str, Any] = definition["inputSchema"]["properties"]
    unknown = sorted(str(k) for k in args if k not in props)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        return None, (
            f"unknown argument{plural} {', '.join(unknown)} ({name} takes: {', '.join(props)})"
        )
    out: dict[str, Any] = {}
    for key, value in args.items():
        if value is None:
            continue
        want = props[key].get("type")
        if want == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = isinstance(value, _JSON_TYPES.get(want, (object,)))
        if want == "integer" and isinstance(value, bool):
            ok = False
        if not ok:
            article = "an" if want[0] in "aeiou" else "a"
            return None, f"{key} must be {article} {want}, got {_describe(value)}"
        out[key] = value
    return out, ""


PYTHON_SUFFIXES = (".py", ".pyi")
PYTHON_STALE = "sightline:python-stale"


def wants_python(fn: str, args: dict[str, Any]) -> bool:
    """Whether a call resolves a Python member first: Neovim has no Python parser, and no
    Lua the core calls may call the core, so the caller (the agent or the MCP server)
    resolves it with `pyresolve` and hands reveal the lines."""
    wanted = args.get("member_key") is not None or args.get("syntax_scope") is not None
    path = args.get("file_path")
    return fn == "reveal" and wanted and isinstance(path, str) and path.endswith(PYTHON_SUFFIXES)


def resolve_python(source: str | None, args: dict[str, Any]) -> PythonResolution | None:
    """reveal's `python`: the member's lines in `source` (None when there is no source),
    or what failed and, when only the syntax_scope failed, the member's lines."""
    if source is None:
        return None
    member, steps = args.get("member_key"), args.get("syntax_scope")
    near = args.get("start_line")
    try:
        found = pyresolve.resolve_request(
            {"text": source, "member_key": member, "syntax_scope": steps, "near_line": near}
        )
        return {"start_line": found["start_line"], "end_line": found["end_line"]}
    except pyresolve.ResolveError as err:
        out: PythonResolution = {"error": str(err)}
    if member is not None and steps is not None:
        partial = pyresolve.resolve(source, member, None, near)
        if isinstance(partial, tuple):
            out["partial"] = {"start_line": partial[0], "end_line": partial[1]}
    return out


def answer(text: str) -> tuple[str, bool]:
    """(text, is_error) of a view call's answer: 'OK…' or what is wrong."""
    return text, not text.startswith("OK")


# The last Python source seen per file, with its version (a buffer's changedtick or the
# file's mtime and size), and resolutions made from it: a reveal of an unchanged file is one
# round trip, with no parse.
_SOURCES: dict[str, tuple[str, str]] = {}
_RESOLVED: dict[tuple[str, str, str], PythonResolution] = {}
_KEEP = 64


def _resolution(path: str, version: str, source: str, args: dict[str, Any]) -> PythonResolution:
    keys = ("member_key", "syntax_scope", "start_line")
    key = (path, version, json.dumps([args.get(k) for k in keys]))
    found = _RESOLVED.get(key)
    if found is None:
        found = resolve_python(source, args) or {"error": "no Python source"}
        found["version"] = version
        if len(_RESOLVED) >= _KEEP:
            _RESOLVED.clear()
        _RESOLVED[key] = found
    return found


ViewFn = Literal["reveal", "reveal_attachment", "go_to_position"]


def call(ed: Editor, fn: ViewFn, args: dict[str, Any]) -> str:
    """Run view tool `fn` through the editor port: a Python member is resolved here first.
    The core's known keys go along so a buffer holding one is never shown (Neovim's own key
    variables are checked there too). EditorError when Neovim cannot serve the call."""
    keys = secrets.known()
    if fn == "go_to_position":
        return ed.go_to_position(args, keys)
    if fn == "reveal_attachment":
        return ed.reveal_attachment(args, keys)
    if not wants_python(fn, args):
        return ed.reveal(args, keys, None)
    path = str(args["file_path"])
    for _ in range(2):
        known = _SOURCES.get(path)
        if known is not None:
            result = ed.reveal(args, keys, _resolution(path, *known, args))
            if result != PYTHON_STALE:
                return result
        got = ed.python_source(path, pyresolve.MAX_SOURCE_CHARS)
        if got is None or not isinstance(got.get("text"), str):
            _SOURCES.pop(path, None)
            return ed.reveal(args, keys, None)
        if len(_SOURCES) >= _KEEP:
            _SOURCES.clear()
        _SOURCES[path] = (str(got.get("version")), got["text"])
    return ed.reveal(args, keys, None)  # changing under us: say what Lua can


def _handler(definition: dict[str, Any], fn: ViewFn) -> Handler:
    def handler(turn: Turn, args: dict[str, Any]) -> ToolResult:
        checked, err = check_args(definition, args)
        if checked is None:
            return ToolResult(err, True)
        try:
            text, is_error = answer(call(turn.editor, fn, checked))
        except EditorError as failed:
            return ToolResult(str(failed), True)
        if fn == "go_to_position" and text.startswith("OK (") and text.endswith(")"):
            # The focus stayed where the user types: tell them, not only the model, where
            # the cursor went and that gv selects there.
            turn.session.transcript.add_note(*narrator.moved_to(text[4:-1]))
        return ToolResult(text, is_error)

    return handler


def _tool(definition: dict[str, Any], kind: Kind, fn: ViewFn) -> Tool:
    return Tool(
        name=definition["name"],
        kind=kind,
        description=definition["description"],
        input_schema=definition["inputSchema"],
        handler=_handler(definition, fn),
    )


def mcp_spec(tool: Tool) -> dict[str, Any]:
    """The tool as the MCP SDK lists it."""
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}


REVEAL = _tool(REVEAL_DEF, Kind.VIEW, "reveal")
ATTACHMENT = _tool(ATTACHMENT_DEF, Kind.VIEW, "reveal_attachment")
GO_TO = _tool(GOTO_DEF, Kind.NAVIGATE, "go_to_position")
