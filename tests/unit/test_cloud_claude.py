"""Claude on Bedrock and Vertex through the anthropic SDK's cloud clients against loopback
fakes of each wire format (tests/fakecloud.py): SigV4 signing with the credentials the test
puts in the environment (checked by botocore's own signer), the event-stream framing
(checked by botocore's own decoder), Vertex's service-account token grant and its refresh;
faults in the user's words; a missing extra said as the pip command."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sightline.domain import secrets
from sightline.providers import make_provider
from sightline.providers.base import ProviderError, Reply, Request, TextDelta
from tests import fakeapi
from tests.effective_config import provider_config
from tests.fakecloud import (
    AwsKey,
    FakeBedrock,
    FakeVertex,
    ServiceAccount,
    chunk_frame,
    exception_frame,
)

AKID, SECRET, SESSION = "AKIDFAKE0001", "fake-aws-secret-0001-abcdef", "fake-session-token-77"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOLS = [{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}]


def ask(text: str = "hi") -> Request:
    return Request("sys", [{"role": "user", "content": [{"type": "text", "text": text}]}], TOOLS)


def run(p: Any, request: Request | None = None) -> list[Any]:
    return list(p.stream(request or ask(), lambda: False))


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never the instance metadata
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AKID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION)
    monkeypatch.setenv("AWS_REGION", "us-east-1")


@pytest.fixture
def bedrock(aws_env: None) -> Iterator[FakeBedrock]:
    with FakeBedrock(keys=[AwsKey(AKID, SECRET, SESSION)]) as server:
        yield server
    assert not server.errors, server.errors


def bedrock_provider(server: FakeBedrock, **kw: Any) -> Any:
    return make_provider(provider_config(name="bedrock", base_url=server.base_url, **kw))


# -- Bedrock ------------------------------------------------------------------------------------


def test_the_fakes_frames_are_what_botocores_decoder_reads() -> None:
    from anthropic.lib.bedrock._stream_decoder import AWSEventStreamDecoder

    events = fakeapi.stream_events(fakeapi.reply(fakeapi.text("hi there")), {"model": "m"}, "m1")
    raw = b"".join(chunk_frame(data) for _, data in events)
    raw += exception_frame("throttlingException", "boom")
    # Split anywhere: frames arrive in pieces of any size.
    pieces = [raw[i : i + 7] for i in range(0, len(raw), 7)]
    decoded = list(AWSEventStreamDecoder().iter_bytes(iter(pieces)))
    assert [json.loads(e.data) for e in decoded[:-1]] == [data for _, data in events]
    assert [e.event for e in decoded[:-1]] == [name for name, _ in events]
    assert json.loads(decoded[-1].data)["error"]["message"] == "boom"


def test_a_chat_is_signed_with_sigv4_and_streams_through_the_event_stream(
    bedrock: FakeBedrock,
) -> None:
    bedrock.script(fakeapi.text("hello from bedrock", chunks=3))
    p = bedrock_provider(bedrock, model=MODEL, thinking=2048)
    events = run(p)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello from bedrock"
    reply = events[-1]
    assert isinstance(reply, Reply) and reply.stop_reason == "end_turn"
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    (req,) = bedrock.invocations()
    assert req.path == f"/model/{MODEL}/invoke-with-response-stream"
    assert req.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={AKID}/")
    assert "/us-east-1/bedrock/aws4_request" in req.headers["authorization"]
    assert req.headers["x-amz-security-token"] == SESSION
    assert req.body["anthropic_version"] and "model" not in req.body
    assert req.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert req.body["tools"][0]["name"] == "read_file"
    assert secrets.redact(f"x {SECRET} {SESSION}") == "x [REDACTED] [REDACTED]"


def test_a_wrong_secret_is_refused_by_the_signature_check_and_said_plainly(
    bedrock: FakeBedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-000000")
    with pytest.raises(ProviderError) as err:
        run(bedrock_provider(bedrock, retries=0))
    assert "AWS refused the credentials (403)" in err.value.message
    assert "not-the-secret-000000" not in err.value.message
    assert bedrock.pending == 0 and len(bedrock.invocations()) == 1


def test_a_model_without_access_in_the_region_says_where_to_enable_it(aws_env: None) -> None:
    with (
        FakeBedrock(keys=[AwsKey(AKID, SECRET, SESSION)], enabled=["other"]) as server,
        pytest.raises(ProviderError) as err,
    ):
        run(bedrock_provider(server, retries=0, region="eu-west-3"))
    text = err.value.message
    assert "No access to this model in eu-west-3 (403)" in text and "Model access" in text


def test_an_id_that_needs_an_inference_profile_says_so(bedrock: FakeBedrock) -> None:
    msg = (
        "Invocation of model ID anthropic.claude-sonnet-4-5-20250929-v1:0 with on-demand "
        "throughput isn't supported. Retry your request with the ID or ARN of an inference "
        "profile that contains this model."
    )
    bedrock.script(fakeapi.http_error(400, message=msg))
    with pytest.raises(ProviderError, match=r"inference profile; set provider\.model"):
        run(bedrock_provider(bedrock, retries=0))


def test_throttling_is_retried_and_a_throttle_mid_stream_ends_in_one_line(
    bedrock: FakeBedrock,
) -> None:
    bedrock.script(
        fakeapi.http_error(429, message="Too many requests", retry_after=0.05),
        fakeapi.text("after"),
        fakeapi.error_event("throttlingException", "Too many tokens", after_events=3),
    )
    p = bedrock_provider(bedrock, retries=1)
    assert run(p)[-1].content == [{"type": "text", "text": "after"}]
    with pytest.raises(ProviderError) as err:
        run(p)
    assert "Too many tokens" in err.value.message and "\n" not in err.value.message


def test_a_bedrock_api_key_is_sent_as_a_bearer_and_redacted(
    aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-ABCDEF123")
    with FakeBedrock(api_keys=["bedrock-api-key-ABCDEF123"]) as server:
        run(bedrock_provider(server))
        (req,) = server.invocations()
    assert req.headers["authorization"] == "Bearer bedrock-api-key-ABCDEF123"
    assert "bedrock-api-key-ABCDEF123" not in secrets.redact("bedrock-api-key-ABCDEF123")


def test_no_region_is_said_before_anything_is_sent(
    bedrock: FakeBedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ProviderError, match=r"No AWS region for bedrock: set provider.region"):
        bedrock_provider(bedrock).prepare()
    assert bedrock.invocations() == []


# -- Vertex -------------------------------------------------------------------------------------


@pytest.fixture
def vertex(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeVertex]:
    for var in ("ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # never the metadata server
    with FakeVertex(token_life_s=3600) as server:
        account = ServiceAccount.make(server.token_uri, project="proj-fake")
        server.trust(account)
        key_file = tmp_path / "sa.json"
        key_file.write_text(json.dumps(account.info))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
        yield server
    assert not server.errors, server.errors


def vertex_provider(server: FakeVertex, **kw: Any) -> Any:
    cfg = provider_config(
        name="vertex", base_url=f"{server.base_url}/v1", region=kw.pop("region", "us-east5"), **kw
    )
    return make_provider(cfg)


def test_vertex_gets_a_token_from_the_key_file_and_streams_a_chat(vertex: FakeVertex) -> None:
    vertex.script(fakeapi.text("hello from vertex"))
    events = run(vertex_provider(vertex, model="claude-sonnet-4-5@20250929"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello from vertex"
    (req,) = vertex.predictions()
    assert req.path == (
        "/v1/projects/proj-fake/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    token = req.headers["authorization"].removeprefix("Bearer ")
    assert token in vertex.tokens and "model" not in req.body
    assert secrets.redact(token) == secrets.REDACTED  # the minted token is redacted


def test_an_expiring_token_is_refreshed_between_requests(vertex: FakeVertex) -> None:
    # A token that lives less than google-auth's refresh margin is minted again each time.
    vertex.token_life_s = 30
    p = vertex_provider(vertex, project="proj-other")
    run(p)
    run(p)
    first, second = vertex.predictions()
    assert first.headers["authorization"] != second.headers["authorization"]
    assert "/projects/proj-other/" in first.path  # provider.project before the key file's
    assert len([r for r in vertex.requests if r.path == "/token"]) == 2


@pytest.mark.parametrize(
    ("status", "message", "words"),
    [
        (404, "Publisher Model `claude-x` not found.", "enable it in the Model Garden"),
        (403, "Permission denied", "'Vertex AI User'"),
        (429, "Quota exceeded for aiplatform.googleapis.com", "Vertex AI quota exceeded"),
    ],
)
def test_vertex_faults_say_what_to_do(
    vertex: FakeVertex, status: int, message: str, words: str
) -> None:
    vertex.script(fakeapi.http_error(status, message=message))
    with pytest.raises(ProviderError) as err:
        run(vertex_provider(vertex, retries=0))
    assert words in err.value.message and "\n" not in err.value.message


def test_no_region_for_vertex_is_said(vertex: FakeVertex) -> None:
    with pytest.raises(ProviderError, match=r"No region for vertex: set provider.region"):
        make_provider(provider_config(name="vertex", base_url=vertex.base_url)).prepare()


# -- the extras ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "hidden", "dist"),
    [("bedrock", "boto3", "boto3"), ("vertex", "google.auth", "google-auth")],
)
def test_a_missing_extra_is_said_as_the_pip_command(
    aws_env: None, monkeypatch: pytest.MonkeyPatch, name: str, hidden: str, dist: str
) -> None:
    # A module set to None in sys.modules is one that cannot be imported (as uninstalled).
    monkeypatch.setitem(sys.modules, hidden, None)
    p = make_provider(provider_config(name=name, region="us-east-1", base_url="http://127.0.0.1:9"))
    with pytest.raises(ProviderError) as err:
        p.prepare()
    assert err.value.message == (
        f"The {name} provider needs {dist}, which is not installed: "
        f"pip install 'sightline[{name}]' (into the Python sightline runs)."
    )


def test_a_key_file_google_refuses_says_how_to_sign_in_again(
    vertex: FakeVertex, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stranger = ServiceAccount.make(vertex.token_uri)  # a key the token endpoint does not know
    key_file = tmp_path / "other.json"
    key_file.write_text(json.dumps(stranger.info))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    with pytest.raises(ProviderError) as err:
        run(vertex_provider(vertex, retries=0))
    text = err.value.message
    assert text.startswith("Google gave no access token for vertex (invalid_grant")
    assert "gcloud auth application-default login" in text and "\n" not in text
    assert stranger.info["private_key"][40:80] not in text
    assert vertex.predictions() == []


def test_a_region_without_bedrock_is_said_as_such(
    aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    def unresolvable(host: str, *args: Any, **kwargs: Any) -> Any:
        # No name is looked up for real: the region's host is taken as one that has none.
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unresolvable)
    p = make_provider(provider_config(name="bedrock", region="xx-nowhere-1", retries=0))
    with pytest.raises(ProviderError) as err:
        run(p)
    text = err.value.message
    assert "bedrock-runtime.xx-nowhere-1.amazonaws.com" in text
    assert "Bedrock may not be offered in xx-nowhere-1: set provider.region" in text


# -- model lists ----------------------------------------------------------------------------


def test_bedrocks_model_list_is_its_claude_models_and_inference_profiles(
    bedrock: FakeBedrock,
) -> None:
    p = bedrock_provider(bedrock, model=MODEL)
    assert p.models() == [
        "anthropic.claude-3-haiku-20240307-v1:0",  # ON_DEMAND; not the LEGACY v2, not 4.5's id
        "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "us.anthropic.claude-opus-4-1-20250805-v1:0",  # on the second page
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    ]  # not Llama's profile
    listed = [r for r in bedrock.requests if r.method == "GET"]
    assert [r.path for r in listed] == ["/foundation-models", *["/inference-profiles"] * 2]
    assert listed[0].query == {"byProvider": ["Anthropic"]}
    # Signed as the runtime is (the fake checks each signature with botocore's signer).
    assert all(r.headers["authorization"].startswith("AWS4-HMAC-SHA256 ") for r in listed)
    assert all(r.headers["x-amz-security-token"] == SESSION for r in listed)


def test_bedrocks_list_refused_or_unreachable_is_said_plainly(
    bedrock: FakeBedrock, monkeypatch: pytest.MonkeyPatch
) -> None:
    bedrock.list_denied = True
    with pytest.raises(ProviderError) as err:
        bedrock_provider(bedrock).models()
    said = err.value.message
    assert "AWS did not let $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY list" in said
    assert "bedrock:ListFoundationModels" in said and "\n" not in said
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-000000")
    bedrock.list_denied = False
    with pytest.raises(ProviderError, match="AWS did not let"):
        bedrock_provider(bedrock).models()
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-fake-1")
    with pytest.raises(ProviderError, match=r"a Bedrock API key .* only calls models"):
        bedrock_provider(bedrock).models()
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")
    closed = FakeBedrock()
    address = closed.base_url
    closed.close()
    with pytest.raises(ProviderError, match="Could not reach Bedrock to list its models"):
        make_provider(provider_config(name="bedrock", base_url=address)).models()


def test_vertexs_model_list_is_the_model_gardens_claude_models(vertex: FakeVertex) -> None:
    p = vertex_provider(vertex)
    models = p.models()
    assert models == [
        "claude-3-haiku@20240307",
        "claude-opus-4-1@20250805",
        "claude-sonnet-4-5@20250929",
    ]
    (listed,) = [r for r in vertex.requests if r.method == "GET"]
    assert listed.path == "/v1beta1/publishers/anthropic/models"
    assert listed.headers["authorization"].removeprefix("Bearer ") in vertex.tokens


def test_vertexs_list_without_valid_credentials_says_how_to_sign_in(
    vertex: FakeVertex,
) -> None:
    p = vertex_provider(vertex)
    p.models()
    vertex.tokens.clear()  # the token the client holds is no longer accepted
    with pytest.raises(ProviderError, match="gcloud auth application-default login"):
        p.models()
