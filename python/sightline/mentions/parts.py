"""What a prompt's `@ext:<name>` and `@path` mentions add for the model.

One entry point for the core (Core.send) and the command line (`sightline
ask`), so both resolve mentions the same way; the core passes a reader that
takes a mentioned file's text from its Neovim buffer when one is loaded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from sightline.domain import extensions
from sightline.domain.mentions import Mention, parse_mentions
from sightline.editor.port import Editor, EditorError
from sightline.mentions.build_parts import (
    ContextLimits,
    EditorReader,
    FileReader,
    build_parts_for_mentions,
    read_disk_file,
)

log = logging.getLogger(__name__)


def context_parts(
    text: str | Sequence[Mention],
    workspace: Path | str,
    limits: ContextLimits,
    *,
    read_file: FileReader | None = None,
    dirs: extensions.ExtensionDirs | None = None,
    read_editor: EditorReader | None = None,
) -> list[str]:
    """The text parts to add after the user's text, in mention order (often none). `text`
    is the message, or its mentions when the caller parsed it already (Core.send)."""
    mentions = parse_mentions(text) if isinstance(text, str) else text
    if not mentions:
        return []
    wanted = any(m.kind == "extension" for m in mentions)
    # Discovery reads every manifest: skipped when no extension is mentioned.
    active = extensions.active_extensions(workspace, dirs) if wanted else {}
    return build_parts_for_mentions(
        mentions, active, workspace, read_file=read_file, limits=limits, read_editor=read_editor
    )


def buffer_reader(editor: Editor, kept: Callable[[Path, str], None] | None = None) -> FileReader:
    """A FileReader that prefers the text of a loaded buffer (unsaved edits included, up to
    date with its file otherwise) and falls back to the disk; called only for the files a
    prompt mentions. `kept(path, code)` hears of a buffer kept although its file changed on
    disk (editor/port.py `Disk`) before its text is used; it may raise to refuse the read."""

    def read(path: Path, max_bytes: int) -> str | bytes | None:
        try:
            got = editor.read_text(str(path), max_bytes)
        except EditorError as err:
            log.debug("reading the buffer of %s failed (%s); reading the file", path, err)
            got = None
        if isinstance(got, dict) and isinstance(got.get("text"), str):
            code = got.get("disk")
            if code and kept is not None:
                kept(path, code)
            return got["text"]
        return read_disk_file(path, max_bytes)

    return read


def editor_reader(editor: Editor, workspace: str) -> EditorReader:
    """What `@buffer` and `@diagnostics` stand for, read from Neovim at send."""
    from sightline.domain.workspace import relative, resolve
    from sightline.tools import diagnostics

    def read(name: str, max_bytes: int) -> tuple[str, str] | None:
        try:
            if name == "buffer":
                found = editor.editor_buffer(max_bytes)
                if not isinstance(found, dict) or not isinstance(found.get("text"), str):
                    return None
                path = str(found.get("name") or "")
                label = relative(workspace, Path(path)) if path else "[No Name]"
                return label, found["text"]
            root = str(resolve(workspace, "."))  # real, as port.diagnostics compares names
            got = editor.diagnostics({"root": root})
            text = diagnostics.format_items(root, dict(got) if isinstance(got, dict) else {}, None)
            return "loaded buffers of the workspace", text
        except EditorError as err:
            log.debug("@%s could not be read (%s)", name, err)
            return None

    return read
