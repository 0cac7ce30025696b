"""The azure provider through the openai SDK's AzureOpenAI client against the loopback
Chat Completions fake in Azure's form: deployment URLs with api-version, the api-key header
or an Entra ID token from a command (run again before it expires), Azure's faults in the
user's words, keys and tokens redacted."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sightline.domain import secrets
from sightline.providers import make_provider
from sightline.providers.azure_api import AzureProvider, jwt_expiry
from sightline.providers.base import ProviderError, Reply, Request, Retrying, TextDelta
from tests import fakeopenai as fo
from tests.effective_config import provider_config
from tests.fakeopenai import FakeOpenAI

KEY = "azure-key-0123456789abcdef"
DEPLOYMENT = "team-gpt4o"


@pytest.fixture
def azure(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    for var in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    with FakeOpenAI(api_key=KEY, azure={DEPLOYMENT: "gpt-4o-2024-08-06"}) as server:
        yield server
    assert not server.errors, server.errors


def provider(server: FakeOpenAI, **kw: Any) -> Any:
    cfg = provider_config(
        name="azure", base_url=server.base_url, deployment=kw.pop("deployment", DEPLOYMENT), **kw
    )
    return make_provider(cfg)


def ask(text: str = "hi") -> Request:
    return Request("sys", [{"role": "user", "content": [{"type": "text", "text": text}]}], [])


def run(p: Any) -> list[Any]:
    return list(p.stream(ask(), lambda: False))


def test_a_chat_goes_to_the_deployment_url_with_the_api_key_header(
    azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    azure.script(fo.text("hello from azure"))
    p = provider(azure)
    assert isinstance(p, AzureProvider) and p.model == DEPLOYMENT  # the deployment names it
    events = run(p)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello from azure"
    assert isinstance(events[-1], Reply) and events[-1].stop_reason == "end_turn"
    (req,) = azure.completions()
    assert req.path == f"/openai/deployments/{DEPLOYMENT}/chat/completions"
    assert req.query["api-version"] == ["2024-10-21"]
    assert req.headers["api-key"] == KEY and "authorization" not in req.headers
    assert "max_completion_tokens" in req.body


def test_an_entra_token_command_signs_and_is_run_again_before_it_expires(
    azure: FakeOpenAI, tmp_path: Path
) -> None:
    # Two tokens, each a JWT whose exp is already inside the renewal margin: each request
    # runs the command again and carries the newest token.
    def jwt(n: int) -> str:
        claims = base64.urlsafe_b64encode(json.dumps({"exp": int(time.time()) + 60}).encode())
        return f"eyJhbGciOiJub25lIn0.{claims.decode().rstrip('=')}.sig{n}"

    tokens = [jwt(1), jwt(2)]
    azure.tokens = tokens
    counter = tmp_path / "n"
    script = tmp_path / "token.sh"
    script.write_text(
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}\n"
        f"if [ $n = 1 ]; then echo {tokens[0]}; else echo {tokens[1]}; fi\n"
    )
    p = provider(azure, entra_token_cmd=["sh", str(script)])
    run(p)
    run(p)
    first, second = azure.completions()
    assert first.headers["authorization"] == f"Bearer {tokens[0]}"
    assert second.headers["authorization"] == f"Bearer {tokens[1]}"
    assert "api-key" not in first.headers
    assert secrets.redact(tokens[1]) == secrets.REDACTED


def test_a_token_far_from_expiry_is_reused(azure: FakeOpenAI, tmp_path: Path) -> None:
    claims = base64.urlsafe_b64encode(json.dumps({"exp": int(time.time()) + 3600}).encode())
    token = f"eyJhbGciOiJub25lIn0.{claims.decode().rstrip('=')}.sig"
    assert jwt_expiry(token) is not None
    azure.tokens = [token]
    runs = tmp_path / "runs"
    p = provider(azure, entra_token_cmd=["sh", "-c", f"echo x >> {runs}; echo {token}"])
    run(p)
    run(p)
    assert runs.read_text().count("x") == 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"deployment": "nope"}, "check provider.deployment (nope)"),
        ({"api_version": "2019-01-01"}, "API version not supported"),
    ],
)
def test_what_azure_rejects_is_said_with_what_to_change(
    azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, change: dict[str, str], words: str
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    with pytest.raises(ProviderError) as err:
        run(provider(azure, retries=0, **change))
    assert words in err.value.message and "\n" not in err.value.message


def test_a_wrong_key_is_401_naming_where_keys_come_from_never_the_key(
    azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-wrong-key-999999")
    with pytest.raises(ProviderError) as err:
        run(provider(azure, retries=0))
    text = err.value.message
    assert "401" in text and "$AZURE_OPENAI_API_KEY" in text and "entra_token_cmd" in text
    assert "azure-wrong-key-999999" not in text


def test_429_with_retry_after_waits_and_says_so(
    azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    azure.script(fo.http_error(429, "exceeded token rate limit", retry_after=0.1), fo.text("ok"))
    events = run(provider(azure, retries=1))
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.delay_s == pytest.approx(0.1) and "429" in retry.reason


def test_a_spent_quota_is_not_retried_and_says_so(
    azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setitem(fo.ERROR_CODES, 429, "insufficient_quota")
    azure.script(fo.http_error(429, "You exceeded your current quota"), fo.text("never"))
    with pytest.raises(ProviderError) as err:
        run(provider(azure, retries=2))
    assert "quota is used up" in err.value.message and "billing" in err.value.message
    assert len(azure.completions()) == 1


@pytest.mark.parametrize(
    ("cfg", "words"),
    [
        ({"base_url": None}, "No Azure endpoint: set provider.base_url"),
        ({"deployment": None}, "No Azure deployment: set provider.deployment"),
        ({}, "No credential for azure: set $AZURE_OPENAI_API_KEY"),
    ],
)
def test_what_is_missing_is_said_before_anything_is_sent(
    azure: FakeOpenAI, cfg: dict[str, Any], words: str
) -> None:
    settings = {"base_url": azure.base_url, "deployment": DEPLOYMENT, **cfg}
    settings = {k: v for k, v in settings.items() if v is not None}
    p = make_provider(provider_config(name="azure", **settings))
    with pytest.raises(ProviderError, match=words.replace("$", r"\$")):
        p.prepare()
    assert azure.completions() == []


def test_the_model_list_says_why_the_deployment_is_the_only_model(azure: FakeOpenAI) -> None:
    with pytest.raises(ProviderError) as err:
        provider(azure).models()
    assert f"the model is the deployment {DEPLOYMENT!r}" in err.value.message
    assert "set provider.deployment" in err.value.message and azure.requests == []


def test_provider_model_names_the_deployments_model_for_its_price(
    azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    p = provider(azure, model="gpt-4o")
    run(p)
    (req,) = azure.completions()
    assert req.path == f"/openai/deployments/{DEPLOYMENT}/chat/completions"
    assert p.model == "gpt-4o" and p.capabilities.price is not None
    assert provider(azure).capabilities.price is None  # "team-gpt4o" alone is not known
