"""What a prompt's `@ext:<name>` and `@path` mentions add for the model.

One entry point for the core (Core.send) and the command line (`sightline
ask`), so both resolve mentions the same way; the core passes a reader that
takes a mentioned file's text from its Neovim buffer when one is loaded.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sightline import extensions
from sightline.context import ContextLimits, FileReader, build_parts_for_mentions, read_disk_file
from sightline.editor import Editor, EditorError
from sightline.mentions import parse_mentions

log = logging.getLogger(__name__)


def context_parts(
    text: str,
    workspace: Path | str,
    limits: ContextLimits,
    *,
    read_file: FileReader | None = None,
    dirs: extensions.ExtensionDirs | None = None,
) -> list[str]:
    """The text parts to add after the user's text, in mention order (often none)."""
    mentions = parse_mentions(text)
    if not mentions:
        return []
    wanted = any(m.kind == "extension" for m in mentions)
    # Discovery reads every manifest: skipped when no extension is mentioned.
    active = extensions.active_extensions(workspace, dirs) if wanted else {}
    return build_parts_for_mentions(mentions, active, workspace, read_file=read_file, limits=limits)


def buffer_reader(editor: Editor) -> FileReader:
    """A FileReader that prefers the text of a loaded buffer (unsaved edits included)
    and falls back to the disk; called only for the files a prompt mentions."""

    def read(path: Path, max_bytes: int) -> str | bytes | None:
        try:
            text = editor.read_text(str(path), max_bytes)
        except EditorError as err:
            log.debug("reading the buffer of %s failed (%s); reading the file", path, err)
            text = None
        if isinstance(text, str):
            return text
        return read_disk_file(path, max_bytes)

    return read
