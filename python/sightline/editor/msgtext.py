"""Text for Neovim's msgpack channel.

pynvim packs strings with `surrogateescape`: a lone surrogate U+DC80–U+DCFF travels as the
byte it stands for (a buffer's byte that is not UTF-8, read back exactly), but any other
lone surrogate cannot be packed at all, and the whole answer or update would be lost. Such
surrogates only come from JSON escapes (a model's reply, a history file): they become
U+FFFD. One rule, applied where answers and updates leave for Neovim.
"""

from __future__ import annotations

import re
from typing import Any

_UNPACKABLE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def safe_text(text: str) -> str:
    if text.isascii():
        return text
    return _UNPACKABLE.sub("\ufffd", text)


def safe(value: Any) -> Any:
    """Every string of a msgpack-able value made packable (see the module docstring)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe(k): safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe(v) for v in value]
    return value
