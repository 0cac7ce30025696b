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

For the `gemini` provider (the google-genai SDK) it also follows Google's thought-signature
rules: the first function call part of each reply carries a `thoughtSignature` (and a reply
without calls has one on its last part); for Gemini 3 and later models, every model step of
the current turn (the contents after the last user content holding text) must send the
signature of its first function call part back on that part, unchanged (400 "Function call
is missing a thought_signature in functionCall parts", or "Corrupted thought signature" for
one the server did not issue for that part). Contents must alternate user/model and end
with the user's (400, as the real API answers). `thought(text)` parts stream only when the
request asked for thoughts (includeThoughts). Faults: `http_error(status, state, reason,
retry_delay)`, `cut(after)` (the socket dropped), `truncated(after)` (a clean end without
finishReason), `hold(after)` (pause until release()). GET /v1beta/models lists `models`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import itertools
import json
import re
import socket
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
THINKING_LEVELS = ("minimal", "low", "medium", "high")
TOOL_FIELDS = frozenset(
    {"functionDeclarations", "googleSearch", "codeExecution", "urlContext", "googleSearchRetrieval"}
)
DECLARATION_FIELDS = frozenset(
    {
        "name",
        "description",
        "parameters",
        "parametersJsonSchema",
        "response",
        "responseJsonSchema",
        "behavior",
    }
)
_FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
ROLES = ("user", "model")
_SIGNING_KEY = b"fake-gemini-thought-signatures"


# Values the API takes as they are (the model's and the tools' own JSON): no key in them is
# a field name.
_OPAQUE = frozenset({"args", "response", "parametersJsonSchema", "responseJsonSchema", "labels"})


def wire_names(value: Any, opaque: bool = False) -> Any:
    """`value` with every field name in lowerCamelCase. The API parses proto JSON, which
    takes both a field's proto name (`function_call`, as the SDK sends some) and its JSON
    name (`functionCall`); validation then sees one spelling."""
    if opaque:
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            head, *rest = str(key).split("_")
            name = head + "".join(w[:1].upper() + w[1:] for w in rest) if rest else str(key)
            out[name] = wire_names(item, name in _OPAQUE)
        return out
    if isinstance(value, list):
        return [wire_names(v) for v in value]
    return value


def sign(part: JSON) -> str:
    """The thought signature the fake issues for a part (bound to what it holds: a call's
    name and arguments, whatever id the client gives it), base64."""
    fc = part.get("functionCall")
    held = {"name": fc.get("name"), "args": fc.get("args")} if isinstance(fc, dict) else part
    held = {k: v for k, v in held.items() if k != "thoughtSignature"}
    digest = hmac.new(_SIGNING_KEY, json.dumps(held, sort_keys=True).encode(), hashlib.sha256)
    return base64.b64encode(b"\x12sig" + digest.digest()).decode()


def requires_signatures(model: str) -> bool:
    found = re.match(r"^(?:models/)?gemini-(\d+)", model)
    return found is not None and int(found.group(1)) >= 3


@dataclass
class Part:
    """One part of a scripted model reply: text (streamed in `chunks`) or a function call."""

    json: JSON
    chunks: int = 1


def text(content: str, chunks: int = 3) -> Part:
    return Part({"text": content}, chunks)


def call(name: str, args: JSON, id: str | None = None) -> Part:
    fc: JSON = {"name": name, "args": args}
    if id is not None:
        fc["id"] = id
    return Part({"functionCall": fc})


def thought(content: str, chunks: int = 2) -> Part:
    """A thought summary (streamed only when the request set includeThoughts)."""
    return Part({"text": content, "thought": True}, chunks)


@dataclass
class Reply:
    parts: list[Part]
    finish: str = "STOP"
    usage: JSON | None = None  # usageMetadata fields over the estimate


def reply(*parts: Part, finish: str = "STOP", usage: JSON | None = None) -> Reply:
    return Reply(list(parts), finish, usage)


@dataclass(frozen=True)
class HttpError:
    status: int
    state: str
    message: str
    reason: str | None = None
    retry_delay: float | None = None


def http_error(
    status: int,
    state: str = "",
    message: str | None = None,
    reason: str | None = None,
    retry_delay: float | None = None,
) -> HttpError:
    states = {
        400: "INVALID_ARGUMENT",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }
    return HttpError(
        status,
        state or states.get(status, "UNKNOWN"),
        message or f"fake error {status}",
        reason,
        retry_delay,
    )


@dataclass(frozen=True)
class Fault:
    """`kind` = cut | truncated | hold, after `after` events of `of`."""

    kind: str
    after: int
    of: Reply


def cut(after: int = 1, of: Reply | None = None) -> Fault:
    return Fault("cut", after, of or reply(text("hello there world")))


def truncated(after: int = 1, of: Reply | None = None) -> Fault:
    return Fault("truncated", after, of or reply(text("hello there world")))


def hold(after: int = 1, of: Reply | None = None) -> Fault:
    return Fault("hold", after, of or reply(text("hello there world")))


Step = Reply | HttpError | Fault


@dataclass
class Recorded:
    """One request as received. `body` is the parsed JSON (None if absent or unparsable),
    its field names as the API reads them (`wire_names`)."""

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


def validation_error(body: Any, model: str = "") -> str | None:
    """Why the real API would answer 400 INVALID_ARGUMENT, or None (`model`: the model in
    the URL, for the rules of Gemini 3 and later)."""
    try:
        _check(body)
        _check_tools(body.get("tools"))
        _check_turns(body["contents"])
        if requires_signatures(model):
            _check_signatures(body["contents"])
        _check_signed(body["contents"])
    except _Invalid as err:
        return str(err)
    return None


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _Invalid("Invalid value at 'tools': expected a list")
    for k, tool in enumerate(tools):
        tool = _fields(tool, TOOL_FIELDS, f"tools[{k}]")
        for j, decl in enumerate(tool.get("functionDeclarations") or []):
            where = f"tools[{k}].function_declarations[{j}]"
            decl = _fields(decl, DECLARATION_FIELDS, where)
            if not isinstance(decl.get("name"), str) or not _FUNCTION_NAME.match(decl["name"]):
                raise _Invalid(
                    f"* GenerateContentRequest.{where}.name: Invalid function name. Must start "
                    "with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), "
                    "underscores (_), dots (.), colons (:) or dashes (-), with a maximum "
                    "length of 128."
                )
            if "parameters" in decl and "parametersJsonSchema" in decl:
                raise _Invalid(f"{where}: parameters and parameters_json_schema are exclusive")
            schema = decl.get("parametersJsonSchema")
            if schema is not None and (
                not isinstance(schema, dict) or schema.get("type") != "object"
            ):
                raise _Invalid(f"{where}.parameters_json_schema: must describe an object")


def _check_turns(contents: list[JSON]) -> None:
    roles = [c.get("role", "user") for c in contents]
    if roles[0] != "user":
        raise _Invalid("Please ensure that the first content is from the user.")
    if any(a == b for a, b in itertools.pairwise(roles)):
        raise _Invalid("Please ensure that multiturn requests alternate between user and model.")
    if roles[-1] != "user":
        raise _Invalid(
            "Please ensure that single turn requests end with a user role or the role field "
            "is empty."
        )


def _check_signatures(contents: list[JSON]) -> None:
    """Gemini 3: the first function call of each model step of the current turn is signed."""
    start = 0
    for i, content in enumerate(contents):
        if content.get("role", "user") == "user" and any("text" in p for p in content["parts"]):
            start = i
    for i in range(start, len(contents)):
        calls = [p for p in contents[i]["parts"] if "functionCall" in p]
        if contents[i].get("role") == "model" and calls and "thoughtSignature" not in calls[0]:
            position = contents[i]["parts"].index(calls[0])
            raise _Invalid(
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead "
                "to degraded model performance. Additional data, function call "
                f"`default_api:{calls[0]['functionCall']['name']}` , position {position + 1}."
            )


def _check_signed(contents: list[JSON]) -> None:
    """A signature sent back must be the one issued for that very part."""
    for content in contents:
        for part in content["parts"]:
            sig = part.get("thoughtSignature")
            if sig is None:
                continue
            if not isinstance(sig, str):
                raise _Invalid("Invalid value at thought_signature (TYPE_BYTES)")
            try:
                # Proto JSON takes bytes in standard or URL-safe base64 (the SDK sends the latter).
                got = base64.b64decode(sig.replace("-", "+").replace("_", "/"), validate=True)
            except ValueError:
                why = "Invalid value at thought_signature (TYPE_BYTES): not base64"
                raise _Invalid(why) from None
            if "functionCall" in part and got != base64.b64decode(sign(part)):
                raise _Invalid("Corrupted thought signature.")


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
            tc = _fields(
                gen["thinkingConfig"], THINKING_FIELDS, "generation_config.thinking_config"
            )
            level = tc.get("thinkingLevel")
            if level is not None and str(level).lower() not in THINKING_LEVELS:
                raise _Invalid(
                    f"Invalid value at 'generation_config.thinking_config.thinking_level' ({level})"
                )
            if level is not None and "thinkingBudget" in tc:
                raise _Invalid("thinking_budget and thinking_level are not supported together.")
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


def _error(
    code: int, status: str, message: str, reason: str | None = None, delay: float | None = None
) -> JSON:
    err: JSON = {"code": code, "message": message, "status": status}
    details: list[JSON] = []
    if reason:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
            }
        )
    if delay is not None:
        details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay:g}s"}
        )
    if details:
        err["details"] = details
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

    def setup(self) -> None:
        super().setup()
        # Each event leaves at once, as from the real server (Nagle's algorithm would hold a
        # small write back until the client's delayed ACK, ~40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

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

    def send_sse(self, events: list[JSON], fault: Fault | None = None) -> None:
        fake = self.server.fake
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        at = len(events) if fault is None else min(fault.after, len(events))
        for n, event in enumerate(events):
            if n == at and fault is not None:
                if fault.kind == "cut":
                    self.wfile.flush()
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(2)
                    self.close_connection = True
                    return
                if fault.kind == "truncated":
                    break
                if fault.kind == "hold" and not fake._hold(self):
                    return
            if n == fake._first_content_index(events):
                fake.first_content_sent.append(time.monotonic())
            payload = f"data: {json.dumps(event)}\r\n\r\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


class FakeGemini:
    """The fake API server: starts at construction on 127.0.0.1:<free port>."""

    def __init__(
        self, api_key: str, models: tuple[str, ...] = ("gemini-2.5-flash", "gemini-3-pro-preview")
    ) -> None:
        self.api_key = api_key
        self.models = list(models)
        self.requests: list[Recorded] = []
        self.errors: list[str] = []  # tracebacks of bugs in the fake itself
        self.first_content_sent: list[float] = []  # monotonic time of each first content event
        self.holding = threading.Event()
        self.disconnected = threading.Event()
        self._released = threading.Event()
        self._closing = threading.Event()
        self._script: deque[Step] = deque()
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *steps: Step) -> None:
        with self._lock:
            self._script.extend(steps)

    @property
    def pending(self) -> int:
        return len(self._script)

    def release(self) -> None:
        self._released.set()

    def streamed(self) -> list[Recorded]:
        """The accepted `streamGenerateContent` requests: the agent's model turns."""
        return [
            r
            for r in self.requests
            if r.rejected is None and r.model_call == "streamGenerateContent"
        ]

    def rejected(self) -> list[str]:
        return [r.rejected for r in self.requests if r.rejected is not None]

    def wait_for_requests(self, count: int, timeout: float = 60.0) -> list[Recorded]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.streamed()
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(
            f"{count} model requests expected, got {len(self.streamed())}; "
            f"rejected: {self.rejected()}"
        )

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeGemini:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request -----------------------------------------------------------------------

    def _hold(self, h: _Handler) -> bool:
        """Until release() (True) or the client hung up (False)."""
        import select

        self.holding.set()
        try:
            while not self._released.is_set() and not self._closing.is_set():
                ready, _, _ = select.select([h.connection], [], [], 0.01)
                if ready and not h.connection.recv(1, 2):  # MSG_PEEK: b"" = closed
                    self.disconnected.set()
                    return False
            return True
        finally:
            self._released.clear()
            self.holding.clear()

    @staticmethod
    def _first_content_index(events: list[JSON]) -> int:
        for n, event in enumerate(events):
            for cand in event.get("candidates") or []:
                for part in (cand.get("content") or {}).get("parts") or []:
                    if not part.get("thought") and (part.get("text") or "functionCall" in part):
                        return n
        return -1

    def _serve(self, h: _Handler) -> None:
        url = urlsplit(h.path)
        raw = h.rfile.read(int(h.headers.get("content-length") or 0))
        body: Any = None
        with contextlib.suppress(ValueError):
            body = json.loads(raw) if raw else None
        headers = {k.lower(): v for k, v in h.headers.items()}  # names are case-insensitive
        rec = Recorded(h.command, url.path, parse_qs(url.query), headers, wire_names(body))
        with self._lock:
            self.requests.append(rec)
        status, answer = self._answer(h, rec)
        if answer is not None:
            h.send_json(status, answer)

    def _answer(self, h: _Handler, rec: Recorded) -> tuple[int, JSON | None]:
        if rec.headers.get("x-goog-api-key") != self.api_key and rec.path.startswith("/v1beta/"):
            rec.rejected = "bad key"
            return 400, _error(
                400,
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key.",
                "API_KEY_INVALID",
            )
        if (h.command, rec.path) == ("GET", "/v1beta/models"):
            listed = [
                {
                    "name": f"models/{m}",
                    "displayName": m,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                }
                for m in self.models
            ]
            listed.append(
                {
                    "name": "models/text-embedding-004",
                    "supportedGenerationMethods": ["embedContent"],
                }
            )
            return 200, {"models": listed}
        prefix, _, method = rec.path.rpartition(":")
        known = ("streamGenerateContent", "generateContent", "countTokens")
        if h.command != "POST" or not prefix.startswith("/v1beta/models/") or method not in known:
            rec.rejected = "not found"
            return 404, _error(404, "NOT_FOUND", f"Requested entity was not found: {rec.path}")
        if method == "countTokens":
            return 200, {"totalTokens": _estimate_tokens(rec.body)}
        model = prefix.removeprefix("/v1beta/models/")
        why = validation_error(rec.body, model)
        if why is not None:
            rec.rejected = why
            return 400, _error(400, "INVALID_ARGUMENT", why)
        if method == "generateContent":
            return 200, _response(reply(text("ok")), model, rec.body, final=True)
        if rec.query.get("alt") != ["sse"]:
            rec.rejected = "not sse"
            return 400, _error(400, "INVALID_ARGUMENT", "streamGenerateContent needs alt=sse here")
        with self._lock:
            step = self._script.popleft() if self._script else reply(text("ok"))
        if isinstance(step, HttpError):
            return step.status, _error(
                step.status, step.state, step.message, step.reason, step.retry_delay
            )
        fault = step if isinstance(step, Fault) else None
        scripted = step.of if isinstance(step, Fault) else step
        h.send_sse(list(_events(scripted, model, rec.body)), fault)
        return 200, None


def _usage(step: Reply, request: Any) -> JSON:
    prompt = _estimate_tokens(request)
    out = _estimate_tokens([p.json for p in step.parts])
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
    }
    usage.update(step.usage or {})
    return usage


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


def _wants_thoughts(request: Any) -> bool:
    gen = request.get("generationConfig") if isinstance(request, dict) else None
    thinking = gen.get("thinkingConfig") if isinstance(gen, dict) else None
    return isinstance(thinking, dict) and thinking.get("includeThoughts") is True


def _events(step: Reply, model: str, request: Any) -> Iterator[JSON]:
    """Thoughts and text parts in chunks, a function call in one event (the first one of the
    reply signed), the last event with finishReason; a reply without calls has its
    signature on its last part."""
    pieces: list[JSON] = []
    signed = False
    thoughts = _wants_thoughts(request)
    for part in step.parts:
        if part.json.get("thought"):
            if thoughts:
                pieces += [
                    {"text": t, "thought": True} for t in _split(part.json["text"], part.chunks)
                ]
        elif "text" in part.json:
            pieces += [{"text": t} for t in _split(part.json["text"], part.chunks)]
        else:
            piece = dict(part.json)
            if "functionCall" in piece and not signed:
                signed = True
                piece["thoughtSignature"] = sign(piece)
            pieces.append(piece)
    if not signed and pieces and "text" in pieces[-1]:
        pieces.append({"text": "", "thoughtSignature": sign({"text": "end"})})
    for i, piece in enumerate(pieces):
        yield _response(step, model, request, final=i == len(pieces) - 1, parts=[piece])
    if not pieces:
        yield _response(step, model, request, final=True, parts=[])


__all__ = [
    "FakeGemini",
    "Recorded",
    "call",
    "cut",
    "hold",
    "http_error",
    "reply",
    "sign",
    "text",
    "thought",
    "truncated",
    "validation_error",
]
