"""Text from outside (manifests, servers, file names) made safe to show on one line."""

from __future__ import annotations

import re

# ANSI escape sequences (CSI/OSC) and other control characters: a manifest's
# description must not be able to drive the user's terminal or break a menu.
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.)?")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Lone surrogates (a JSON "\ud800" escape, an undecodable byte) cannot be sent to Neovim as text.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SPACE_RE = re.compile(r"\s+")


def clean_display_text(text: str | None, max_chars: int | None = None) -> str:
    """One safe line for menus and listings: no escapes or control characters, whitespace
    collapsed, cut to `max_chars` with an ellipsis."""
    if not text:
        return ""
    text = _CONTROL_RE.sub("", _ANSI_RE.sub("", text.replace("\t", " ")))
    text = _SURROGATE_RE.sub("\ufffd", text)
    text = _SPACE_RE.sub(" ", text).strip()
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(max_chars - 1, 0)].rstrip() + "…"
    return text
