"""The conversation-validity rule for every provider issue 28 added: whatever the history
holds, the request each one builds from it is one its API accepts (the fake's validator of
that wire format: Chat Completions for azure and the presets, Messages for Claude on
Bedrock and Vertex), with tools and, for a model without them, without; then a sample of
histories sent whole through each provider's own fake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import images
from sightline.domain.wire import wire_messages
from sightline.providers import make_provider
from sightline.providers.base import Request
from sightline.providers.openai_api import chat_request
from tests import fakeapi, fakeopenai
from tests.effective_config import provider_config
from tests.fakecloud import AwsKey, FakeBedrock, FakeVertex, ServiceAccount
from tests.history_strategies import PROMPT, RECORD, turns

CHAT = ("azure", "mistral", "deepseek", "xai", "lmstudio", "vllm", "llamacpp")
CLAUDE = ("bedrock", "vertex")
TOOLS = [{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}]
HISTORIES = st.lists(RECORD, max_size=12) | turns()


def request_for(records: list[Any]) -> Request:
    # As the turn loop builds it: image references in the history inlined (or said gone).
    return Request("sys", images.inline(wire_messages([*records, PROMPT])), TOOLS)


@settings(max_examples=200, deadline=None)
@given(HISTORIES, st.sampled_from(CHAT), st.booleans())
def test_any_history_is_a_valid_chat_request_for_each_chat_provider(
    records: list[Any], name: str, tools_on: bool
) -> None:
    cfg = provider_config(name=name, model="m", deployment="d", thinking="low")
    body = chat_request(cfg, request_for(records), tools_on)
    assert fakeopenai.validation_error(body) is None, body


@settings(max_examples=200, deadline=None)
@given(HISTORIES, st.sampled_from(CLAUDE), st.sampled_from([None, 2048]))
def test_any_history_is_a_valid_messages_request_for_claude_on_each_cloud(
    records: list[Any], name: str, thinking: int | None
) -> None:
    p: Any = make_provider(provider_config(name=name, thinking=thinking))
    body = p._params(request_for(records))
    assert fakeapi.validation_error(body) is None, body


@pytest.fixture
def clouds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDVALID01")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "valid-secret-000111")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-valid-key-0001")
    bedrock = FakeBedrock(keys=[AwsKey("AKIDVALID01", "valid-secret-000111")])
    vertex = FakeVertex()
    account = ServiceAccount.make(vertex.token_uri)
    vertex.trust(account)
    key_file = tmp_path / "sa.json"
    key_file.write_text(json.dumps(account.info))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    azure = fakeopenai.FakeOpenAI(api_key="azure-valid-key-0001", azure={"d": "gpt-4o"})
    providers = {
        "bedrock": make_provider(
            provider_config(name="bedrock", base_url=bedrock.base_url, region="us-east-1")
        ),
        "vertex": make_provider(
            provider_config(name="vertex", base_url=f"{vertex.base_url}/v1", region="us-east5")
        ),
        "azure": make_provider(
            provider_config(name="azure", base_url=azure.base_url, deployment="d")
        ),
    }
    yield providers
    for server in (bedrock, vertex, azure):
        server.close()
        assert not server.errors, server.errors


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(HISTORIES, st.sampled_from(["bedrock", "vertex", "azure"]))
def test_any_history_is_accepted_by_each_providers_own_fake(
    clouds: Any, records: list[Any], name: str
) -> None:
    # Each fake answers 400 to what its API refuses: the reply arriving is the acceptance.
    events = list(clouds[name].stream(request_for(records), lambda: False))
    assert events and events[-1].content == [{"type": "text", "text": "ok"}]
