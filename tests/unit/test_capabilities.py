"""Capabilities declared per provider and model (domain/models.py): one table the core and
the pane read, the price table's one home with its sources and date, names as each cloud
writes them, and what a declaration changes in what is sent."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain import models, pricing
from sightline.domain.presets import PRESETS
from sightline.providers import REGISTRY, make_provider
from sightline.providers.base import Capabilities, Request
from tests.effective_config import provider_config

TOOLS = [{"name": "t", "description": "", "input_schema": {"type": "object"}}]


def test_the_price_table_has_one_home_with_its_sources_and_date() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", models.AS_OF)
    for name, model in models.MODELS.items():
        if model.price is not None:
            assert pricing.PRICES[name] is model.price  # pricing reads the one table
            assert model.vendor in models.SOURCES, name
    assert set(pricing.PRICES) == {k for k, m in models.MODELS.items() if m.price is not None}


def test_each_cloud_spelling_of_a_model_finds_its_entry() -> None:
    sonnet = models.MODELS["claude-sonnet"]
    for name in (
        "claude-sonnet-4-5-20250929",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",  # Bedrock
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",  # Bedrock cross-region profile
        "claude-sonnet-4-5@20250929",  # Vertex
        "anthropic/claude-sonnet-4-5",  # OpenRouter
    ):
        assert models.lookup(name) is sonnet, name
        assert pricing.price_of(name) == sonnet.price, name
    assert models.lookup("mystery-model") is models.UNKNOWN
    assert pricing.price_of("mystery-model") is None


def test_every_provider_declares_its_capabilities_for_its_default_model() -> None:
    for name in sorted(REGISTRY):
        p = make_provider(provider_config(name=name))
        caps = p.capabilities
        assert isinstance(caps, Capabilities), name
        shown = caps.to_dict()
        assert set(shown) == {"tools", "vision", "thinking", "context_window", "local"}
        if name in PRESETS and PRESETS[name].model and PRESETS[name].kind != "echo":
            found = models.lookup(p.model)
            assert caps.context_window == (None if caps.local else found.context), name
        p.close()


def test_claude_on_every_cloud_reads_images_and_the_local_servers_cost_nothing() -> None:
    for name in ("anthropic", "bedrock", "vertex"):
        caps = make_provider(provider_config(name=name)).capabilities
        assert caps.vision and caps.tools and caps.thinking == "budget", name
        assert caps.price is not None and caps.context_window == 200_000, name
    for name in ("ollama", "lmstudio", "vllm", "llamacpp"):
        caps = make_provider(provider_config(name=name, model="anything")).capabilities
        assert caps.local and caps.price == {} and caps.context_window is None, name


def test_a_model_that_does_not_think_is_sent_no_thinking_budget() -> None:
    request = Request("sys", [{"role": "user", "content": "hi"}], TOOLS)
    thinks = make_provider(
        provider_config(name="anthropic", model="claude-sonnet-4-5", thinking=2048)
    )
    plain = make_provider(
        provider_config(name="anthropic", model="claude-3-5-haiku", thinking=2048)
    )
    assert "thinking" in thinks._params(request)  # type: ignore[attr-defined]
    assert "thinking" not in plain._params(request)  # type: ignore[attr-defined]
    assert plain.capabilities.to_dict()["thinking"] is None
    # What provider.thinking means to the provider stays (config.lua's check reads it).
    assert plain.capabilities.thinking == "budget"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.sampled_from(sorted(REGISTRY)))
def test_any_model_name_has_capabilities_and_a_known_price_or_none(model: str, name: str) -> None:
    base: Any = make_provider(provider_config(name=name)).capabilities
    caps = base.for_model(model)
    assert isinstance(caps.tools, bool) and isinstance(caps.vision, bool)
    entry = models.find(pricing.PRICES, model)
    assert pricing.price_of(model) == (pricing.PRICES[entry] if entry else None)
    assert caps.price == ({} if caps.local else models.lookup(model).price)
    assert pricing.context_window(model) > 0


def test_every_key_variable_of_a_provider_is_kept_from_commands_and_redacted() -> None:
    from sightline.domain import secrets

    cloud = {"AZURE_OPENAI_AD_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}
    variables = {p.key_env for p in PRESETS.values() if p.key_env} | cloud
    assert variables <= set(secrets.KEY_ENV_VARS)
    env = {name: f"value-of-{name}" for name in variables} | {"PATH": "/bin"}
    assert secrets.scrubbed_env(env) == {"PATH": "/bin"}  # a command the agent runs
