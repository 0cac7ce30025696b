"""The effective config as the Lua side sends it to the core (host.lua `config_for_core`) with
config.lua's defaults, for tests that build a core without Neovim. tests/nvim/test_port_config.py
checks it against what a real Neovim sends, so it cannot drift from the schema."""

from __future__ import annotations

import copy
from typing import Any

from sightline.domain.config import CoreConfig, ProviderConfig

# The keys the core reads (others are the Lua side's business), as config.lua defaults them.
EFFECTIVE: dict[str, Any] = {
    "provider": {
        "name": "echo",
        # model, prices, agent, thinking, context_window: nil by default (not sent)
        "max_tokens": 8192,
        "timeout_ms": 60000,
        "retries": 2,
    },
    "autoaccept": False,
    "mentions": {"max_file_bytes": 65536, "max_total_bytes": 262144},
    "tools": {
        "max_iterations": 25,
        "command_timeout_ms": 120000,
        "network": {"allow_hosts": [], "timeout_ms": 15000, "max_bytes": 2097152},
    },
    "rules": True,
    # mcp.servers: an empty table by default (not compared: Lua sends it as a list)
    "mcp": {"start_timeout_ms": 30000, "call_timeout_ms": 120000},
    "checkpoints": {"max_mb": 256},
}


def merged(base: Any, over: Any) -> Any:
    """`over` merged onto `base` key by key where both are tables; anything else in `over`
    replaces (taken as it is: fuzzed values may nest too deeply to copy)."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = copy.deepcopy(base)
        for key, value in over.items():
            out[key] = merged(base.get(key), value)
        return out
    return over


def effective(**top: Any) -> dict[str, Any]:
    """EFFECTIVE with some top-level keys changed (autoaccept=True, provider={...})."""
    return merged(EFFECTIVE, top)  # type: ignore[no-any-return]


def core_config(**top: Any) -> CoreConfig:
    return CoreConfig.from_dict(effective(**top))


def provider_config(**provider: Any) -> ProviderConfig:
    """A provider config as the Lua side would send it with these provider.* keys set."""
    return core_config(provider=provider).provider
