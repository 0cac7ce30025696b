"""Code references in the transcript (chips): `path:line`, `path:start-end` the agent writes,
files mentioned with `@path`, and pages mentioned with `@url:`.

Found here, in the core; the pane only paints them and navigates on <CR>.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from sightline.domain.errors import Refused
from sightline.domain.mentions import Mention, parse_mentions
from sightline.domain.workspace import resolve

REFERENCE = re.compile(
    r"(?<![\w/.@-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]+):(\d+)(?:[-–](\d+))?(?![\w])"
)

# What every REFERENCE match holds (`.ext:digit`): a line without it is skipped at the cost
# of one scan for a dot, not REFERENCE's attempt at each of its positions.
_REFERENCE_HINT = re.compile(r"\.[A-Za-z0-9]+:\d")

Chip = tuple[int, int, dict[str, Any]]  # start col, end col (bytes), target

_ID_FIELDS = ("file_path", "start_line", "end_line", "start_row", "start_col", "end_row", "end_col")


def attachment_id(target: dict[str, Any], kind: str) -> str:
    """The stable id of a chip, read by the model (reveal_attachment): the same target gives
    the same id in every core, so a transcript rebuilt from history keeps its ids. `kind` is
    `sel` (a selection), `file` (an @path mention) or `ref` (a path:line in a reply)."""
    key = json.dumps([kind, *(target.get(k) for k in _ID_FIELDS)], ensure_ascii=False)
    return f"{kind}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


def attachment_part(
    text: str | Sequence[Mention], workspace: str, selection: dict[str, Any] | None
) -> str | None:
    """The part that names this message's chips for the model (the selection, the files it
    mentions), or None when it has none. `text` is the message or its parsed mentions."""
    lines = []
    if selection is not None and selection.get("attachment_id"):
        lines.append(f"attachment_id: {selection['attachment_id']} = the selection")
    is_file = _file_test(workspace)
    for mention in parse_mentions(text) if isinstance(text, str) else text:
        if mention.kind == "file" and is_file(mention.value):
            aid = attachment_id(_file_target(mention.value), "file")
            lines.append(f"attachment_id: {aid} = @{mention.value}")
    if not lines:
        return None
    return (
        "Code references in this message (reveal_attachment shows one to the user, as "
        "their click on it does):\n" + "\n".join(lines)
    )


def _file_target(path: str) -> dict[str, Any]:
    return {"file_path": path, "start_line": 1, "end_line": 1}


def _file_test(workspace: str) -> Callable[[str], bool]:
    """Whether a path names a file of the workspace (cached: a delta asks per line)."""
    exists: dict[str, bool] = {}

    def is_file(path: str) -> bool:
        if path not in exists:
            # The read tools' confinement rule (domain/workspace.py), the one for every path.
            try:
                exists[path] = resolve(workspace, path).is_file()
            except Refused:
                exists[path] = False
        return exists[path]

    return is_file


def reference_finder(workspace: str) -> Callable[[str], list[Chip]]:
    """A finder for one workspace; a path counts only if the file exists there."""
    is_file = _file_test(workspace)

    def find(line: str) -> list[Chip]:
        chips: list[Chip] = []
        for m in REFERENCE.finditer(line) if _REFERENCE_HINT.search(line) else ():
            path, start = m.group(1), int(m.group(2))
            end = int(m.group(3)) if m.group(3) else start
            if start < 1 or end < start or not is_file(path):
                continue
            col = len(line[: m.start()].encode())
            end_col = col + len(m.group(0).encode())
            target = {"file_path": path, "start_line": start, "end_line": end}
            target["attachment_id"] = attachment_id(target, "ref")
            chips.append((col, end_col, target))
        if "@" in line:
            for mention in parse_mentions(line):
                if mention.kind == "file" and is_file(mention.value):
                    col = len(line[: mention.start].encode())
                    mentioned = _file_target(mention.value)
                    mentioned["attachment_id"] = attachment_id(mentioned, "file")
                    chips.append((col, col + len(mention.token.encode()), mentioned))
                elif mention.kind == "url":
                    # Opened by the user's <CR> only: no attachment_id, so the model
                    # cannot open it (reveal_attachment).
                    col = len(line[: mention.start].encode())
                    chips.append((col, col + len(mention.token.encode()), {"url": mention.value}))
        return chips

    return find
