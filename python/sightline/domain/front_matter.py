"""YAML front matter of Markdown files (prompt files, skills), parsed with PyYAML's base
loader: every value is text, no tag builds an object.  Errors name the file's line."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml


class FrontMatterError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"{line}: {message}")
        self.line = line
        self.message = message


def split_front_matter(
    text: str, keys: Sequence[str], raw: Sequence[str] = ()
) -> tuple[dict[str, str], str]:
    """The front matter's `keys` (as text; others are left alone) and the body after it.
    A file without a `---` first line has none.  Errors carry the file's line number
    (1-based).  A `raw` key's one-line value is its text as written, not YAML: Claude
    Code's `argument-hint: [message]` (a YAML list) or `[pr] [priority]` (not YAML at all)."""
    if not text.startswith("---\n") and text.rstrip("\n") != "---":
        return {}, text
    end = text.find("\n---", 3)
    while end >= 0 and text[end + 4 : end + 5] not in ("", "\n"):
        end = text.find("\n---", end + 1)
    if end < 0:
        raise FrontMatterError(1, "front matter is not closed by a --- line")
    block = text[4 : end + 1]
    body = text[end + 5 :]
    simple = _simple(block, raw)
    if simple is not None:
        return {k: " ".join(simple[k].split()) for k in keys if k in simple}, body
    if raw:
        block = _quote_raw(block, raw)
    try:
        # The base loader: every value is text (what the keys hold), no tags build objects;
        # its C version when PyYAML has one, as the first `/` reads every prompt file.
        loader: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
        data = yaml.load(block, Loader=loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        if err.context_mark is not None and (mark is None or mark.line >= block.count("\n")):
            mark = err.context_mark  # (an unclosed `[` is found at the end: say where it opened)
        line = (mark.line + 2) if mark is not None else 2
        problem = str(err.problem or err.context or "invalid YAML").strip()
        raise FrontMatterError(line, f"front matter: {problem}") from None
    except yaml.YAMLError as err:
        raise FrontMatterError(2, f"front matter: {str(err).splitlines()[0]}") from None
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise FrontMatterError(2, "front matter: expected `key: value` lines")
    meta: dict[str, str] = {}
    for key in keys:
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, list | dict):
            raise FrontMatterError(_key_line(block, key), f"front matter: {key}: expected text")
        meta[key] = " ".join(str(value).split())
    return meta, body


# `key: value` where the value is a plain scalar that reads as itself: no indicator first,
# no `: ` or ` #` in it, no `:` last, printable.  PyYAML's constructor costs ~0.2 ms a file
# and the first `/` reads up to 50 of them; such lines (nearly every prompt file's) are
# read here, anything else by PyYAML.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][\w-]*):[ ]+([^\s\-?:,\[\]{}#&*!|>'\"%@`].*?)[ ]*")
_RAW_LINE = re.compile(r"([A-Za-z_][\w-]*):[ ]+([^\s'\"|>].*?)[ ]*")


def _simple(block: str, raw: Sequence[str] = ()) -> dict[str, str] | None:
    """The block's keys and values when every line is a simple `key: value` (for a `raw`
    key, any one-line value not quoted), else None."""
    out: dict[str, str] = {}
    for line in block.split("\n")[:-1]:  # (the block ends with its last line's newline)
        m = _SIMPLE_LINE.fullmatch(line)
        if m is None and raw:
            m = _RAW_LINE.fullmatch(line)
            if m is not None and m.group(1) not in raw:
                m = None
        if m is None:
            return None
        key, value = m.group(1), m.group(2)
        if key in out or " #" in value or (key not in raw and (": " in value or value[-1] == ":")):
            return None
        if not value.isprintable():
            return None
        out[key] = value
    return out if out else None


def _quote_raw(block: str, raw: Sequence[str]) -> str:
    """The block with each `raw` key's one-line value single-quoted for YAML (unless it is
    quoted already, or continues on the next lines)."""
    lines = block.split("\n")
    for i, line in enumerate(lines):
        key, colon, value = line.partition(":")
        value = value.strip()
        if not colon or key not in raw or not value or value[0] in "'\"|>":
            continue
        if i + 1 < len(lines) and lines[i + 1][:1] in (" ", "\t"):
            continue  # (a value going on over more lines: YAML reads it)
        if " #" in value:
            value = value.split(" #", 1)[0].rstrip()  # (a comment after it, as YAML drops)
        lines[i] = f"{key}: '" + value.replace("'", "''") + "'"
    return "\n".join(lines)


def _key_line(block: str, key: str) -> int:
    for i, line in enumerate(block.split("\n")):
        if line.startswith(f"{key}:"):
            return i + 2
    return 2
