"""Loopback fakes of Claude on AWS Bedrock and on Google Vertex AI, for the anthropic SDK's
AnthropicBedrock and AnthropicVertex clients (the replies, the script and the validation
are tests/fakeapi.py's: the Messages body is the same on both clouds).

Bedrock (`FakeBedrock`), from the Bedrock runtime API reference (InvokeModelWithResponseStream):

    POST /model/{modelId}/invoke-with-response-stream   (and /invoke, whole)
    body: the Messages body without `model` and `stream` (extraneous keys are a 400
    ValidationException), with `anthropic_version: bedrock-2023-05-31`
    auth: SigV4 (`Authorization: AWS4-HMAC-SHA256 Credential=AKID/date/region/bedrock/
    aws4_request, SignedHeaders=…, Signature=…`, `X-Amz-Date`, `X-Amz-Security-Token`),
    checked by recomputing the signature with botocore's own signer and the test's secret;
    or `Authorization: Bearer` with a Bedrock API key.
    reply: `application/vnd.amazon.eventstream`, one binary frame per event (prelude:
    total length, headers length, CRC32; headers `:event-type: chunk`, `:content-type:
    application/json`, `:message-type: event`; payload `{"bytes": base64(event JSON)}`;
    CRC32 of the message). A fault mid-stream is an `exception` frame
    (`:exception-type: throttlingException`). HTTP errors are `{"message": …}` with the
    `x-amzn-ErrorType` header (AccessDeniedException, ValidationException, ThrottlingException).

    The control plane's model lists (Bedrock API reference, same signing service name
    `bedrock`): `GET /foundation-models?byProvider=Anthropic` → `{modelSummaries: [{modelId,
    modelName, providerName, inputModalities, outputModalities, inferenceTypesSupported
    (ON_DEMAND | INFERENCE_PROFILE | PROVISIONED), modelLifecycle: {status}}]}` and
    `GET /inference-profiles?maxResults=…&nextToken=…` → `{inferenceProfileSummaries:
    [{inferenceProfileId, inferenceProfileName, status, type, models: [{modelArn}]}],
    nextToken}` (paged: `profile_page` a page). `list_denied`: a 403 AccessDeniedException.

Vertex (`FakeVertex`), from the Vertex AI docs for Claude (streamRawPredict):

    POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/
         {model}:streamRawPredict
    body: the Messages body without `model`, with an `anthropic_version` (required)
    auth: `Authorization: Bearer` with a token this server's own token endpoint issued
    (POST /token: the OAuth 2.0 JWT-bearer grant a service-account key file makes, the JWT
    checked against the key's public half) and not expired; the reply is the Messages SSE.
    Errors: `{"error": {"code", "message", "status"}}` (NOT_FOUND, RESOURCE_EXHAUSTED …).

    The Model Garden's publisher models (v1beta1 `publishers.models.list`):
    `GET /v1beta1/publishers/anthropic/models?pageSize=…&pageToken=…` → `{publisherModels:
    [{name: publishers/anthropic/models/<id>, versionId, launchStage}], nextPageToken}`,
    with the same bearer token.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import re
import struct
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from tests import fakeapi
from tests.fakeapi import (
    JSON,
    ErrorEvent,
    Event,
    FakeAnthropic,
    HttpError,
    Recorded,
    StreamFault,
    _Handler,
)

_ARN = "arn:aws:bedrock:us-east-1::foundation-model"
_VERTEX_LIST = "/v1beta1/publishers/anthropic/models"
BEDROCK_MODELS: list[JSON] = [
    {
        "modelArn": f"{_ARN}/anthropic.claude-3-haiku-20240307-v1:0",
        "modelId": "anthropic.claude-3-haiku-20240307-v1:0",
        "modelName": "Claude 3 Haiku",
        "providerName": "Anthropic",
        "inputModalities": ["TEXT", "IMAGE"],
        "outputModalities": ["TEXT"],
        "responseStreamingSupported": True,
        "inferenceTypesSupported": ["ON_DEMAND"],
        "modelLifecycle": {"status": "ACTIVE"},
    },
    {
        # Called only through an inference profile (us.anthropic.…): not by this id.
        "modelArn": f"{_ARN}/anthropic.claude-sonnet-4-5-20250929-v1:0",
        "modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "modelName": "Claude Sonnet 4.5",
        "providerName": "Anthropic",
        "inputModalities": ["TEXT", "IMAGE"],
        "outputModalities": ["TEXT"],
        "responseStreamingSupported": True,
        "inferenceTypesSupported": ["INFERENCE_PROFILE"],
        "modelLifecycle": {"status": "ACTIVE"},
    },
    {
        "modelArn": f"{_ARN}/anthropic.claude-v2:1",
        "modelId": "anthropic.claude-v2:1",
        "modelName": "Claude",
        "providerName": "Anthropic",
        "inputModalities": ["TEXT"],
        "outputModalities": ["TEXT"],
        "responseStreamingSupported": True,
        "inferenceTypesSupported": ["ON_DEMAND"],
        "modelLifecycle": {"status": "LEGACY"},
    },
]
BEDROCK_PROFILES: list[JSON] = [
    {
        "inferenceProfileId": f"{geo}.{model}",
        "inferenceProfileName": f"{geo.upper()} {name}",
        "status": "ACTIVE",
        "type": "SYSTEM_DEFINED",
        "models": [{"modelArn": f"{_ARN}/{model}"}],
    }
    for geo, model, name in (
        ("us", "anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5"),
        ("us", "meta.llama3-3-70b-instruct-v1:0", "Llama 3.3 70B"),
        ("eu", "anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5"),
        ("us", "anthropic.claude-opus-4-1-20250805-v1:0", "Claude Opus 4.1"),
    )
]
VERTEX_MODELS: list[JSON] = [
    {
        "name": "publishers/anthropic/models/claude-sonnet-4-5",
        "versionId": "20250929",
        "launchStage": "GA",
    },
    {
        "name": "publishers/anthropic/models/claude-opus-4-1",
        "versionId": "20250805",
        "launchStage": "GA",
    },
    {
        "name": "publishers/anthropic/models/claude-3-haiku",
        "versionId": "20240307",
        "launchStage": "GA",
    },
]

_BEDROCK_PATH = re.compile(r"^/model/(?P<model>[^/]+)/(?P<op>invoke|invoke-with-response-stream)$")
_VERTEX_PATH = re.compile(
    r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/"
    r"models/(?P<model>[^/:]+):(?P<op>streamRawPredict|rawPredict)$"
)

# Bedrock's error shape per status (x-amzn-ErrorType).
BEDROCK_ERRORS = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
VERTEX_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


# --------------------------------------------------------------------------- event stream


def _header(name: str, value: str) -> bytes:
    key, val = name.encode(), value.encode()
    return bytes([len(key)]) + key + b"\x07" + struct.pack(">H", len(val)) + val  # 7: string


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message (the vnd.amazon.eventstream binary framing)."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def chunk_frame(event: JSON) -> bytes:
    body = {"bytes": base64.b64encode(json.dumps(event).encode()).decode(), "p": "abcdefgh"}
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return frame(headers, json.dumps(body).encode())


def exception_frame(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())


# --------------------------------------------------------------------------- SigV4


@dataclass(frozen=True)
class AwsKey:
    access_key: str
    secret_key: str
    session_token: str | None = None


def sigv4_problem(
    method: str, url: str, headers: Mapping[str, str], body: bytes, keys: Sequence[AwsKey]
) -> str | None:
    """Why AWS would refuse this request's signature (403), or None: the signature is made
    again with botocore's own signer from the secret of the access key it names."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    auth = headers.get("authorization", "")
    found = re.match(
        r"AWS4-HMAC-SHA256 Credential=(?P<akid>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
        r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[^,]+), "
        r"Signature=(?P<sig>[0-9a-f]{64})$",
        auth,
    )
    if not found:
        return "Missing Authentication Token"
    key = next((k for k in keys if k.access_key == found["akid"]), None)
    if key is None:
        return "The security token included in the request is invalid."
    if key.session_token and headers.get("x-amz-security-token") != key.session_token:
        return "The security token included in the request is invalid."
    if found["service"] != "bedrock":
        return f"Credential should be scoped to correct service: 'bedrock'. ({found['service']})"
    signed = found["signed"].split(";")
    request = AWSRequest(method=method, url=url, headers={h: headers[h] for h in signed}, data=body)
    request.context["timestamp"] = headers.get("x-amz-date", "")
    signer = SigV4Auth(
        Credentials(key.access_key, key.secret_key, key.session_token), "bedrock", found["region"]
    )
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != found["sig"]:
        return (
            "The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method."
        )
    return None


# --------------------------------------------------------------------------- the fakes


class FakeBedrock(FakeAnthropic):
    """Bedrock runtime on loopback: `base_url` is the endpoint (no path)."""

    def __init__(
        self,
        keys: Sequence[AwsKey] = (),
        api_keys: Sequence[str] = (),
        region: str = "us-east-1",
        enabled: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.keys = list(keys)
        self.api_keys = list(api_keys)
        self.region = region
        # Model ids with access granted; () = every model.
        self.enabled = list(enabled)
        self.first_content_sent: list[float] = []
        self.profile_page = 2  # inference profiles a page
        self.list_denied = False

    def invocations(self) -> list[Recorded]:
        with self._cond:
            return [r for r in self.requests if _BEDROCK_PATH.match(r.path)]

    def _respond(self, h: _Handler, request_id: str) -> None:
        url = urlsplit(h.path)
        raw = h.read_body()
        body = self._parse(raw)
        headers = {k.lower(): v for k, v in h.headers.items()}
        self._record(Recorded(h.command, unquote(url.path), headers, body, parse_qs(url.query)))
        ids = {"x-amzn-requestid": request_id}

        def fail(status: int, message: str, more: Mapping[str, str] | None = None) -> None:
            kind = BEDROCK_ERRORS.get(status, "InternalServerException")
            extra = {**ids, "x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/"}
            h.send_json(status, {"message": message}, {**extra, **(more or {})})

        if h.command == "GET" and url.path in ("/foundation-models", "/inference-profiles"):
            if problem := self._auth(h, headers, raw, "GET"):
                return fail(403, problem)
            if self.list_denied:
                return fail(
                    403,
                    "User: arn:aws:iam::123456789012:user/dev is not authorized to perform: "
                    "bedrock:ListFoundationModels because no identity-based policy allows it",
                )
            return self._lists(h, url.path, parse_qs(url.query), ids)
        found = _BEDROCK_PATH.match(unquote(url.path))
        if h.command != "POST" or not found:
            return fail(404, "UnknownOperationException")
        problem = self._auth(h, headers, raw)
        if problem:
            return fail(403, problem)
        model = found["model"]
        if self.enabled and model not in self.enabled:
            return fail(403, "You don't have access to the model with the specified model ID.")
        if not isinstance(body, dict):
            return fail(400, "Malformed input request, please reformat your input and try again.")
        for extraneous in ("model", "stream"):
            if extraneous in body:
                return fail(
                    400, f"Malformed input request: extraneous key [{extraneous}] is not permitted"
                )
        if not isinstance(body.get("anthropic_version"), str) or not body["anthropic_version"]:
            return fail(400, "Malformed input request: required key [anthropic_version] not found")
        messages_body = {k: v for k, v in body.items() if k != "anthropic_version"} | {
            "model": model
        }
        if problem := fakeapi.validation_error(messages_body):
            return fail(400, problem)
        step = self._next_step()
        if isinstance(step, HttpError):
            return fail(step.status, step.message, step.headers)
        fault = step if isinstance(step, StreamFault) else None
        reply_ = step.of if isinstance(step, StreamFault) else fakeapi._as_reply(step)
        msg_id = request_id.replace("req_", "msg_bdrk_")
        if found["op"] == "invoke":
            return h.send_json(200, fakeapi.message_json(reply_, messages_body, msg_id), ids)
        h.send_response(200)
        h.send_header("content-type", "application/vnd.amazon.eventstream")
        h.send_header("x-amzn-bedrock-content-type", "application/json")
        h.send_header("transfer-encoding", "chunked")
        for name, value in ids.items():
            h.send_header(name, value)
        h.end_headers()
        self._frames(h, fakeapi.stream_events(reply_, messages_body, msg_id), fault)

    def _auth(
        self, h: _Handler, headers: Mapping[str, str], raw: bytes, method: str = "POST"
    ) -> str | None:
        bearer = headers.get("authorization", "")
        if bearer.startswith("Bearer "):
            ok = bearer[7:] in self.api_keys
            return None if ok else "Authentication failed: Invalid API Key format"
        host = headers.get("host", "")
        return sigv4_problem(method, f"http://{host}{h.path}", headers, raw, self.keys)

    def _lists(
        self, h: _Handler, path: str, query: Mapping[str, list[str]], ids: Mapping[str, str]
    ) -> None:
        if path == "/foundation-models":
            by = query.get("byProvider", [""])[0]
            found = [m for m in BEDROCK_MODELS if not by or m["providerName"].lower() == by.lower()]
            return h.send_json(200, {"modelSummaries": found}, ids)
        start = int(query.get("nextToken", ["0"])[0])
        size = min(self.profile_page, int(query.get("maxResults", ["1000"])[0]))
        page: JSON = {"inferenceProfileSummaries": BEDROCK_PROFILES[start : start + size]}
        if start + size < len(BEDROCK_PROFILES):
            page["nextToken"] = str(start + size)
        h.send_json(200, page, ids)

    def _frames(self, h: _Handler, events: Sequence[Event], fault: StreamFault | None) -> None:
        at = fakeapi._fault_position(fault, len(events))

        def send(data: bytes) -> None:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        first = True
        for _name, data in events[:at]:
            if first and _is_text(data):
                first = False
                self.first_content_sent.append(time.monotonic())
            send(chunk_frame(data))
        if isinstance(fault, ErrorEvent):
            send(exception_frame("throttlingException", fault.message))
        elif isinstance(fault, fakeapi.Cut):
            return h.abort()
        elif isinstance(fault, fakeapi.Hold):
            if not self._hold(h):
                return None
            for _name, data in events[at:]:
                send(chunk_frame(data))
        h.end_stream()


def _is_text(event: JSON) -> bool:
    delta = event.get("delta") or {}
    return event.get("type") == "content_block_delta" and delta.get("type") == "text_delta"


class FakeVertex(FakeAnthropic):
    """Vertex AI on loopback with its own OAuth token endpoint (`token_uri`)."""

    def __init__(self, token_life_s: int = 3600) -> None:
        super().__init__()
        self.public_key_pem = b""  # set by trust(): the key file needs token_uri first
        self.token_life_s = token_life_s
        self.tokens: dict[str, float] = {}  # issued token → when it expires (monotonic)
        self._token_ids = itertools.count(1)
        self.first_content_sent: list[float] = []

    @property
    def token_uri(self) -> str:
        return f"{self.base_url}/token"

    def trust(self, account: ServiceAccount) -> None:
        """Accept grants signed by this service account's key."""
        self.public_key_pem = account.public_pem

    def predictions(self) -> list[Recorded]:
        with self._cond:
            return [r for r in self.requests if _VERTEX_PATH.match(r.path)]

    def _respond(self, h: _Handler, request_id: str) -> None:
        url = urlsplit(h.path)
        raw = h.read_body()
        headers = {k.lower(): v for k, v in h.headers.items()}
        if url.path == "/token":
            self._record(Recorded(h.command, url.path, headers, None, {}))
            return self._token(h, raw)
        body = self._parse(raw)
        self._record(Recorded(h.command, unquote(url.path), headers, body, parse_qs(url.query)))
        ids = {"x-request-id": request_id}

        def fail(status: int, message: str) -> None:
            err = {"code": status, "message": message, "status": VERTEX_STATUS.get(status, "x")}
            h.send_json(status, {"error": err}, ids)

        if (h.command, url.path) == ("GET", _VERTEX_LIST):
            bearer = headers.get("authorization", "")
            expires = self.tokens.get(bearer.removeprefix("Bearer "))
            if expires is None or time.monotonic() >= expires:
                return fail(401, "Request had invalid authentication credentials.")
            query = parse_qs(url.query)
            start = int(query.get("pageToken", ["0"])[0])
            size = int(query.get("pageSize", ["100"])[0])
            page: JSON = {"publisherModels": VERTEX_MODELS[start : start + size]}
            if start + size < len(VERTEX_MODELS):
                page["nextPageToken"] = str(start + size)
            return h.send_json(200, page, ids)

        found = _VERTEX_PATH.match(unquote(url.path))
        if h.command != "POST" or not found:
            return fail(404, f"The requested URL {url.path} was not found on this server.")
        bearer = headers.get("authorization", "")
        expires = self.tokens.get(bearer.removeprefix("Bearer "))
        if expires is None or time.monotonic() >= expires:
            return fail(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
            )
        if not isinstance(body, dict) or not body.get("anthropic_version"):
            return fail(400, "anthropic_version: Field required")
        if "model" in body:
            return fail(400, "model: Extra inputs are not permitted")
        messages_body = {k: v for k, v in body.items() if k != "anthropic_version"} | {
            "model": found["model"]
        }
        if problem := fakeapi.validation_error(messages_body):
            # Vertex passes Anthropic's own error body through.
            return h.send_json(
                400, fakeapi._error_body("invalid_request_error", problem, request_id), ids
            )
        step = self._next_step()
        if isinstance(step, HttpError):
            err = {
                "code": step.status,
                "message": step.message,
                "status": VERTEX_STATUS.get(step.status, "x"),
            }
            return h.send_json(step.status, {"error": err}, {**ids, **step.headers})
        if found["op"] == "streamRawPredict" and body.get("stream") is not True:
            return fail(400, "streamRawPredict needs stream: true")
        self._play(
            h, step, messages_body | {"stream": found["op"] == "streamRawPredict"}, request_id
        )

    def _token(self, h: _Handler, raw: bytes) -> None:
        """The OAuth 2.0 token endpoint: a JWT-bearer grant signed by the service account."""
        form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        problem = self._grant_problem(form)
        if problem:
            return h.send_json(400, {"error": "invalid_grant", "error_description": problem}, {})
        token = f"ya29.fake-vertex-token-{next(self._token_ids):04d}"
        self.tokens[token] = time.monotonic() + self.token_life_s
        reply = {"access_token": token, "expires_in": self.token_life_s, "token_type": "Bearer"}
        h.send_json(200, reply, {})

    def _grant_problem(self, form: Mapping[str, str]) -> str | None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa

        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return "Invalid grant_type"
        parts = form.get("assertion", "").split(".")
        if len(parts) != 3:
            return "Invalid JWT"
        try:
            claims = json.loads(_unb64(parts[1]))
            signature = _unb64(parts[2])
        except (ValueError, binascii.Error):
            return "Invalid JWT"
        key = serialization.load_pem_public_key(self.public_key_pem)
        assert isinstance(key, rsa.RSAPublicKey)
        try:
            signed = f"{parts[0]}.{parts[1]}".encode()
            key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return "Invalid JWT Signature."
        # Google's token endpoint is the audience whatever token_uri the key file names.
        if claims.get("aud") != "https://oauth2.googleapis.com/token":
            return f"Invalid JWT: audience {claims.get('aud')!r}"
        if "cloud-platform" not in str(claims.get("scope", "")):
            return "Invalid JWT: no scope"
        if float(claims.get("exp", 0)) < time.time():
            return "Invalid JWT: Token must be a short-lived token"
        return None

    def _stream(
        self, h: _Handler, events: Sequence[Event], fault: StreamFault | None, request_id: str
    ) -> None:
        first = [True]
        plain = h.send_event

        def timed(name: str, data: JSON) -> None:
            if first[0] and _is_text(data):
                first[0] = False
                self.first_content_sent.append(time.monotonic())
            plain(name, data)

        h.send_event = timed  # type: ignore[method-assign]
        try:
            super()._stream(h, events, fault, request_id)
        finally:
            del h.send_event


def _unb64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


@dataclass(frozen=True)
class ServiceAccount:
    """A service-account key file the test writes, and the public half the fake checks."""

    info: dict[str, Any]
    public_pem: bytes

    @classmethod
    def make(cls, token_uri: str, project: str = "proj-test") -> ServiceAccount:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        public = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        info = {
            "type": "service_account",
            "project_id": project,
            "private_key_id": "fakekeyid0001",
            "private_key": private,
            "client_email": f"sightline-test@{project}.iam.gserviceaccount.com",
            "client_id": "100000000000000000001",
            "token_uri": token_uri,
        }
        return cls(info, public)


@pytest.fixture
def fake_bedrock() -> Iterator[FakeBedrock]:
    with FakeBedrock(keys=[AwsKey("AKIDFAKE0001", "fake-secret-key-bedrock-0001")]) as server:
        yield server
    assert not server.errors, "fake Bedrock crashed:\n" + "\n".join(server.errors)
