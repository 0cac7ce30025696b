"""Model providers behind one protocol, chosen by name from an explicit registry."""

from __future__ import annotations

from collections.abc import Callable

from sightline.config import ProviderConfig
from sightline.providers.base import Provider, ProviderError


def _echo(cfg: ProviderConfig) -> Provider:
    from sightline.providers.echo import EchoProvider

    return EchoProvider()


def _anthropic(cfg: ProviderConfig) -> Provider:
    from sightline.providers.anthropic_api import AnthropicProvider

    return AnthropicProvider(cfg)


def _acp(cfg: ProviderConfig) -> Provider:
    from sightline.providers.acp import AcpProvider

    return AcpProvider(cfg)


REGISTRY: dict[str, Callable[[ProviderConfig], Provider]] = {
    "echo": _echo,
    "anthropic": _anthropic,
    "acp": _acp,
}


def make_provider(cfg: ProviderConfig) -> Provider:
    try:
        factory = REGISTRY[cfg.name]
    except KeyError:
        names = ", ".join(sorted(REGISTRY))
        raise ProviderError(f"unknown provider {cfg.name!r}; expected one of: {names}") from None
    return factory(cfg)
