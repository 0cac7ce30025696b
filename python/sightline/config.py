"""The core's view of the user's configuration.

The Lua side validates what the user wrote (lua/sightline/config.lua); the core checks again
what arrives over RPC, because anything may: `from_dict` raises ConfigError naming the key
(`provider.max_tokens: expected a positive integer, got a string`) and never anything else.
Unknown keys are the Lua side's business and are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sightline.mcp_client.config import ServerConfig, ServerConfigError, parse_servers

# A vim/libuv timer cannot wait longer than this either; Python's waits overflow above it.
MAX_MS = 2**31 - 1
# The largest whole number a Lua number holds exactly.
MAX_COUNT = 2**53
MAX_TEXT = 4096


class ConfigError(ValueError):
    """A config value has the wrong type or range; the text names its key path."""


EFFORTS = ("low", "medium", "high")
MIN_THINKING = 1024  # the Messages API refuses a smaller budget_tokens
MAX_THINKING = 128_000

PRICE_KEYS = ("input", "output", "cache_read", "cache_write")
# Prices per million tokens, by model: {model: {input=…, output=…, cache_read=…, cache_write=…}}.
Prices = dict[str, dict[str, float]]


AGENT_PRESETS = ("gemini", "claude", "codex")


@dataclass(frozen=True)
class AgentConfig:
    """provider.agent of the `acp` provider: a preset name, or a command of one's own."""

    preset: str | None = None
    cmd: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    client_writes: bool = False  # a custom agent's edits come as fs/write_text_file


@dataclass(frozen=True)
class ProviderConfig:
    name: str = "echo"
    # "" = the provider's default model (sightline.providers.presets).
    model: str = ""
    max_tokens: int = 8192
    base_url: str | None = None
    api_key_cmd: str | list[str] | None = None
    timeout_ms: int = 60000
    retries: int = 2
    prices: Prices = field(default_factory=dict, compare=False)
    agent: AgentConfig | None = None
    # Anthropic extended thinking budget in tokens, or an OpenAI-compatible reasoning effort
    # ("low" | "medium" | "high"); None = off.
    thinking: int | str | None = None
    # The model's context window in tokens; None = the known size of the model (pricing.py).
    context_window: int | None = None


@dataclass(frozen=True)
class CoreConfig:
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    autoaccept: bool = False
    max_file_bytes: int = 65536
    max_total_bytes: int = 262144
    max_iterations: int = 25
    command_timeout_ms: int = 120000
    rules: bool = True
    mcp_servers: tuple[ServerConfig, ...] = ()
    mcp_start_timeout_ms: int = 30000
    mcp_call_timeout_ms: int = 120000

    @classmethod
    def from_dict(cls, raw: object) -> CoreConfig:
        """Build from the Lua config table; raise ConfigError saying which key is wrong."""
        root = _Table(raw, "config")
        prov = root.table("provider")
        defaults = ProviderConfig()
        provider = ProviderConfig(
            name=prov.text("name", defaults.name),
            model=prov.text("model", defaults.model),
            max_tokens=prov.count("max_tokens", defaults.max_tokens),
            base_url=prov.optional_text("base_url"),
            api_key_cmd=prov.command("api_key_cmd"),
            timeout_ms=prov.ms("timeout_ms", defaults.timeout_ms),
            retries=prov.count("retries", defaults.retries, minimum=0, maximum=10),
            prices=prov.prices("prices"),
            agent=prov.agent("agent"),
            thinking=prov.thinking("thinking"),
            context_window=prov.optional_count("context_window", minimum=1024),
        )
        if isinstance(provider.thinking, int) and _kind_of(provider.name) == "openai":
            raise ConfigError(
                "provider.thinking: expected 'low', 'medium' or 'high' for an "
                "OpenAI-compatible provider (a token budget is for anthropic), got a number"
            )
        mentions = root.table("mentions")
        tools = root.table("tools")
        mcp = root.table("mcp")
        return cls(
            provider=provider,
            autoaccept=root.flag("autoaccept", False),
            max_file_bytes=mentions.count("max_file_bytes", 65536),
            max_total_bytes=mentions.count("max_total_bytes", 262144),
            max_iterations=tools.count("max_iterations", 25),
            command_timeout_ms=tools.ms("command_timeout_ms", 120000),
            rules=root.flag("rules", True),
            mcp_servers=_mcp_servers(mcp.raw.get("servers")),
            mcp_start_timeout_ms=mcp.ms("start_timeout_ms", 30000),
            mcp_call_timeout_ms=mcp.ms("call_timeout_ms", 120000),
        )


def _mcp_servers(raw: object) -> tuple[ServerConfig, ...]:
    try:
        return parse_servers(raw, "mcp.servers")
    except ServerConfigError as err:
        raise ConfigError(str(err)) from None


def _kind_of(provider: str) -> str | None:
    from sightline.providers.presets import preset

    found = preset(provider)
    return found.kind if found else None


def _kind(value: object) -> str:
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
    """One config table and its key path, with typed getters; nil (None) is the default."""

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

    def text(self, key: str, default: str) -> str:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value or len(value) > MAX_TEXT:
            raise self._fail(key, f"a non-empty string of at most {MAX_TEXT} characters", value)
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.raw.get(key)
        return None if value is None else self.text(key, "")

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._fail(key, "true or false", value)
        return value

    def count(self, key: str, default: int, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # Lua has one number type
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            what = "a positive integer" if minimum == 1 else f"a whole number ≥ {minimum}"
            raise self._fail(key, what, value)
        if value > maximum:
            raise self._fail(key, f"a whole number ≤ {maximum}", value)
        return value

    def optional_count(self, key: str, minimum: int = 1) -> int | None:
        if self.raw.get(key) is None:
            return None
        return self.count(key, minimum, minimum=minimum)

    def thinking(self, key: str) -> int | str | None:
        """A thinking budget in tokens (≥ 1024, the API's minimum), an effort name, or off
        (nil or false)."""
        value = self.raw.get(key)
        if value is None or value is False:
            return None
        if isinstance(value, str):
            if value not in EFFORTS:
                raise self._fail(key, "'low', 'medium', 'high' or a token budget", value)
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self.count(key, MIN_THINKING, minimum=MIN_THINKING, maximum=MAX_THINKING)
        raise self._fail(key, "a token budget (a number ≥ 1024) or 'low', 'medium', 'high'", value)

    def ms(self, key: str, default: int) -> int:
        """A duration in milliseconds: any positive number (Lua allows fractions)."""
        value = self.raw.get(key)
        if value is None:
            return default
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or value != value or value <= 0:  # value != value: NaN
            raise self._fail(key, "a positive number of milliseconds", value)
        if value > MAX_MS:
            raise self._fail(key, f"at most {MAX_MS} milliseconds", value)
        whole: int = math.ceil(value)
        return max(1, whole)

    def number(self, key: str) -> float | None:
        """A non-negative finite number (a price), or None when absent."""
        value = self.raw.get(key)
        if value is None:
            return None
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0:
            raise self._fail(key, "a non-negative number", value)
        return float(value)

    def prices(self, key: str) -> Prices:
        """`{[model] = {input=…, output=…, cache_read=…, cache_write=…}}`, per million tokens."""
        table = self.table(key)
        out: Prices = {}
        for model in table.raw:
            if not isinstance(model, str) or not model or len(model) > MAX_TEXT:
                raise ConfigError(f"{table.path}: expected model names as keys, got {_kind(model)}")
            entry = table.table(model)
            out[model] = {k: v for k in PRICE_KEYS if (v := entry.number(k)) is not None}
        return out

    def agent(self, key: str) -> AgentConfig | None:
        """A preset name, or {cmd = {...}, env = {...}, client_writes = bool}."""
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            if value not in AGENT_PRESETS:
                raise self._fail(key, "one of " + ", ".join(AGENT_PRESETS), value)
            return AgentConfig(preset=value)
        sub = self.table(key)
        cmd = sub.command("cmd")
        if not isinstance(cmd, list):
            raise sub._fail("cmd", "a non-empty list of strings", sub.raw.get("cmd"))
        env = sub.table("env")
        pairs = []
        for name, val in env.raw.items():
            if not isinstance(name, str) or not isinstance(val, str) or "\0" in name + val:
                raise env._fail(str(name), "a string", val)
            pairs.append((name, val))
        return AgentConfig(
            cmd=tuple(cmd), env=tuple(pairs), client_writes=sub.flag("client_writes", False)
        )

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
