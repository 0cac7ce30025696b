"""Code references in the transcript (chips): `path:line`, `path:start-end` the agent writes,
and files mentioned with `@path`.

Found here, in the core; the pane only paints them and navigates on <CR>.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from sightline.mentions import parse_mentions

REFERENCE = re.compile(
    r"(?<![\w/.@-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]+):(\d+)(?:[-–](\d+))?(?![\w])"
)

Chip = tuple[int, int, dict[str, Any]]  # start col, end col (bytes), target


def reference_finder(workspace: str) -> Callable[[str], list[Chip]]:
    """A finder for one workspace; a path counts only if the file exists there."""
    exists: dict[str, bool] = {}

    def is_file(path: str) -> bool:
        if path not in exists:
            full = os.path.realpath(os.path.join(workspace, path))
            inside = full.startswith(os.path.realpath(workspace) + os.sep)
            exists[path] = inside and os.path.isfile(full)
        return exists[path]

    def find(line: str) -> list[Chip]:
        chips: list[Chip] = []
        for m in REFERENCE.finditer(line):
            path, start = m.group(1), int(m.group(2))
            end = int(m.group(3)) if m.group(3) else start
            if start < 1 or end < start or not is_file(path):
                continue
            col = len(line[: m.start()].encode())
            end_col = col + len(m.group(0).encode())
            chips.append((col, end_col, {"file_path": path, "start_line": start, "end_line": end}))
        if "@" in line:
            for mention in parse_mentions(line):
                if mention.kind == "file" and is_file(mention.value):
                    col = len(line[: mention.start].encode())
                    target = {"file_path": mention.value, "start_line": 1, "end_line": 1}
                    chips.append((col, col + len(mention.token.encode()), target))
        return chips

    return find
