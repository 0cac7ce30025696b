"""The OpenAI-compatible presets (mistral, deepseek, xai, lmstudio, vllm, llamacpp) through
the real openai SDK against the loopback Chat Completions fake: each preset's key variable,
its base_url taking over, a local server's model taken from its model list, and what each
model's declared capabilities change on the wire (tools, reasoning_effort)."""

from __future__ import annotations

from typing import Any

import pytest

from sightline.domain import secrets
from sightline.domain.presets import PRESETS
from sightline.providers import REGISTRY, make_provider
from sightline.providers.base import Notice, ProviderError, Request, TextDelta
from tests import fakeopenai as fo
from tests.effective_config import provider_config
from tests.fakeopenai import FakeOpenAI, fake_openai

__all__ = ["fake_openai"]

HOSTED = {"mistral": "MISTRAL_API_KEY", "deepseek": "DEEPSEEK_API_KEY", "xai": "XAI_API_KEY"}
LOCAL = ("lmstudio", "vllm", "llamacpp")
TOOLS = [{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}]


def ask() -> Request:
    return Request("sys", [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], TOOLS)


def run(p: Any) -> list[Any]:
    return list(p.stream(ask(), lambda: False))


@pytest.mark.parametrize("name", sorted(HOSTED))
def test_a_hosted_preset_sends_its_own_key_to_its_base_url(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    key = f"sk-{name}-secret-4242"
    monkeypatch.setenv(HOSTED[name], key)
    fake_openai.script(fo.text(f"hello from {name}"))
    p = make_provider(provider_config(name=name, base_url=fake_openai.base_url))
    events = run(p)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == f"hello from {name}"
    (req,) = fake_openai.completions()
    assert req.headers["authorization"] == f"Bearer {key}"
    assert req.body["model"] == PRESETS[name].model and "max_tokens" in req.body
    assert p.capabilities.price is not None and not p.capabilities.local


@pytest.mark.parametrize("name", sorted(HOSTED))
def test_a_hosted_preset_without_its_key_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.delenv(HOSTED[name], raising=False)
    with pytest.raises(ProviderError, match=rf"set \${HOSTED[name]} or provider.api_key_cmd"):
        make_provider(provider_config(name=name)).prepare()


@pytest.mark.parametrize("name", LOCAL)
def test_a_local_server_serves_the_first_model_it_lists_and_costs_nothing(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("VLLM_API_KEY", "LLAMA_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with FakeOpenAI(require_key=False, models=["qwen2.5-coder-7b", "other"]) as server:
        p = make_provider(provider_config(name=name, base_url=server.base_url))
        assert p.model == ""  # not known until the server says
        run(p)
        assert p.model == "qwen2.5-coder-7b"
        assert server.completions()[0].body["model"] == "qwen2.5-coder-7b"
    assert p.capabilities.local and p.capabilities.price == {}


def test_a_local_server_with_no_model_loaded_says_so() -> None:
    with FakeOpenAI(require_key=False, models=[]) as server:
        p = make_provider(provider_config(name="lmstudio", base_url=server.base_url))
        with pytest.raises(ProviderError, match="lists no model: load one"):
            p.prepare()


def test_a_vllm_key_is_sent_when_set_and_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "vllm-token-31337")
    with FakeOpenAI(api_key="vllm-token-31337") as server:
        run(make_provider(provider_config(name="vllm", base_url=server.base_url, model="m")))
        assert server.completions()[0].headers["authorization"] == "Bearer vllm-token-31337"
    assert secrets.redact("vllm-token-31337") == secrets.REDACTED


def test_a_model_declared_without_tools_chats_without_them_from_the_first_request(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x-0000")
    p = make_provider(
        provider_config(name="openai", base_url=fake_openai.base_url, model="o1-mini")
    )
    assert not p.capabilities.tools
    events = run(p) + run(p)
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "o1-mini does not support tools" in notices[0].text
    assert all("tools" not in r.body for r in fake_openai.completions())


@pytest.mark.parametrize(("model", "sent"), [("grok-4", False), ("grok-3-mini", True)])
def test_reasoning_effort_goes_only_to_a_model_that_takes_it(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, model: str, sent: bool
) -> None:
    monkeypatch.setenv("XAI_API_KEY", "xai-key-0001")
    cfg = provider_config(name="xai", base_url=fake_openai.base_url, model=model, thinking="high")
    run(make_provider(cfg))
    assert ("reasoning_effort" in fake_openai.completions()[0].body) is sent


def test_every_preset_is_a_registered_provider_and_has_its_facts() -> None:
    for name, preset in PRESETS.items():
        assert name in REGISTRY, name
        assert preset.kind in (
            "anthropic",
            "openai",
            "azure",
            "bedrock",
            "vertex",
            "gemini",
            "echo",
        )
        if preset.kind != "echo":
            assert preset.thinking in ("budget", "effort"), name
