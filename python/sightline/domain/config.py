"""The core's view of the user's configuration.

One schema, one check: lua/sightline/config.lua holds every default and every rule (bounds,
choices, rules across keys), so a bad value is reported by setup() with its path, never later
when the core starts. The core receives the whole effective config (host.lua
`config_for_core`), keeps no defaults of its own and checks its *shape* only: each key it
reads has the type it reads (anything may arrive over RPC, and the core must not break on
it). `from_dict` raises ConfigError naming the key (`provider.max_tokens: expected a whole
number, got a string`; a key that is missing: `got nothing`) and never anything else; it
never refuses what the schema took (tests/nvim/test_port_config.py). Keys the core does not
use are the Lua side's business and are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sightline.domain.errors import key_path, kind_of
from sightline.domain.mcp_config import ServerConfig, ServerConfigError, parse_servers

# A vim/libuv timer cannot wait longer than this either; Python's waits overflow above it.
MAX_MS = 2**31 - 1


class ConfigError(ValueError):
    """A config value has the wrong type or range; the text names its key path."""


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
    name: str
    # "" = the provider's default model (sightline.domain.presets); nil in Lua.
    model: str
    max_tokens: int
    timeout_ms: int
    retries: int
    base_url: str | None  # None: not set (nil in Lua), not a default
    api_key_cmd: str | list[str] | None
    prices: Prices = field(compare=False)
    agent: AgentConfig | None
    # A thinking budget in tokens (a provider whose capabilities.thinking is "budget"), or a
    # reasoning effort ("low" | "medium" | "high"); None = off. config.lua says which.
    thinking: int | str | None
    # The model's context window in tokens; None = the known size of the model (pricing.py).
    context_window: int | None
    # acp: the agent's mode for normal turns, by its id; the only way a mode that does not
    # ask before it writes or runs commands is used (providers/acp/modes.py).
    agent_mode: str | None = None
    # copilot: the GitHub host (Enterprise); None = github.com.
    host: str | None = None
    # azure: the deployment (it names the model) and the API version of the endpoint.
    deployment: str | None = None
    api_version: str | None = None
    # azure: a command printing a Microsoft Entra ID token (instead of a key).
    entra_token_cmd: str | list[str] | None = None
    # bedrock and vertex: the cloud region; vertex: the Google Cloud project.
    region: str | None = None
    project: str | None = None

    @classmethod
    def from_table(cls, prov: _Table) -> ProviderConfig:
        """provider.* of the effective config; ConfigError names a wrong or missing key."""
        return cls(
            name=prov.text("name"),
            model=prov.optional_text("model") or "",
            max_tokens=prov.count("max_tokens"),
            base_url=prov.optional_text("base_url"),
            api_key_cmd=prov.command("api_key_cmd"),
            timeout_ms=prov.ms("timeout_ms"),
            retries=prov.count("retries"),
            prices=prov.prices("prices"),
            agent=prov.agent("agent"),
            thinking=prov.thinking("thinking"),
            context_window=prov.optional_count("context_window"),
            agent_mode=prov.optional_text("agent_mode"),
            host=prov.optional_text("host"),
            deployment=prov.optional_text("deployment"),
            api_version=prov.optional_text("api_version"),
            entra_token_cmd=prov.command("entra_token_cmd"),
            region=prov.optional_text("region"),
            project=prov.optional_text("project"),
        )

    @classmethod
    def from_dict(cls, raw: object) -> ProviderConfig:
        """The effective provider table alone (the ACP check of :checkhealth)."""
        return cls.from_table(_Table(raw, "provider"))


SEARCH_BACKENDS = ("searxng", "brave", "tavily")


@dataclass(frozen=True)
class SearchConfig:
    """tools.network.search: the service web_search asks."""

    backend: str
    url: str | None
    api_key_cmd: str | list[str] | None = field(compare=False)


@dataclass(frozen=True)
class NetworkConfig:
    """tools.network: what fetch_url, web_search and `@url:` may reach, and their bounds."""

    allow_hosts: tuple[str, ...]
    timeout_ms: int
    max_bytes: int
    search: SearchConfig | None

    @classmethod
    def from_table(cls, net: _Table) -> NetworkConfig:
        hosts = net.raw.get("allow_hosts")
        if hosts is None or (isinstance(hosts, Mapping) and not hosts):
            hosts = []
        if not isinstance(hosts, list | tuple) or not all(isinstance(h, str) for h in hosts):
            raise net._fail("allow_hosts", "a list of host names", hosts)
        search = None
        if net.raw.get("search") is not None:
            sub = net.table("search")
            backend = sub.text("backend")
            if backend not in SEARCH_BACKENDS:
                raise sub._fail("backend", "one of " + ", ".join(SEARCH_BACKENDS), backend)
            search = SearchConfig(backend, sub.optional_text("url"), sub.command("api_key_cmd"))
        return cls(tuple(hosts), net.ms("timeout_ms"), net.count("max_bytes"), search)


@dataclass(frozen=True)
class CoreConfig:
    provider: ProviderConfig
    autoaccept: bool
    max_file_bytes: int
    max_total_bytes: int
    max_iterations: int
    command_timeout_ms: int
    rules: bool
    mcp_servers: tuple[ServerConfig, ...]
    mcp_start_timeout_ms: int
    mcp_call_timeout_ms: int
    checkpoints_max_bytes: int = 256 << 20  # checkpoints.max_mb
    network: NetworkConfig = NetworkConfig((), 1, 1, None)

    @classmethod
    def before_init(cls) -> CoreConfig:
        """The core's state until the Lua side's config arrives (core.init is the first
        message it sends): the echo provider, which can change nothing, and no autoaccept.
        Not the user's defaults: those live in config.lua only."""
        provider = ProviderConfig("echo", "none", 1, MAX_MS, 0, None, None, {}, None, None, None)
        return cls(provider, False, 1, 1, 1, 1, False, (), 1, 1)

    @classmethod
    def from_dict(cls, raw: object) -> CoreConfig:
        """Build from the Lua side's effective config; raise ConfigError saying which key is
        wrong or missing."""
        root = _Table(raw, "config")
        provider = ProviderConfig.from_table(root.table("provider"))
        mentions = root.table("mentions")
        tools = root.table("tools")
        mcp = root.table("mcp")
        return cls(
            provider=provider,
            autoaccept=root.flag("autoaccept"),
            max_file_bytes=mentions.count("max_file_bytes"),
            max_total_bytes=mentions.count("max_total_bytes"),
            max_iterations=tools.count("max_iterations"),
            command_timeout_ms=tools.ms("command_timeout_ms"),
            rules=root.flag("rules"),
            mcp_servers=_mcp_servers(mcp.raw.get("servers")),
            mcp_start_timeout_ms=mcp.ms("start_timeout_ms"),
            mcp_call_timeout_ms=mcp.ms("call_timeout_ms"),
            checkpoints_max_bytes=root.table("checkpoints").count("max_mb") << 20,
            network=NetworkConfig.from_table(tools.table("network")),
        )


def _mcp_servers(raw: object) -> tuple[ServerConfig, ...]:
    try:
        return parse_servers(raw, "mcp.servers")
    except ServerConfigError as err:
        raise ConfigError(str(err)) from None


def _kind(value: object) -> str:
    if value is None:
        return "nothing (the Lua side sends every key)"
    return kind_of(value)


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
        where = key if self.path == "config" else key_path(self.path, key)
        return ConfigError(f"{where}: expected {expected}, got {_kind(value)}")

    def table(self, key: str) -> _Table:
        value = self.raw.get(key)
        if value is not None and not isinstance(value, Mapping | list | tuple):
            raise self._fail(key, "a table", value)
        if isinstance(value, list | tuple) and value:
            raise self._fail(key, "a table of named values", value)
        return _Table(value, key if self.path == "config" else key_path(self.path, key))

    def text(self, key: str) -> str:
        value = self.raw.get(key)
        if not isinstance(value, str):
            raise self._fail(key, "a string", value)
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.raw.get(key)
        return None if value is None else self.text(key)

    def optional_flag(self, key: str) -> bool:
        """A flag of a user's own table (not in the schema's defaults): nil is false."""
        return False if self.raw.get(key) is None else self.flag(key)

    def flag(self, key: str) -> bool:
        value = self.raw.get(key)
        if not isinstance(value, bool):
            raise self._fail(key, "true or false", value)
        return value

    def count(self, key: str) -> int:
        """A whole number (its bounds are the schema's)."""
        value = self.raw.get(key)
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # Lua has one number type
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(key, "a whole number", value)
        return value

    def optional_count(self, key: str) -> int | None:
        if self.raw.get(key) is None:
            return None
        return self.count(key)

    def thinking(self, key: str) -> int | str | None:
        """A thinking budget in tokens, an effort name, or off (nil or false)."""
        value = self.raw.get(key)
        if value is None or value is False:
            return None
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self.count(key)
        raise self._fail(key, "a token budget or an effort name", value)

    def ms(self, key: str) -> int:
        """A duration in milliseconds, as a whole number a timer can wait (the schema takes
        whole positive numbers only; a fraction from elsewhere is rounded up)."""
        value = self.raw.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
            raise self._fail(key, "a number of milliseconds", value)
        return int(min(MAX_MS, max(1, math.ceil(value) if math.isfinite(value) else value)))

    def number(self, key: str) -> float | None:
        """A number (a price), or None when absent."""
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise self._fail(key, "a number", value)
        return float(value)

    def prices(self, key: str) -> Prices:
        """`{[model] = {input=…, output=…, cache_read=…, cache_write=…}}`, per million tokens."""
        table = self.table(key)
        out: Prices = {}
        for model in table.raw:
            if not isinstance(model, str):
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
        if not isinstance(cmd, list) or not cmd:
            raise sub._fail("cmd", "a non-empty list of strings", sub.raw.get("cmd"))
        env = sub.table("env")
        pairs = []
        for name, val in env.raw.items():
            if not isinstance(name, str) or not isinstance(val, str) or "\0" in name + val:
                raise env._fail(str(name), "a string", val)
            pairs.append((name, val))
        return AgentConfig(
            cmd=tuple(cmd), env=tuple(pairs), client_writes=sub.optional_flag("client_writes")
        )

    def command(self, key: str) -> str | list[str] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            return value
        if isinstance(value, list | tuple) and all(isinstance(a, str) for a in value):
            return list(value)
        raise self._fail(key, "a command (a string, or a list of strings)", value)
