"""Errors whose message is meant for the user, as one clear line, and the words they use."""

from __future__ import annotations

from collections.abc import Mapping


class Refused(Exception):
    """A request was refused before anything changed (bad input, wrong state)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def key_path(path: str, key: object) -> str:
    """`path.key` for an error message, on one line whatever the key holds: a key that is not
    printable text is shown quoted and escaped (a user's table may be keyed by anything)."""
    shown = key if isinstance(key, str) and key.isprintable() else repr(key)[:80]
    return f"{path}.{shown}"


def kind_of(value: object) -> str:
    """The Lua-side word for a value's type, for `expected …, got …`."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes):
        return "binary data"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__
