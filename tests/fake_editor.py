"""An in-memory Editor (python/sightline/editor/port.py) for tests that run the core without Neovim.

It holds buffers as lists of lines and implements every port method as lua/sightline/port.lua
does for them: the same codes, the same uniqueness rule (python/sightline/domain/diff.py's
count_occurrences over the lines joined with the final newline). Views (reveal, go_to) answer
"OK" and are recorded; UI updates are built at once (so a broken payload fails the test) and
kept. `calls` counts the port calls, as the bench counts round trips.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sightline.domain import diff
from sightline.domain.scope import RANGE_KEYS
from sightline.editor.port import (
    Applied,
    BufferText,
    CreateSpec,
    Diagnostic,
    Diagnostics,
    DiagnosticsQuery,
    EditorBuffer,
    EditSpec,
    FileState,
    FlatRange,
    Found,
    HunkSpec,
    KeptBuffer,
    Lines,
    Loaded,
    PythonResolution,
    PythonSource,
    RangeInfo,
    Reanchored,
    Replaced,
)


@dataclass
class FakeBuffer:
    lines: list[str]
    path: str = ""
    buftype: str = ""
    filetype: str = ""
    modified: bool = False


def _starts(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode()) + 1)
    return starts


@dataclass
class FakeEditor:
    buffers: dict[int, FakeBuffer] = field(default_factory=lambda: {1: FakeBuffer(["hello"])})
    current: int = 1
    updates: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    views: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)
    after_side: dict[int, list[str]] = field(default_factory=dict)  # compare views, by id
    keep_updates: int = 50
    hunks: dict[int, HunkSpec] = field(default_factory=dict)  # drawn inline, by proposal id
    diagnostics_of: dict[str, list[Diagnostic]] = field(default_factory=dict)  # by path
    editor_window: int | None = 1000  # None: no editor window (else it shows `current`)
    server: str = "/tmp/fake-nvim.sock"
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- helpers ----------------------------------------------------------------------------

    def _note(self, name: str) -> None:
        with self._lock:
            self.calls.append(name)
            del self.calls[: -self.keep_updates]

    def buffer_of(self, target: str | int) -> tuple[int, FakeBuffer] | None:
        if isinstance(target, int):
            buf = target or self.current
            return (buf, self.buffers[buf]) if buf in self.buffers else None
        for n, b in self.buffers.items():
            if b.path and b.path == target:
                return n, b
        return None

    def _load(self, path: str) -> tuple[int, FakeBuffer] | None:
        found = self.buffer_of(path)
        if found is None and Path(path).is_file():
            n = max(self.buffers, default=0) + 1
            text = Path(path).read_text()
            self.buffers[n] = FakeBuffer(diff.as_buffer_text(text)[:-1].split("\n"), path)
            found = n, self.buffers[n]
        return found

    def _save(self, buffer: FakeBuffer, was_modified: bool) -> Applied:
        if not buffer.path or buffer.buftype:
            buffer.modified = True
            return {"ok": True, "saved": False, "why": "nofile"}
        if was_modified:
            buffer.modified = True
            return {"ok": True, "saved": False, "why": "modified"}
        Path(buffer.path).write_text(diff.buffer_text(buffer.lines))
        buffer.modified = False
        self.saved.append(buffer.path)
        return {"ok": True, "saved": True}

    # -- the port ---------------------------------------------------------------------------

    def apply_edit(self, spec: EditSpec) -> Applied:
        self._note("apply_edit")
        found = self._load(spec["path"])
        if found is None:
            return {"error": "could not be loaded: no such file"}
        buffer = found[1]
        text = diff.buffer_text(buffer.lines)
        count = diff.count_occurrences(text, spec["anchor"])
        if count != 1:
            return {"stale": True, "count": count}
        raw = text.encode(errors="surrogateescape")
        at = raw.find(spec["anchor"].encode(errors="surrogateescape"))
        new = spec["text"].encode(errors="surrogateescape")
        raw = raw[: at + spec["rel_start"]] + new + raw[at + spec["rel_end"] :]
        buffer.lines = raw.decode(errors="surrogateescape")[:-1].split("\n")
        return self._save(buffer, buffer.modified)

    def clear_hunks(self, proposal_id: int) -> None:
        self._note("clear_hunks")
        self.hunks.pop(proposal_id, None)

    def close_compare(self, proposal_id: int) -> None:
        self._note("close_compare")
        self.after_side.pop(proposal_id, None)

    def create_file(self, spec: CreateSpec) -> Applied:
        self._note("create_file")
        if Path(spec["path"]).exists():
            return {"error": "exists now (it was created since the proposal)"}
        Path(spec["path"]).parent.mkdir(parents=True, exist_ok=True)
        n = max(self.buffers, default=0) + 1
        text = spec["text"].removesuffix("\n")
        self.buffers[n] = FakeBuffer(text.split("\n"), spec["path"])
        return self._save(self.buffers[n], False)

    def describe_range(self, flat: dict[str, Any]) -> RangeInfo:
        """scope.describe: check the flat range against a buffer, as the Lua does."""
        self._note("describe_range")
        if not all(isinstance(flat.get(k), int) for k in RANGE_KEYS):
            return {"error": "expected a range {buffer, start_row, start_col, end_row, end_col}"}
        buf = flat["buffer"] or self.current
        buffer = self.buffers.get(buf)
        if buffer is None:
            return {"error": f"buffer {buf} is not loaded"}
        lines = buffer.lines
        sr, sc, er, ec = (flat[k] for k in RANGE_KEYS[1:])
        if not (0 <= sr <= er < len(lines)) or not (0 <= ec <= len(lines[er].encode())):
            return {"error": "the range is outside the buffer"}
        if (sr, sc) >= (er, ec):
            return {"error": "the selection is empty"}
        raw = "\n".join(lines).encode()
        starts = _starts(lines)
        text = raw[starts[sr] + sc : starts[er] + ec].decode(errors="replace")
        name = buffer.path or f"[No Name] (buffer {buf})"
        rows = f"{sr + 1}" if sr == er else f"{sr + 1}–{er + 1}"
        return {
            "range": {
                "buffer": buf,
                "start_row": sr,
                "start_col": sc,
                "end_row": er,
                "end_col": ec,
            },
            "text": text,
            "name": name,
            "title": f"{name}:{rows}",
            "path": buffer.path,
            "buftype": buffer.buftype,
            "filetype": buffer.filetype,
        }

    def diagnostics(self, query: DiagnosticsQuery) -> Diagnostics:
        self._note("diagnostics")
        want, root = query.get("path"), query.get("root", "")
        out: Diagnostics = {"loaded": False, "items": [], "truncated": False}
        for buffer in self.buffers.values():
            path = buffer.path
            match = path == want if want else bool(path) and path.startswith(root + "/")
            if match and not (buffer.buftype and not want):
                out["loaded"] = True
                out["items"] += [{**d, "path": path} for d in self.diagnostics_of.get(path, [])]
        return out

    def drop_buffer(self, path: str) -> bool:
        self._note("drop_buffer")
        found = self.buffer_of(path)
        if found is None:
            return True
        if found[1].modified:
            return False
        del self.buffers[found[0]]
        return True

    def editor_buffer(self, max_bytes: int) -> EditorBuffer | None:
        self._note("editor_buffer")
        if self.editor_window is None or self.current not in self.buffers:
            return None
        buffer = self.buffers[self.current]
        text, out = diff.buffer_text(buffer.lines), []
        size = 0
        for line in text.splitlines(keepends=True):
            if size > max_bytes:
                break
            out.append(line)
            size += len(line.encode(errors="surrogateescape"))
        return {
            "name": buffer.path,
            "text": "".join(out),
            "filetype": buffer.filetype,
            "modified": buffer.modified,
        }

    def file_state(self, path: str, max_bytes: int) -> FileState:
        self._note("file_state")
        found = self.buffer_of(path)
        if found is None:
            return {"loaded": False}
        if not found[1].modified:
            return {"loaded": True, "modified": False}
        return {"loaded": True, "modified": True, "text": diff.buffer_text(found[1].lines)}

    def find_unique(self, path: str, needle: str, context: int) -> Found:
        self._note("find_unique")
        if not needle:
            return {"error": "empty_needle"}
        found = self._load(path)
        if found is None:
            return {"missing": True}
        buf, buffer = found
        text = diff.buffer_text(buffer.lines)
        count = diff.count_occurrences(text, needle)
        if count != 1:
            return {"count": count}
        at = text.find(needle)
        row, end_row = text.count("\n", 0, at), text.count("\n", 0, at + len(needle))
        first = max(0, row - context)
        last = min(len(buffer.lines), end_row + 1 + context)
        lines = buffer.lines[first:last]
        return {
            "count": 1,
            "buffer": buf,
            "first_line": first,
            "lines": lines,
            "modified": buffer.modified,
        }

    def go_to_position(self, args: dict[str, Any], keys: list[str]) -> str:
        self._note("go_to_position")
        self.views.append(("go_to_position", args))
        return "OK"

    def load_lines(self, path: str) -> Loaded:
        self._note("load_lines")
        found = self._load(path)
        if found is None:
            return {"missing": True}
        buf, buffer = found
        return {"buffer": buf, "lines": list(buffer.lines), "modified": buffer.modified}

    def python_source(self, file_path: str, max_bytes: int) -> PythonSource | None:
        self._note("python_source")
        if not file_path.endswith((".py", ".pyi")):
            return None
        found = self.buffer_of(file_path)
        if found is not None:
            text = diff.buffer_text(found[1].lines)[:max_bytes]
        elif Path(file_path).is_file():
            text = Path(file_path).read_text()[:max_bytes]
        else:
            return None
        return {"text": text, "version": str(hash(text))}

    def read_lines(self, target: str | int, first: int, last: int, max_lines: int) -> Lines | None:
        self._note("read_lines")
        found = self.buffer_of(target)
        if found is None:
            return None
        lines = found[1].lines
        total = len(lines)
        last = total if last < 0 or last > total else last
        first = min(first, total)
        last = max(first, min(last, first + max_lines))
        return {"total": total, "lines": lines[first:last], "modified": found[1].modified}

    def read_text(self, path: str, max_bytes: int) -> BufferText | None:
        self._note("read_text")
        found = self.buffer_of(path)
        if found is None:
            return None
        return {"text": diff.buffer_text(found[1].lines)[:max_bytes]}

    def _anchor(self, flat: FlatRange, text: str) -> tuple[int, FakeBuffer, FlatRange] | str:
        buf = flat["buffer"]
        buffer = self.buffers.get(buf)
        if buffer is None:
            return "gone"
        raw = "\n".join(buffer.lines).encode()
        starts = _starts(buffer.lines)
        held = raw[starts[flat["start_row"]] + flat["start_col"] :][: len(text.encode())]
        if flat["end_row"] < len(buffer.lines) and held == text.encode():
            return buf, buffer, flat
        count = diff.count_occurrences(diff.buffer_text(buffer.lines), text)
        if count != 1:
            return "missing" if count == 0 else "ambiguous"
        at = len(diff.buffer_text(buffer.lines)[: diff.buffer_text(buffer.lines).find(text)])
        before = diff.buffer_text(buffer.lines)[:at]
        sr = before.count("\n")
        sc = len(before[before.rfind("\n") + 1 :].encode())
        parts = text.split("\n")
        er = sr + len(parts) - 1
        ec = sc + len(text.encode()) if len(parts) == 1 else len(parts[-1].encode())
        rng: FlatRange = {
            "buffer": buf,
            "start_row": sr,
            "start_col": sc,
            "end_row": er,
            "end_col": ec,
        }
        return buf, buffer, rng

    def reanchor_range(self, flat: FlatRange, text: str, context: int) -> Reanchored:
        self._note("reanchor_range")
        got = self._anchor(flat, text)
        if isinstance(got, str):
            return {"error": got}
        _, buffer, rng = got
        first = max(0, rng["start_row"] - context)
        last = min(len(buffer.lines), rng["end_row"] + 1 + context)
        return {
            "range": rng,
            "first_line": first,
            "lines": buffer.lines[first:last],
            "path": buffer.path,
        }

    def replace_range(self, flat: FlatRange, old_text: str, new_text: str) -> Replaced:
        self._note("replace_range")
        got = self._anchor(flat, old_text)
        if isinstance(got, str):
            return {"error": got}
        _, buffer, rng = got
        was_modified = buffer.modified
        starts = _starts(buffer.lines)
        raw = "\n".join(buffer.lines).encode()
        s, e = starts[rng["start_row"]] + rng["start_col"], starts[rng["end_row"]] + rng["end_col"]
        raw = raw[:s] + new_text.encode() + raw[e:]
        buffer.lines = raw.decode().split("\n")
        parts = new_text.split("\n")
        er = rng["start_row"] + len(parts) - 1
        ec = (
            rng["start_col"] + len(new_text.encode())
            if len(parts) == 1
            else len(parts[-1].encode())
        )
        new_rng: FlatRange = {**rng, "end_row": er, "end_col": ec}
        return {"range": new_rng, "applied": self._save(buffer, was_modified)}

    def reveal(self, args: dict[str, Any], keys: list[str], python: PythonResolution | None) -> str:
        self._note("reveal")
        if python is not None and "version" in python:
            got = self.python_source(str(args.get("file_path")), 1 << 30)
            self.calls.pop()
            if got is None or got["version"] != python["version"]:
                return "sightline:python-stale"
        self.views.append(("reveal", {**args, "python": python}))
        return "OK"

    def reveal_attachment(self, args: dict[str, Any], keys: list[str]) -> str:
        self._note("reveal_attachment")
        self.views.append(("reveal_attachment", args))
        return "OK"

    def servername(self) -> str:
        self._note("servername")
        return self.server

    def show_hunks(self, spec: HunkSpec) -> bool:
        self._note("show_hunks")
        buffer = self.buffers.get(spec["buffer"])
        if buffer is None or not spec["hunks"]:
            return False
        self.hunks[spec["id"]] = spec
        return True

    def sync_files(self, paths: list[str]) -> list[KeptBuffer]:
        self._note("sync_files")  # the fake's buffers have no files to fall behind
        return []

    def take_after(self, proposal_id: int) -> list[str] | None:
        self._note("take_after")
        return self.after_side.pop(proposal_id, None)

    def notify_ui(
        self, build: Callable[[], dict[str, Any]], applied: Callable[[], None] | None = None
    ) -> None:
        payload = build()
        with self._lock:
            self.updates.append(payload)
            del self.updates[: -self.keep_updates]
        if applied is not None:
            applied()
