"""Typed shapes for the params of a request, checked before its handler runs.

Each RPC method declares its params (rpc.py); `check_params` answers the checked values or
raises Invalid naming the param and what was expected. The text never quotes the value: it
may be huge, binary or a secret.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from sightline.domain.errors import kind_of

# Linux limits (<linux/limits.h>): longer names fail in the kernel with ENAMETOOLONG.
PATH_MAX = 4096
NAME_MAX = 255
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


class Invalid(ValueError):
    """A param does not have its declared shape; the text is `expected …`."""


@dataclass(frozen=True)
class Spec:
    required: bool = False

    def check(self, value: object) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Text(Spec):
    max_chars: int = 1 << 16
    non_empty: bool = False

    def check(self, value: object) -> str:
        if not isinstance(value, str):
            raise Invalid(f"expected a string, got {kind_of(value)}")
        if self.non_empty and not value:
            raise Invalid("expected a non-empty string")
        if len(value) > self.max_chars:
            raise Invalid(f"expected at most {self.max_chars} characters, got {len(value)}")
        return value


@dataclass(frozen=True)
class Choice(Spec):
    values: Collection[str] = ()

    def check(self, value: object) -> str:
        if not isinstance(value, str) or value not in self.values:
            raise Invalid(f"expected one of {', '.join(self.values)}")
        return value


@dataclass(frozen=True)
class Flag(Spec):
    def check(self, value: object) -> bool:
        if not isinstance(value, bool):
            raise Invalid(f"expected true or false, got {kind_of(value)}")
        return value


@dataclass(frozen=True)
class Int(Spec):
    min: int = INT_MIN
    max: int = INT_MAX

    def check(self, value: object) -> int:
        # Lua has one number type: a whole float is a whole number.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise Invalid(f"expected a whole number, got {kind_of(value)}")
        if not self.min <= value <= self.max:
            raise Invalid(f"expected a whole number in {self.min}..{self.max}")
        return value


@dataclass(frozen=True)
class Table(Spec):
    """A Lua table of named values; `{}` arrives as an empty list (msgpack cannot tell)."""

    def check(self, value: object) -> dict[str, Any]:
        if isinstance(value, list | tuple) and not value:
            return {}
        if not isinstance(value, Mapping):
            raise Invalid(f"expected a table, got {kind_of(value)}")
        return dict(value)


@dataclass(frozen=True)
class FilePath(Spec):
    """A path the kernel can take: no NUL, encodable, within PATH_MAX and NAME_MAX."""

    absolute: bool = False

    def check(self, value: object) -> str:
        path = Text(max_chars=PATH_MAX, non_empty=True).check(value)
        if "\0" in path:
            raise Invalid("expected a path without NUL characters")
        try:
            raw = os.fsencode(path)
        except UnicodeError:
            raise Invalid("expected a path (this one holds characters no file name can)") from None
        if len(raw) >= PATH_MAX:
            raise Invalid(f"expected a path shorter than {PATH_MAX} bytes, got {len(raw)}")
        if any(len(part) > NAME_MAX for part in raw.split(b"/")):
            raise Invalid(f"expected a path whose every name is at most {NAME_MAX} bytes")
        if self.absolute and not os.path.isabs(path):
            raise Invalid("expected an absolute path")
        return path


@dataclass(frozen=True)
class Directory(Spec):
    """An absolute path of an existing directory (a workspace)."""

    def check(self, value: object) -> str:
        path = FilePath(absolute=True).check(value)
        try:
            is_dir = os.path.isdir(path)
        except (OSError, ValueError):
            is_dir = False
        if not is_dir:
            raise Invalid("expected an existing directory")
        return path


def check_params(schema: Mapping[str, Spec], params: Mapping[Any, Any]) -> dict[str, Any]:
    """The declared params, checked, in a new dict; nil (None) is absent. Undeclared keys
    are dropped: the Lua side may send more than a method reads."""
    out: dict[str, Any] = {}
    for name, spec in schema.items():
        value = params.get(name)
        if value is None and not spec.required:
            continue
        try:
            out[name] = spec.check(value)
        except Invalid as err:
            raise Invalid(f"{name}: {err}") from None
    return out
