"""An in-memory Editor (python/sightline/editor.py) for tests that build a Core without Neovim.

It holds buffers as lists of lines and answers the few Lua calls the core makes with what the
real Lua would answer for them (`scope.describe`, reading a buffer for a mention); any other
call is refused with EditorError, as Neovim refuses a Lua chunk that fails. UI updates are
built at once (so a broken payload fails the test) and kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sightline.editor import EditorError
from sightline.scope import RANGE_KEYS


@dataclass
class FakeBuffer:
    lines: list[str]
    path: str = ""
    buftype: str = ""
    filetype: str = ""


@dataclass
class FakeEditor:
    buffers: dict[int, FakeBuffer] = field(default_factory=lambda: {1: FakeBuffer(["hello"])})
    current: int = 1
    updates: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    keep_updates: int = 50
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def lua(self, code: str, *args: Any) -> Any:
        with self._lock:
            self.calls.append(code.split("(", 1)[0][-60:])
            del self.calls[: -self.keep_updates]
        if "sightline.scope').describe" in code:
            return self._describe(args[0] if args else {})
        if "sightline.buffers').find(path)" in code:
            # mention_context's buffer reader: no buffer is loaded for that path.
            return None
        raise EditorError("the fake editor does not run this Lua")

    def notify_ui(self, build: Callable[[], dict[str, Any]]) -> None:
        payload = build()
        with self._lock:
            self.updates.append(payload)
            del self.updates[: -self.keep_updates]

    def _describe(self, flat: dict[str, Any]) -> dict[str, Any]:
        """scope.describe: check the flat range against a buffer, as the Lua does."""
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
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line.encode()) + 1)
        text = raw[starts[sr] + sc : starts[er] + ec].decode(errors="replace")
        return {
            "range": {**{k: flat[k] for k in RANGE_KEYS}, "buffer": buf},
            "text": text,
            "path": buffer.path,
            "buftype": buffer.buftype,
            "filetype": buffer.filetype,
        }
