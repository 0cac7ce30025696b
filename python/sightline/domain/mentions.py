"""The mention grammar: `@ext:<name>`, `@mcp:<server>:<uri>`, `@url:<http(s) URL>`,
`@image:<path>` and `@<path>`; cleaning text for display.

The user's text is never rewritten: these helpers only find what it mentions. A send
parses its text once (Core.send) and hands the mentions to whoever adds parts for them.
A mention starts a token: it follows the start of the text, whitespace or an
opening bracket/quote, so `foo@ext:x` and `a@b.com` are not mentions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

MentionKind = Literal["extension", "file", "mcp", "url", "image"]

# What may stand right before the `@` of a mention (besides start of text).
_BEFORE = r"""(?<![^\s(\[{"'`])"""
# What may follow an extension name: end, whitespace or punctuation.  Trailing
# dots are sentence punctuation ("see @ext:foo."), not part of the name.
_EXT_RE = re.compile(_BEFORE + r"""@ext:([a-z0-9][a-z0-9._-]*?)\.*(?=$|[\s,;:!?)\]}"'`])""")
# A path runs to the first unescaped whitespace; `\x` stands for x (`\ ` = space).
# `@mcp:{server}:{uri}`: a server name holds no `:` or whitespace; the uri runs to whitespace.
_MCP_RE = re.compile(_BEFORE + r"@mcp:([^\s:]+):(\S+)")
_MCP_TRAILING = ".,;!?)]}\"'`"
# `@url:https://…`: fetched at send (mentions/urls.py); the URL runs to whitespace.
_URL_RE = re.compile(_BEFORE + r"@url:(https?://\S+)", re.IGNORECASE)
# `@image:path`: a picture for the model (mentions/images.py); the path is written as @path's.
_IMAGE_RE = re.compile(_BEFORE + r"@image:((?:\\.|[^\s\\])+)", re.DOTALL)
_FILE_RE = re.compile(_BEFORE + r"@((?:\\.|[^\s\\])+)", re.DOTALL)
_TRAILING_PUNCT = ".,;:!?)]}\"'`"
_MENTION_OPENERS = "([{\"'`"
# For mention_at_end, in the reversed line: unescaped whitespace (the backslashes before
# a character start at a boundary of the reading, so an even run leaves it unescaped),
# and an `@` that may start a mention (after the start of the line, whitespace or an opener).
_SPACE_REVERSED_RE = re.compile(r"\s(?:\\\\)*+(?!\\)")
_START_REVERSED_RE = re.compile("@(?=[\\s" + re.escape(_MENTION_OPENERS) + r"]|\Z)")
_UNESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPE_RE = re.compile(r"([\\\s])")
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class Mention:
    kind: MentionKind
    value: str  # extension name, the path with escapes removed, or `server:uri`
    token: str  # exactly as typed, e.g. "@ext:foo" or "@my\\ file.txt"
    part: int  # index of the text part it was found in
    start: int  # offset of "@" in that part

    @property
    def server(self) -> str:
        """An `@mcp:` mention's server name."""
        return self.value.partition(":")[0]

    @property
    def uri(self) -> str:
        """An `@mcp:` mention's resource uri."""
        return self.value.partition(":")[2]


def parse_mentions(texts: str | Sequence[str]) -> list[Mention]:
    """All mentions in the text part(s), first occurrence of each, in the order typed."""
    parts = [texts] if isinstance(texts, str) else list(texts)
    found: list[Mention] = []
    for index, text in enumerate(parts):
        found.extend(_mentions_in(text, index))
    found.sort(key=lambda m: (m.part, m.start))
    seen: set[tuple[MentionKind, str]] = set()
    unique: list[Mention] = []
    for m in found:
        if (m.kind, m.value) not in seen:
            seen.add((m.kind, m.value))
            unique.append(m)
    return unique


def _mentions_in(text: str, part: int) -> list[Mention]:
    out: list[Mention] = []
    taken: set[int] = set()
    for m in _EXT_RE.finditer(text):
        taken.add(m.start())
        out.append(Mention("extension", m.group(1), "@ext:" + m.group(1), part, m.start()))
    for m in _MCP_RE.finditer(text) if "@mcp:" in text else ():
        uri = m.group(2).rstrip(_MCP_TRAILING)
        if uri:
            taken.add(m.start())
            token = m.group(0)[: len(m.group(0)) - (len(m.group(2)) - len(uri))]
            out.append(Mention("mcp", f"{m.group(1)}:{uri}", token, part, m.start()))
    for m in _URL_RE.finditer(text) if "@url:" in text.lower() else ():
        url = m.group(1).rstrip(_MCP_TRAILING)
        if "://" in url and url.split("://", 1)[1]:
            taken.add(m.start())
            token = m.group(0)[: len(m.group(0)) - (len(m.group(1)) - len(url))]
            out.append(Mention("url", url, token, part, m.start()))
    for m in _IMAGE_RE.finditer(text) if "@image:" in text else ():
        raw = _strip_trailing_punct(m.group(1))
        path = unescape_path(raw)
        if path:
            taken.add(m.start())
            out.append(Mention("image", path, "@image:" + raw, part, m.start()))
    for m in _FILE_RE.finditer(text):
        raw = m.group(1)
        # "@ext:…" is never a file, even when the name after it is not valid; nor is a
        # resource mention, nor `@url:…`.
        if m.start() in taken or raw.startswith(("ext:", "url:", "image:")):
            continue
        raw = _strip_trailing_punct(raw)
        path = unescape_path(raw)
        if path:
            out.append(Mention("file", path, "@" + raw, part, m.start()))
    return out


def _strip_trailing_punct(raw: str) -> str:
    # "see @src/a.py." means src/a.py; an escaped character is kept ("@x\.").
    while raw and raw[-1] in _TRAILING_PUNCT and not _ends_escaped(raw):
        raw = raw[:-1]
    return raw


def _ends_escaped(raw: str) -> bool:
    backslashes = len(raw) - 1 - len(raw[:-1].rstrip("\\"))
    return backslashes % 2 == 1


def mention_at_end(before: str) -> tuple[int, str] | None:
    """The mention being typed: where its `@` is in `before` (the line up to the cursor)
    and the raw text after it, escapes kept; None when the cursor is not in one.

    A path may hold an `@` of its own (`node_modules/@types`): only an `@`
    that may start a mention counts, and the token runs to the cursor
    without unescaped whitespace (a trailing lone `\\` is the start of an escape).
    """
    # Linear in len(before), with no loop in Python, however many `@` or escapes it holds
    # (a keystroke calls this on a line that may be a 200 kB paste).  The text after an
    # `@` starts at a boundary of the left-to-right reading of escapes too (an `@` is
    # never a backslash), so it holds unescaped whitespace exactly when the line's last
    # unescaped whitespace is after the `@`; both are found in the reversed line.
    reverse = before[::-1]
    space = _SPACE_REVERSED_RE.search(reverse)
    found = _START_REVERSED_RE.search(reverse, 0, space.start() + 1 if space else len(before))
    if found is None:
        return None
    at = len(before) - 1 - found.start()
    return at, before[at + 1 :]


def extension_mentions(texts: str | Sequence[str]) -> list[str]:
    """Mentioned extension names, each once, in order."""
    return [m.value for m in parse_mentions(texts) if m.kind == "extension"]


def file_mentions(texts: str | Sequence[str]) -> list[str]:
    """Mentioned paths (escapes removed), each once, in order."""
    return [m.value for m in parse_mentions(texts) if m.kind == "file"]


def escape_path(path: str) -> str:
    """The form a path takes after `@`: whitespace and backslashes escaped with `\\`."""
    return _ESCAPE_RE.sub(r"\\\1", path)


def unescape_path(token: str) -> str:
    """Inverse of escape_path; a lone trailing backslash is kept as is."""
    return _UNESCAPE_RE.sub(r"\1", token)


def strip_mentions(text: str) -> str:
    """The text without its `@ext:` tokens, whitespace tidied (for titles and summaries).

    File mentions stay: they are part of what the user asked about.
    """
    return _SPACE_RE.sub(" ", _EXT_RE.sub("", text)).strip()
