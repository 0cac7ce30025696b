"""Errors whose message is meant for the user, as one clear line, and the words they use."""

from __future__ import annotations

from collections.abc import Mapping


class Refused(Exception):
    """A request was refused before anything changed (bad input, wrong state)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


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
