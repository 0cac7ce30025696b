"""A loopback fake of the Gemini API (generativelanguage v1beta), for driving the real
Gemini CLI (tests/gemini_cli.py) offline.

Usage::

    with FakeGemini(api_key="k") as server:
        server.script(reply(call("read_file", {"file_path": "app.py"})), reply(text("done")))
        # GOOGLE_GEMINI_BASE_URL=server.base_url GEMINI_API_KEY=k gemini --acp ...
        server.wait_for_requests(2)

Each POST `/v1beta/models/{model}:streamGenerateContent?alt=sse` that passes validation
consumes one scripted reply and streams it as server-sent events, one
`GenerateContentResponse` per `data:` line: text parts in chunks, a function call whole, the
last event with `finishReason` and `usageMetadata`. When the script is empty the reply is the
text "ok". `:generateContent` (the CLI's side requests: routing, summaries) gets the same
reply as plain JSON without consuming the script, and `:countTokens` an estimate.

Validation mirrors what the real API rejects, with its status and message shapes
(`{"error": {"code", "message", "status"}}`): 400 API_KEY_INVALID for a missing or wrong
`x-goog-api-key`, 400 INVALID_ARGUMENT for an unknown field (`Invalid JSON payload received.
Unknown name "x" at 'contents[0].parts[0]': Cannot find field.`), a role other than user/model,
a part without exactly one data field, a function response turn that does not answer the
function call turn just before it (same count and names), and 404 NOT_FOUND for any other
path. A rejected request is recorded (`rejected`) but does not consume the script.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakeapi import _estimate_tokens, _split

JSON = dict[str, Any]

# The fields of the request the API knows (v1beta GenerateContentRequest and its parts);
# anything else is "Unknown name", as the real API answers.
REQUEST_FIELDS = frozenset(
    {
        "model",
        "contents",
        "tools",
        "toolConfig",
        "safetySettings",
        "systemInstruction",
        "generationConfig",
        "cachedContent",
        "labels",
    }
)
CONTENT_FIELDS = frozenset({"role", "parts"})
DATA_FIELDS = frozenset(
    {
        "text",
        "inlineData",
        "functionCall",
        "functionResponse",
        "fileData",
        "executableCode",
        "codeExecutionResult",
    }
)
PART_FIELDS = DATA_FIELDS | {"thought", "thoughtSignature", "videoMetadata", "partMetadata"}
FUNCTION_CALL_FIELDS = frozenset({"id", "name", "args"})
FUNCTION_RESPONSE_FIELDS = frozenset({"id", "name", "response", "willContinue", "scheduling"})
GENERATION_FIELDS = frozenset(
    {
        "stopSequences",
        "responseMimeType",
        "responseSchema",
        "responseJsonSchema",
        "_responseJsonSchema",
        "responseModalities",
        "candidateCount",
        "maxOutputTokens",
        "temperature",
        "topP",
        "topK",
        "seed",
        "presencePenalty",
        "frequencyPenalty",
        "responseLogprobs",
        "logprobs",
        "enableEnhancedCivicAnswers",
        "speechConfig",
        "thinkingConfig",
        "mediaResolution",
        "imageConfig",
    }
)
THINKING_FIELDS = frozenset({"includeThoughts", "thinkingBudget", "thinkingLevel"})
ROLES = ("user", "model")


@dataclass
class Part:
    """One part of a scripted model reply: text (streamed in `chunks`) or a function call."""

    json: JSON
    chunks: int = 1


def text(content: str, chunks: int = 3) -> Part:
    return Part({"text": content}, chunks)


def call(name: str, args: JSON) -> Part:
    return Part({"functionCall": {"name": name, "args": args}})


@dataclass
class Reply:
    parts: list[Part]
    finish: str = "STOP"


def reply(*parts: Part) -> Reply:
    return Reply(list(parts))


@dataclass
class Recorded:
    """One request as received. `body` is the parsed JSON (None if absent or unparsable)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    rejected: str | None = None

    @property
    def model_call(self) -> str:
        """`streamGenerateContent`, `generateContent`, … (the method after the colon)."""
        return self.path.rpartition(":")[2]


class _Invalid(Exception):
    pass


def _fields(obj: Any, known: frozenset[str], where: str) -> JSON:
    if not isinstance(obj, dict):
        raise _Invalid(f"Invalid value at '{where}': expected an object")
    for name in obj:
        if name not in known:
            raise _Invalid(
                f"Invalid JSON payload received. Unknown name \"{name}\" at '{where}': "
                "Cannot find field."
            )
    return obj


def _check_part(raw: Any, where: str) -> JSON:
    part = _fields(raw, PART_FIELDS, where)
    data = [name for name in part if name in DATA_FIELDS]
    if len(data) != 1:
        raise _Invalid(
            f"Unable to submit request because a part at {where} must have exactly one data field"
        )
    if "functionCall" in part:
        fc = _fields(part["functionCall"], FUNCTION_CALL_FIELDS, f"{where}.function_call")
        if not isinstance(fc.get("name"), str) or not fc["name"]:
            raise _Invalid(
                f"* GenerateContentRequest.{where}.function_call.name: Name cannot be empty."
            )
    if "functionResponse" in part:
        fr = _fields(
            part["functionResponse"], FUNCTION_RESPONSE_FIELDS, f"{where}.function_response"
        )
        if not isinstance(fr.get("name"), str) or not fr["name"]:
            raise _Invalid(
                f"* GenerateContentRequest.{where}.function_response.name: Name cannot be empty."
            )
        if not isinstance(fr.get("response"), dict):
            raise _Invalid(
                f"Invalid value at '{where}.function_response.response': expected an object"
            )
    if "text" in part and not isinstance(part["text"], str):
        raise _Invalid(f"Invalid value at '{where}.text' (TYPE_STRING)")
    return part


def _names(content: JSON, kind: str) -> list[str]:
    return [p[kind]["name"] for p in content["parts"] if kind in p]


def validation_error(body: Any) -> str | None:
    """Why the real API would answer 400 INVALID_ARGUMENT, or None."""
    try:
        _check(body)
    except _Invalid as err:
        return str(err)
    return None


def _check(body: Any) -> None:
    body = _fields(body, REQUEST_FIELDS, "")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _Invalid("* GenerateContentRequest.contents: contents is not specified")
    if "systemInstruction" in body:
        sysi = _fields(body["systemInstruction"], CONTENT_FIELDS, "system_instruction")
        for j, part in enumerate(sysi.get("parts") or []):
            _check_part(part, f"system_instruction.parts[{j}]")
    if "generationConfig" in body:
        gen = _fields(body["generationConfig"], GENERATION_FIELDS, "generation_config")
        if "thinkingConfig" in gen:
            _fields(gen["thinkingConfig"], THINKING_FIELDS, "generation_config.thinking_config")
    previous: JSON | None = None
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        content = _fields(content, CONTENT_FIELDS, where)
        role = content.get("role", "user")
        if role not in ROLES:
            raise _Invalid("Please use a valid role: user, model.")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise _Invalid(
                f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty."
            )
        for j, part in enumerate(parts):
            _check_part(part, f"{where}.parts[{j}]")
        answers = _names(content, "functionResponse")
        if answers:
            asked = _names(previous, "functionCall") if previous is not None else []
            if not asked or (previous or {}).get("role") != "model":
                raise _Invalid(
                    "Please ensure that function response turn comes immediately after a "
                    "function call turn."
                )
            if len(answers) != len(asked):
                raise _Invalid(
                    "Please ensure that the number of function response parts is equal to "
                    "the number of function call parts of the function call turn."
                )
            if sorted(answers) != sorted(asked):
                raise _Invalid(
                    "Please ensure that function response names match the function call names."
                )
        if _names(content, "functionCall") and role != "model":
            raise _Invalid("Please ensure that function call turn comes from the model.")
        previous = content


def _error(code: int, status: str, message: str, reason: str | None = None) -> JSON:
    err: JSON = {"code": code, "message": message, "status": status}
    if reason:
        err["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
            }
        ]
    return {"error": err}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeGemini

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the CLI hanging up (a cancel) is not a bug of the fake
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        try:
            self.server.fake._serve(self)
        except ConnectionError:
            raise
        except Exception:
            self.server.fake.errors.append(traceback.format_exc())
            raise

    do_GET = do_POST

    def send_json(self, status: int, obj: JSON) -> None:
        payload = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json; charset=UTF-8")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def send_sse(self, events: list[JSON]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in events:
            payload = f"data: {json.dumps(event)}\r\n\r\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


class FakeGemini:
    """The fake API server: starts at construction on 127.0.0.1:<free port>."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.errors: list[str] = []  # tracebacks of bugs in the fake itself
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        return len(self._script)

    def streamed(self) -> list[Recorded]:
        """The accepted `streamGenerateContent` requests: the agent's model turns."""
        return [
            r
            for r in self.requests
            if r.rejected is None and r.model_call == "streamGenerateContent"
        ]

    def wait_for_requests(self, count: int, timeout: float = 60.0) -> list[Recorded]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.streamed()
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(f"{count} model requests expected, got {len(self.streamed())}")

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeGemini:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request -----------------------------------------------------------------------

    def _serve(self, h: _Handler) -> None:
        url = urlsplit(h.path)
        raw = h.rfile.read(int(h.headers.get("content-length") or 0))
        body: Any = None
        with contextlib.suppress(ValueError):
            body = json.loads(raw) if raw else None
        headers = {k.lower(): v for k, v in h.headers.items()}  # names are case-insensitive
        rec = Recorded(h.command, url.path, parse_qs(url.query), headers, body)
        with self._lock:
            self.requests.append(rec)
        status, answer = self._answer(h, rec)
        if answer is not None:
            h.send_json(status, answer)

    def _answer(self, h: _Handler, rec: Recorded) -> tuple[int, JSON | None]:
        prefix, _, method = rec.path.rpartition(":")
        known = ("streamGenerateContent", "generateContent", "countTokens")
        if h.command != "POST" or not prefix.startswith("/v1beta/models/") or method not in known:
            rec.rejected = "not found"
            return 404, _error(404, "NOT_FOUND", f"Requested entity was not found: {rec.path}")
        if rec.headers.get("x-goog-api-key") != self.api_key:
            rec.rejected = "bad key"
            return 400, _error(
                400,
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key.",
                "API_KEY_INVALID",
            )
        if method == "countTokens":
            return 200, {"totalTokens": _estimate_tokens(rec.body)}
        why = validation_error(rec.body)
        if why is not None:
            rec.rejected = why
            return 400, _error(400, "INVALID_ARGUMENT", why)
        model = prefix.removeprefix("/v1beta/models/")
        if method == "generateContent":
            return 200, _response(reply(text("ok")), model, rec.body, final=True)
        if rec.query.get("alt") != ["sse"]:
            rec.rejected = "not sse"
            return 400, _error(400, "INVALID_ARGUMENT", "streamGenerateContent needs alt=sse here")
        with self._lock:
            step = self._script.popleft() if self._script else reply(text("ok"))
        h.send_sse(list(_events(step, model, rec.body)))
        return 200, None


def _usage(step: Reply, request: Any) -> JSON:
    prompt = _estimate_tokens(request)
    out = _estimate_tokens([p.json for p in step.parts])
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
    }


def _response(
    step: Reply, model: str, request: Any, final: bool, parts: list[JSON] | None = None
) -> JSON:
    candidate: JSON = {
        "content": {
            "parts": parts if parts is not None else [p.json for p in step.parts],
            "role": "model",
        },
        "index": 0,
    }
    out: JSON = {"candidates": [candidate], "modelVersion": model, "responseId": "fake-gemini"}
    if final:
        candidate["finishReason"] = step.finish
        out["usageMetadata"] = _usage(step, request)
    return out


def _events(step: Reply, model: str, request: Any) -> Iterator[JSON]:
    """Text parts in chunks, a function call in one event, the last one with finishReason."""
    pieces: list[JSON] = []
    for part in step.parts:
        if "text" in part.json:
            pieces += [{"text": t} for t in _split(part.json["text"], part.chunks)]
        else:
            pieces.append(part.json)
    for i, piece in enumerate(pieces):
        yield _response(step, model, request, final=i == len(pieces) - 1, parts=[piece])
    if not pieces:
        yield _response(step, model, request, final=True, parts=[])


__all__ = ["FakeGemini", "Recorded", "call", "reply", "text", "validation_error"]
