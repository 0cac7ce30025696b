"""The core's view of the user's configuration.

One schema: lua/sightline/config.lua holds every default and validates what the user wrote;
the core receives the whole effective config (host.lua `config_for_core`) and keeps no
defaults of its own, so the two can never differ. It still checks what arrives over RPC,
because anything may: `from_dict` raises ConfigError naming the key (`provider.max_tokens:
expected a positive integer, got a string`; a key that is missing: `got nothing`) and never
anything else. Keys the core does not use are the Lua side's business and are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A vim/libuv timer cannot wait longer than this either; Python's waits overflow above it.
MAX_MS = 2**31 - 1
# The largest whole number a Lua number holds exactly.
MAX_COUNT = 2**53
MAX_TEXT = 4096


class ConfigError(ValueError):
    """A config value has the wrong type or range; the text names its key path."""


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    model: str
    max_tokens: int
    timeout_ms: int
    retries: int
    base_url: str | None = None  # not set (nil in Lua), not a default
    api_key_cmd: str | list[str] | None = None


@dataclass(frozen=True)
class CoreConfig:
    provider: ProviderConfig
    autoaccept: bool
    max_file_bytes: int
    max_total_bytes: int
    max_iterations: int
    command_timeout_ms: int

    @classmethod
    def before_init(cls) -> CoreConfig:
        """The core's state until the Lua side's config arrives (core.init is the first
        message it sends): the echo provider, which can change nothing, and no autoaccept.
        Not the user's defaults: those live in config.lua only."""
        provider = ProviderConfig("echo", "none", 1, MAX_MS, 0)
        return cls(provider, False, 1, 1, 1, 1)

    @classmethod
    def from_dict(cls, raw: object) -> CoreConfig:
        """Build from the Lua side's effective config; raise ConfigError saying which key is
        wrong or missing."""
        root = _Table(raw, "config")
        prov = root.table("provider")
        provider = ProviderConfig(
            name=prov.text("name"),
            model=prov.text("model"),
            max_tokens=prov.count("max_tokens"),
            base_url=prov.optional_text("base_url"),
            api_key_cmd=prov.command("api_key_cmd"),
            timeout_ms=prov.ms("timeout_ms"),
            retries=prov.count("retries", minimum=0, maximum=10),
        )
        mentions = root.table("mentions")
        tools = root.table("tools")
        return cls(
            provider=provider,
            autoaccept=root.flag("autoaccept"),
            max_file_bytes=mentions.count("max_file_bytes"),
            max_total_bytes=mentions.count("max_total_bytes"),
            max_iterations=tools.count("max_iterations"),
            command_timeout_ms=tools.ms("command_timeout_ms"),
        )


def _kind(value: object) -> str:
    if value is None:
        return "nothing (the Lua side sends every key)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


class _Table:
    """One config table and its key path, with typed getters; a missing key is an error
    (except the optional ones, which nil leaves unset)."""

    def __init__(self, raw: object, path: str):
        self.path = path
        if raw is None or (isinstance(raw, list | tuple) and not raw):
            raw = {}  # absent, or an empty Lua table (sent as an empty list)
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{path}: expected a table, got {_kind(raw)}")
        self.raw: Mapping[Any, Any] = raw

    def _fail(self, key: str, expected: str, value: object) -> ConfigError:
        where = key if self.path == "config" else f"{self.path}.{key}"
        return ConfigError(f"{where}: expected {expected}, got {_kind(value)}")

    def table(self, key: str) -> _Table:
        value = self.raw.get(key)
        if value is not None and not isinstance(value, Mapping | list | tuple):
            raise self._fail(key, "a table", value)
        if isinstance(value, list | tuple) and value:
            raise self._fail(key, "a table of named values", value)
        return _Table(value, key if self.path == "config" else f"{self.path}.{key}")

    def text(self, key: str) -> str:
        value = self.raw.get(key)
        if not isinstance(value, str) or not value or len(value) > MAX_TEXT:
            raise self._fail(key, f"a non-empty string of at most {MAX_TEXT} characters", value)
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.raw.get(key)
        return None if value is None else self.text(key)

    def flag(self, key: str) -> bool:
        value = self.raw.get(key)
        if not isinstance(value, bool):
            raise self._fail(key, "true or false", value)
        return value

    def count(self, key: str, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
        value = self.raw.get(key)
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # Lua has one number type
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            what = "a positive integer" if minimum == 1 else f"a whole number ≥ {minimum}"
            raise self._fail(key, what, value)
        if value > maximum:
            raise self._fail(key, f"a whole number ≤ {maximum}", value)
        return value

    def ms(self, key: str) -> int:
        """A duration in milliseconds: any positive number (Lua allows fractions)."""
        value = self.raw.get(key)
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or value != value  # NaN
            or value <= 0
        ):
            raise self._fail(key, "a positive number of milliseconds", value)
        if value > MAX_MS:
            raise self._fail(key, f"at most {MAX_MS} milliseconds", value)
        whole: int = math.ceil(value)
        return max(1, whole)

    def command(self, key: str) -> str | list[str] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value and len(value) <= MAX_TEXT:
            return value
        if (
            isinstance(value, list | tuple)
            and value
            and len(value) <= 256
            and all(isinstance(a, str) and len(a) <= MAX_TEXT for a in value)
        ):
            return list(value)
        raise self._fail(key, "a command (a string, or a list of strings)", value)
