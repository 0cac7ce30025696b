"""Read tools: read_file (the buffer when loaded, else the disk), list_files, grep.

All confined to the workspace root (workspace.resolve) and bounded in lines and bytes, with
a note that says what was cut and how to read on.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.errors import Refused
from sightline.tools import workspace
from sightline.tools.base import Kind, Tool, ToolResult
from sightline.tools.output import Bounded, clip_line

if TYPE_CHECKING:
    from sightline.agent.session import Turn

READ_MAX_LINES = 2000
READ_MAX_BYTES = 100_000
LIST_MAX = 1000
GREP_MAX_MATCHES = 200
GREP_MAX_BYTES = 50_000
GREP_MAX_FILE_BYTES = 2_000_000
GREP_LINE_CHARS = 300
GREP_TIME_BUDGET_S = 20.0
BINARY_PROBE = 8192


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Refused(f"{key}: expected a string")
    return value


def _opt_line(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Refused(f"{key}: expected a line number (1 or more)")
    return value


def _is_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_PROBE]


def _disk_lines(path: Path, rel: str, first: int, stop: int | None) -> tuple[list[str], int]:
    """Lines [first, stop) of a file (at most READ_MAX_LINES) and its line count, streamed:
    a large log is counted, not held in memory."""
    wanted: list[str] = []
    total = 0
    try:
        with path.open("rb") as fh:
            if _is_binary(fh.read(BINARY_PROBE)):
                raise Refused(f"{rel}: a binary file; not shown")
            fh.seek(0)
            for index, raw in enumerate(fh):
                total = index + 1
                in_range = index >= first and (stop is None or index < stop)
                if in_range and len(wanted) < READ_MAX_LINES:
                    wanted.append(raw.decode(errors="replace").rstrip("\r\n"))
    except OSError as err:
        raise Refused(f"{rel}: cannot be read ({err.strerror or err})") from None
    return wanted, total


def read_file(turn: Turn, args: dict[str, Any]) -> ToolResult:
    rel_arg = _opt_str(args, "path")
    if rel_arg is None:
        raise Refused("path: required")
    path = workspace.resolve(turn.workspace, rel_arg)
    rel = workspace.relative(turn.workspace, path)
    if path.is_dir():
        raise Refused(f"{rel}: a directory; use list_files to see what it holds")
    start = _opt_line(args, "start_line") or 1
    end = _opt_line(args, "end_line")
    if end is not None and end < start:
        raise Refused(f"end_line ({end}) is before start_line ({start})")
    first, last = start - 1, end if end is not None else -1
    loaded = turn.editor.lua(
        "return require('sightline.buffers').read(...)", str(path), first, last, READ_MAX_LINES
    )
    if loaded is not None:
        total = int(loaded["total"])
        lines = list(loaded["lines"])
        source = "buffer with unsaved changes" if loaded["modified"] else "buffer"
    else:
        if not path.exists():
            raise Refused(f"{rel}: no such file")
        lines, total = _disk_lines(path, rel, first, end)
        source = "file"
    if first >= total and total > 0:
        raise Refused(f"{rel} has {total} lines; start_line {start} is past its end")
    out = Bounded.make(READ_MAX_LINES, READ_MAX_BYTES)
    for number, line in enumerate(lines, start):
        if not out.add(f"{number:>6}\t{clip_line(line)}"):
            break
    shown_end = start + len(out.lines) - 1
    header = f"{rel} ({source}, {total} lines) lines {start}-{shown_end}:"
    if total == 0:
        header = f"{rel} ({source}) is empty"
    body = out.text()
    wanted_end = total if end is None else min(end, total)
    if shown_end < wanted_end:
        body += (
            f"\n… cut at line {shown_end} of {total} (output limit); "
            f"read on with start_line={shown_end + 1}"
        )
    return ToolResult(header + ("\n" + body if body else ""))


def list_files(turn: Turn, args: dict[str, Any]) -> ToolResult:
    glob = _opt_str(args, "glob")
    listing = workspace.list_files(turn.workspace, glob)
    files = listing.files
    if not files:
        what = f" matching {glob!r}" if glob else ""
        return ToolResult(f"no files{what} in the workspace")
    out = Bounded.make(LIST_MAX, READ_MAX_BYTES)
    for name in files:
        if not out.add(name):
            break
    body = out.text()
    if out.full:
        body += f"\n… {len(files)} files in all, {out.dropped} not shown: narrow with glob"
    elif not listing.complete:
        body += "\n… the workspace is large: the walk stopped early; narrow with glob"
    return ToolResult(body)


def grep(turn: Turn, args: dict[str, Any]) -> ToolResult:
    pattern = _opt_str(args, "pattern")
    if pattern is None:
        raise Refused("pattern: required")
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise Refused(f"pattern: not a valid regular expression: {err}") from None
    glob = _opt_str(args, "glob")
    root = workspace.resolve(turn.workspace, ".")
    out = Bounded.make(GREP_MAX_MATCHES, GREP_MAX_BYTES)
    deadline = time.monotonic() + GREP_TIME_BUDGET_S
    timed_out = False
    for name in workspace.list_files(turn.workspace, glob).files:
        if turn.cancelled() or out.full:
            break
        if time.monotonic() > deadline:
            timed_out = True
            break
        _grep_file(root / name, name, regex, out)
    late = f"\n… the search stopped after {GREP_TIME_BUDGET_S:g} s: narrow with glob"
    if not out.lines:
        return ToolResult(f"no matches for {pattern!r}" + (late if timed_out else ""))
    body = out.text()
    if out.full:
        body += f"\n… more matches not shown (limit {GREP_MAX_MATCHES}): narrow with glob"
    elif timed_out:
        body += late
    return ToolResult(body)


def _grep_file(path: Path, name: str, regex: re.Pattern[str], out: Bounded) -> None:
    try:
        if path.stat().st_size > GREP_MAX_FILE_BYTES:
            return
        data = path.read_bytes()
    except OSError:
        return
    if _is_binary(data):
        return
    for number, line in enumerate(data.decode(errors="replace").splitlines(), 1):
        if regex.search(line) and not out.add(
            f"{name}:{number}: {clip_line(line, GREP_LINE_CHARS)}"
        ):
            return


TOOLS = [
    Tool(
        name="read_file",
        kind=Kind.READ,
        description=(
            "Read a text file of the workspace. Each line is shown after its number and a tab "
            "(the numbers are not part of the file). If the file is open in the editor, its "
            "buffer is read, including unsaved changes. Long files are cut; read on with "
            "start_line."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the workspace root."},
                "start_line": {"type": "integer", "minimum": 1, "description": "First line."},
                "end_line": {"type": "integer", "minimum": 1, "description": "Last line."},
            },
            "required": ["path"],
        },
        handler=read_file,
    ),
    Tool(
        name="list_files",
        kind=Kind.READ,
        description=(
            "List the workspace's files (git-ignored files left out), optionally filtered by a "
            "glob: '*.py' matches at any depth, 'src/**/*.lua' from the root."
        ),
        input_schema={
            "type": "object",
            "properties": {"glob": {"type": "string", "description": "Glob filter."}},
        },
        handler=list_files,
    ),
    Tool(
        name="grep",
        kind=Kind.READ,
        description=(
            "Search the workspace's files on disk for a Python regular expression; answers "
            "path:line: text. Optionally only files matching a glob."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Python regular expression."},
                "glob": {"type": "string", "description": "Only files matching this glob."},
            },
            "required": ["pattern"],
        },
        handler=grep,
    ),
]
