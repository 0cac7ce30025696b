"""The text parts added for the model when a prompt mentions `@ext:<name>` or `@<path>`.

The user's text is left alone; each mentioned active extension and each
mentioned workspace file becomes one extra text part, in mention order.

Bounds (both configurable, `mentions.max_file_bytes` / `mentions.max_total_bytes`):
every file is read up to a per-file limit and marked where cut, and all the
context one message adds shares one total budget; what does not fit is left
out with a note to the model.  A file is counted once however often it is
mentioned.  Reading never leaves the extension folder or the workspace: a
context file's `..`, absolute path or symlink pointing out is skipped, and an
`@path` follows the read tools' rule (domain/workspace.py `resolve`).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sightline.domain import secrets
from sightline.domain.errors import Refused
from sightline.domain.extensions import Extension, format_capabilities
from sightline.domain.mentions import Mention, parse_mentions
from sightline.domain.workspace import Outside, real_path, resolve, within

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_BYTES = 65536
DEFAULT_MAX_TOTAL_BYTES = 262144

# (absolute path inside the workspace, max bytes wanted) -> its text, or None
# when there is no such file.  The core passes one that reads a loaded
# buffer's text and falls back to the disk; returning more than asked is fine.
FileReader = Callable[[Path, int], str | bytes | None]
# `@buffer` / `@diagnostics` (name, max bytes wanted) -> (what it is, its text), or None when
# there is nothing (no editor window). Given only where there is an editor (the core).
EditorReader = Callable[[str, int], tuple[str, str] | None]
EDITOR_MENTIONS = ("buffer", "diagnostics")


@dataclass(frozen=True)
class ContextLimits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> ContextLimits:
        """Limits from the effective config: `{"mentions": {"max_file_bytes": …}}`."""
        mentions = (config or {}).get("mentions") or {}
        values: dict[str, int] = {}
        for key, default in (
            ("max_file_bytes", DEFAULT_MAX_FILE_BYTES),
            ("max_total_bytes", DEFAULT_MAX_TOTAL_BYTES),
        ):
            value = mentions.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"mentions.{key} must be a positive integer, got {value!r}")
            values[key] = value
        return cls(**values)


class SkippedFile(Exception):
    """A file that is not attached; the message goes to the debug log."""


@dataclass
class _Budget:
    remaining: int
    total: int


@dataclass(frozen=True)
class _Text:
    text: str
    cut: bool  # the file went on past the per-file limit


# --- public entry points -----------------------------------------------------


def build_context_parts(
    texts: str | Sequence[str],
    extensions: Mapping[str, Extension],
    workspace: Path | str,
    *,
    read_file: FileReader | None = None,
    limits: ContextLimits | None = None,
    read_editor: EditorReader | None = None,
) -> list[str]:
    """Text parts to append after the user's text, in mention order.

    `extensions` maps names to extensions (pass `active_extensions(ws)`);
    names that are unknown or not active are skipped without a word, like
    files that do not exist.
    """
    return build_parts_for_mentions(
        parse_mentions(texts),
        extensions,
        workspace,
        read_file=read_file,
        limits=limits,
        read_editor=read_editor,
    )


def build_parts_for_mentions(
    mentions: Sequence[Mention],
    extensions: Mapping[str, Extension],
    workspace: Path | str,
    *,
    read_file: FileReader | None = None,
    limits: ContextLimits | None = None,
    read_editor: EditorReader | None = None,
) -> list[str]:
    limits = limits or ContextLimits()
    budget = _Budget(limits.max_total_bytes, limits.max_total_bytes)
    reader = read_file or read_disk_file
    parts: list[str] = []
    done: set[str] = set()  # a repeated mention spends the budget once
    for mention in mentions:
        if mention.kind == "extension":
            ext = extensions.get(mention.value)
            if ext is None or not ext.active or f"ext:{ext.name}" in done:
                continue
            done.add(f"ext:{ext.name}")
            parts.append(_extension_part(ext, limits, budget))
        elif read_editor is not None and mention.token[1:] in EDITOR_MENTIONS:
            # Reserved names in the editor: a file called so is `@./buffer`.
            if f"editor:{mention.value}" not in done:
                done.add(f"editor:{mention.value}")
                part = _editor_part(mention.value, read_editor, limits, budget)
                if part is not None:
                    parts.append(part)
        elif mention.kind == "file":
            part = _file_mention_part(mention.value, Path(workspace), reader, limits, budget, done)
            if part is not None:
                parts.append(part)
    return parts


# --- extensions ---------------------------------------------------------------------


def _extension_part(ext: Extension, limits: ContextLimits, budget: _Budget) -> str:
    """One extension's context: what it is and offers, then its context files."""
    lines = [
        f'<extension name="{ext.name}">',
        f"The user mentioned @ext:{ext.name}. This context comes from that extension"
        " and is not shown to the user.",
        f"version: {ext.version}",
    ]
    if ext.description:
        lines.append(f"description: {ext.description}")
    capabilities = format_capabilities(ext)
    if capabilities:
        lines.append(f"offers: {capabilities}")
    for rel in ext.manifest.context_files if ext.manifest else ():
        block = _context_file_block(ext.path, rel, limits, budget)
        if block is not None:
            lines.append(block)
    lines.append("</extension>")
    return "\n".join(lines)


def _context_file_block(
    folder: Path, rel: str, limits: ContextLimits, budget: _Budget
) -> str | None:
    try:
        path = resolve_inside(folder, rel)
        read = _decode(read_head(path, limits.max_file_bytes + 1), limits.max_file_bytes)
    except SkippedFile as e:
        log.debug("extension context file %s/%s skipped: %s", folder, rel, e)
        return None
    return _budgeted_block("context_file", rel, read, limits, budget)


# --- @path files -------------------------------------------------------------------


def _file_mention_part(
    raw: str,
    workspace: Path,
    reader: FileReader,
    limits: ContextLimits,
    budget: _Budget,
    done: set[str],
) -> str | None:
    try:
        path = resolve_in_workspace(workspace, raw)
        rel = path.relative_to(real_path(workspace)).as_posix()
        if f"file:{rel}" in done:
            return None
        done.add(f"file:{rel}")
        content = reader(path, limits.max_file_bytes + 1)
        if content is None:
            raise SkippedFile("no such file")
        read = _decode(content, limits.max_file_bytes)
    except (SkippedFile, OSError) as e:  # OSError: from the core's reader
        log.debug("@%s not attached: %s", raw, e)
        return None
    return _budgeted_block("file", rel, read, limits, budget)


def _editor_part(
    name: str, reader: EditorReader, limits: ContextLimits, budget: _Budget
) -> str | None:
    try:
        found = reader(name, limits.max_file_bytes + 1)
        if found is None:
            return None
        label, content = found
        read = _decode(content, limits.max_file_bytes)
    except (SkippedFile, OSError) as e:
        log.debug("@%s not attached: %s", name, e)
        return None
    return _budgeted_block(name, label, read, limits, budget)


def resolve_in_workspace(workspace: Path, raw: str) -> Path:
    """The real path of a mentioned file, by the read tools' one rule (domain/workspace.py
    `resolve`): relative to the workspace or absolute, it must lie inside it once every
    `..` and symlink is resolved; /proc, /sys and /dev never."""
    try:
        return resolve(str(workspace), raw)
    except Refused as refused:
        raise SkippedFile(str(refused)) from None


def resolve_inside(folder: Path, rel: str) -> Path:
    """The real path of an extension's context file; it must stay in the folder (the one
    rule, domain/workspace.py `within`)."""
    try:
        return within(folder, rel)
    except Outside as out:
        raise SkippedFile(str(out)) from None


def read_disk_file(path: Path, max_bytes: int) -> bytes | None:
    """The default FileReader: up to max_bytes from disk, None if there is no such file."""
    try:
        return read_head(path, max_bytes)
    except SkippedFile as e:
        if isinstance(e.__cause__, FileNotFoundError):
            return None
        raise


def read_head(path: Path, max_bytes: int) -> bytes:
    """The first max_bytes of a regular file (FIFOs, devices and folders are refused)."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as e:
        raise SkippedFile(f"cannot open: {e.strerror or e}") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkippedFile("not a regular file")
        chunks: list[bytes] = []
        left = max_bytes
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise SkippedFile(f"cannot read: {e.strerror or e}") from e
    finally:
        os.close(fd)


# --- limits and formatting ---------------------------------------------------------------


def _decode(content: str | bytes, limit: int) -> _Text:
    """Text of at most `limit` UTF-8 bytes; binary content raises SkippedFile."""
    data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    if b"\0" in data:
        raise SkippedFile("binary (NUL byte)")
    cut = len(data) > limit
    head = data[: secrets.cut_point(data, limit)]  # never half a key (domain/secrets.py)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        # A cut may split one multi-byte character: that end is dropped, but an
        # invalid byte anywhere else means the file is not UTF-8 text.
        if not cut or e.start < len(head) - 3:
            raise SkippedFile("binary (not UTF-8)") from None
        text = head[: e.start].decode("utf-8", "strict")
    return _Text(text=text, cut=cut)


def _budgeted_block(tag: str, rel: str, read: _Text, limits: ContextLimits, budget: _Budget) -> str:
    size = len(read.text.encode("utf-8"))
    path = _attr(rel)
    if size > budget.remaining:
        log.debug("%s %s left out: %d bytes, %d left in budget", tag, rel, size, budget.remaining)
        return (
            f'<{tag} path="{path}" omitted="true">\n'
            f"[left out: {rel} ({size} bytes) does not fit in what remains of the "
            f"{budget.total}-byte context budget of this message]\n"
            f"</{tag}>"
        )
    budget.remaining -= size
    body = read.text if read.text.endswith("\n") or not read.text else read.text + "\n"
    if not read.cut:
        return f'<{tag} path="{path}">\n{body}</{tag}>'
    note = f"[cut: only the first {size} bytes of {rel} are shown (limit {limits.max_file_bytes})]"
    return f'<{tag} path="{path}" truncated="true">\n{body}{note}\n</{tag}>'


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
