"""The core's view of the user's configuration (validated on the Lua side; read tolerantly here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ProviderConfig:
    name: str = "echo"
    model: str = "claude-sonnet-5-5"
    max_tokens: int = 8192
    base_url: str | None = None
    api_key_cmd: str | list[str] | None = None
    timeout_ms: int = 60000
    retries: int = 2


@dataclass(frozen=True)
class CoreConfig:
    provider: ProviderConfig = field(default_factory=ProviderConfig)
    autoaccept: bool = False
    max_file_bytes: int = 65536
    max_total_bytes: int = 262144
    max_iterations: int = 25
    command_timeout_ms: int = 120000

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> CoreConfig:
        """Build from the Lua config table; unknown keys are the Lua side's business."""
        prov = raw.get("provider") or {}
        known = ProviderConfig.__dataclass_fields__
        provider = ProviderConfig(**{k: v for k, v in prov.items() if k in known and v is not None})
        mentions = raw.get("mentions") or {}
        tools = raw.get("tools") or {}
        return cls(
            provider=provider,
            autoaccept=bool(raw.get("autoaccept", False)),
            max_file_bytes=int(mentions.get("max_file_bytes", 65536)),
            max_total_bytes=int(mentions.get("max_total_bytes", 262144)),
            max_iterations=int(tools.get("max_iterations", 25)),
            command_timeout_ms=int(tools.get("command_timeout_ms", 120000)),
        )
