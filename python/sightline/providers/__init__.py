"""Model providers behind one protocol, chosen by name from an explicit registry."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from sightline.domain.config import ProviderConfig
from sightline.domain.presets import default_model, preset
from sightline.providers.base import Provider, ProviderError, preload_module


def _echo(cfg: ProviderConfig) -> Provider:
    from sightline.providers.echo import EchoProvider

    return EchoProvider()


def _anthropic(cfg: ProviderConfig) -> Provider:
    from sightline.providers.anthropic_api import AnthropicProvider

    return AnthropicProvider(cfg)


def _openai(cfg: ProviderConfig) -> Provider:
    # Every Chat Completions preset: one implementation, the preset table says the rest.
    from sightline.providers.openai_api import OpenAIProvider

    return OpenAIProvider(cfg)


def _gemini(cfg: ProviderConfig) -> Provider:
    from sightline.providers.gemini_api import GeminiProvider

    return GeminiProvider(cfg)


def _copilot(cfg: ProviderConfig) -> Provider:
    from sightline.providers.copilot_api import CopilotProvider

    return CopilotProvider(cfg)


def _azure(cfg: ProviderConfig) -> Provider:
    from sightline.providers.azure_api import AzureProvider

    return AzureProvider(cfg)


def _claude_cloud(cfg: ProviderConfig) -> Provider:
    # bedrock and vertex: Claude through the anthropic SDK's cloud clients.
    from sightline.providers.cloud_claude import CloudClaudeProvider

    return CloudClaudeProvider(cfg)


def _acp(cfg: ProviderConfig) -> Provider:
    from sightline.providers.acp import AcpProvider

    return AcpProvider(cfg)


REGISTRY: dict[str, Callable[[ProviderConfig], Provider]] = {
    "echo": _echo,
    "anthropic": _anthropic,
    "openai": _openai,
    "ollama": _openai,
    "openrouter": _openai,
    "acp": _acp,
    "gemini": _gemini,
    "copilot": _copilot,
    # OpenAI-compatible services (domain/presets.py).
    "mistral": _openai,
    "deepseek": _openai,
    "xai": _openai,
    "lmstudio": _openai,
    "vllm": _openai,
    "llamacpp": _openai,
    "azure": _azure,
    "bedrock": _claude_cloud,
    "vertex": _claude_cloud,
}


# Providers whose own module is the heavy import (the ACP package loads the SDK's pydantic
# models, ~0.5 s): making one at setup() would block Neovim, so its module is imported in
# the background instead and the provider is made on the first send.
HEAVY_MODULES: dict[str, str] = {"acp": "sightline.providers.acp"}


def preload(cfg: ProviderConfig, made: Callable[[], Provider]) -> threading.Event:
    """Start, in the background, what the configured provider's first request needs; `made`
    is the session's provider, asked only when making it is cheap."""
    module = HEAVY_MODULES.get(cfg.name)
    return preload_module(module) if module else made().preload()


def with_default_model(cfg: ProviderConfig) -> ProviderConfig:
    """`cfg` with the preset's default model when the user gave none: Azure's deployment; ""
    for a preset whose server says (its first listed model, asked on the first request)."""
    if cfg.model:
        return cfg
    found = preset(cfg.name)
    if found is not None and found.kind == "azure":
        return dataclasses.replace(cfg, model=cfg.deployment or "")
    if found is not None and found.kind == "openai" and not found.model:
        return cfg
    return dataclasses.replace(cfg, model=default_model(cfg.name) or "default")


def make_provider(cfg: ProviderConfig) -> Provider:
    try:
        factory = REGISTRY[cfg.name]
    except KeyError:
        names = ", ".join(sorted(REGISTRY))
        raise ProviderError(f"unknown provider {cfg.name!r}; expected one of: {names}") from None
    return factory(with_default_model(cfg))
