"""Read tools: read_file (the buffer when loaded, else the disk), list_files, grep.

All confined to the workspace root (workspace.resolve) and bounded in lines and bytes, with
a note that says what was cut and how to read on.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from sightline.domain import disk, images, secrets, workspace
from sightline.domain.errors import Refused
from sightline.gate.policy import Kind
from sightline.gate.turn_contract import ToolResult
from sightline.tools import imaging, skills
from sightline.tools.base import Tool
from sightline.tools.output import Bounded, clip_line

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

READ_MAX_LINES = 2000
READ_MAX_BYTES = 100_000
LIST_MAX = 1000
GREP_MAX_MATCHES = 200
GREP_MAX_BYTES = 50_000
GREP_MAX_FILE_BYTES = 2_000_000
GREP_LINE_CHARS = 300
GREP_TIME_BUDGET_S = 20.0
GREP_KILL_GRACE_S = 2.0
GREP_LINE_BUDGET_S = 0.1
GREP_MAX_SLOW_LINES = 3
GREP_MAX_PATTERN = 2000
GREP_WORKER = Path(__file__).with_name("grep_worker.py")
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


def is_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_PROBE]


def _disk_lines(path: Path, rel: str, first: int, stop: int | None) -> tuple[list[str], int]:
    """Lines [first, stop) of a file (at most READ_MAX_LINES) and its line count, streamed:
    a large log is counted, not held in memory."""
    wanted: list[str] = []
    total = 0
    try:
        with open_regular(path, rel) as fh:
            if is_binary(fh.read(BINARY_PROBE)):
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


def open_regular(path: Path | str, rel: str) -> BinaryIO:
    """A regular file opened for reading; a FIFO, a device or a socket is refused.
    O_NONBLOCK: opening a FIFO would otherwise wait for a writer (and freeze the turn)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{rel}: not a regular file; only files can be read")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_file(turn: Turn, args: dict[str, Any]) -> ToolResult:
    rel_arg = _opt_str(args, "path")
    if rel_arg is None:
        raise Refused("path: required")
    if rel_arg.startswith(skills.PREFIX):  # a file of a skill load_skill listed
        path, rel = skills.resolve(turn, rel_arg)
    else:
        path = workspace.resolve(turn.workspace, rel_arg)
        rel = workspace.relative(turn.workspace, path)
    if path.is_dir():
        raise Refused(f"{rel}: a directory; use list_files to see what it holds")
    picture = _image(path, rel)
    if picture is not None:
        return picture
    start = _opt_line(args, "start_line") or 1
    end = _opt_line(args, "end_line")
    if end is not None and end < start:
        raise Refused(f"end_line ({end}) is before start_line ({start})")
    first, last = start - 1, end if end is not None else -1
    # A loaded buffer is read up to date with its file (reloaded when it has no unsaved
    # changes); one kept although its file changed says so (domain/disk.py).
    loaded = turn.editor.read_lines(str(path), first, last, READ_MAX_LINES)
    note = None
    if loaded is not None:
        total = int(loaded["total"])
        lines = list(loaded["lines"])
        source = "buffer with unsaved changes" if loaded["modified"] else "buffer"
        note = disk.note(rel, loaded.get("disk"))
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
    if note:
        header = f"{header}\nnote: {note}"
    body = out.text()
    wanted_end = total if end is None else min(end, total)
    if shown_end < wanted_end:
        body += (
            f"\n… cut at line {shown_end} of {total} (output limit); "
            f"read on with start_line={shown_end + 1}"
        )
    return ToolResult(header + ("\n" + body if body else ""))


def _image(path: Path, rel: str) -> ToolResult | None:
    """A png, jpeg, gif or webp file (by its bytes) as an image for the model, within the
    same limits as the user's images; None for any other file."""
    if not path.is_file():  # a FIFO or a device is never opened here (it could block)
        return None
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if images.sniff(head) is None:
        return None
    image = imaging.prepare(imaging.read_image(path), rel)
    scaled = (
        f", scaled from {image.scaled_from[0]}×{image.scaled_from[1]}" if image.scaled_from else ""
    )
    text = f"{rel}: {image.media_type} image, {image.width}×{image.height} pixels{scaled}"
    return ToolResult(text, images=(image.block(),))


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
    if len(pattern) > GREP_MAX_PATTERN:
        raise Refused(f"pattern: longer than {GREP_MAX_PATTERN} characters")
    glob = _opt_str(args, "glob")
    root = workspace.resolve(turn.workspace, ".")
    files = workspace.list_files(turn.workspace, glob).files
    out = Bounded.make(GREP_MAX_MATCHES, GREP_MAX_BYTES)
    found = _search(turn, root, files, pattern, out)
    if found.error:
        raise Refused(f"pattern: {found.error}")
    notes = []
    if found.slow:
        shown = ", ".join(found.slow[:3])
        notes.append(
            f"… {len(found.slow)} line(s) skipped: the pattern took over "
            f"{GREP_LINE_BUDGET_S:g} s on each ({shown}); use a simpler pattern"
        )
    if found.end == "slow":
        notes.append("… the search stopped: the pattern is too slow on this workspace")
    elif found.end == "deadline":
        notes.append(f"… the search stopped after {GREP_TIME_BUDGET_S:g} s: narrow with glob")
    elif found.end is None and not out.full and not turn.cancelled():
        notes.append("… the search ended early (the matcher was stopped): narrow with glob")
    if out.full:
        notes.append(f"… more matches not shown (limit {GREP_MAX_MATCHES}): narrow with glob")
    body = out.text() if out.lines else f"no matches for {pattern!r}"
    return ToolResult("\n".join([body, *notes]))


@dataclass
class _Found:
    end: str | None = None  # how the matcher ended; None when it was killed
    error: str | None = None
    slow: list[str] = field(default_factory=list)


def _search(turn: Turn, root: Path, files: list[str], pattern: str, out: Bounded) -> _Found:
    """Match in a child process (tools/grep_worker.py), never in the core: the regex engine
    holds the GIL, so a catastrophic pattern would stall every request. The child is killed
    when the turn stops, when enough matches arrived, and past its own deadline."""
    found = _Found()
    request = {
        "pattern": pattern,
        "root": str(root),
        "files": files,
        "max_file_bytes": GREP_MAX_FILE_BYTES,
        "line_chars": GREP_LINE_CHARS + secrets.margin(),  # clip_line steps around a key
        "max_matches": GREP_MAX_MATCHES,
        "line_budget_s": GREP_LINE_BUDGET_S,
        "deadline_s": GREP_TIME_BUDGET_S,
        "max_slow_lines": GREP_MAX_SLOW_LINES,
    }
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(GREP_WORKER), str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"PATH": os.environ.get("PATH", "")},
        cwd=str(root),
    )
    turn.on_cancel(proc.kill)
    # The child ends itself at its deadline; this is for a child that cannot (a huge
    # pattern still compiling).
    backstop = threading.Timer(GREP_TIME_BUDGET_S + GREP_KILL_GRACE_S, proc.kill)
    backstop.daemon = True
    backstop.start()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if turn.cancelled():
            return found
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(json.dumps(request).encode())
            proc.stdin.close()
        for raw in proc.stdout:
            try:
                kind, *rest = json.loads(raw)
            except ValueError:
                continue
            if kind == "match":
                name, number, head, length = rest
                line = clip_line(head, GREP_LINE_CHARS, length)
                if not out.add(f"{name}:{number}: {line}"):
                    break
            elif kind == "slow":
                found.slow.append(f"{rest[0]}:{rest[1]}")
            elif kind == "error":
                found.error = str(rest[0])
            elif kind == "end":
                found.end = str(rest[0])
    finally:
        backstop.cancel()
        proc.kill()
        proc.wait()
        proc.stdout.close()
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
    return found


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
                "path": {
                    "type": "string",
                    "description": (
                        "Path relative to the workspace root, or a skill's file as load_skill "
                        "lists it (skill:{name}/{path})."
                    ),
                },
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
