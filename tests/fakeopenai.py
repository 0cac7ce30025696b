"""A loopback fake of the OpenAI Chat Completions API (streaming), for the real openai SDK.

Usage::

    with FakeOpenAI() as server:               # or the `fake_openai` pytest fixture
        server.script(text("hi"), tool_call("read_file", {"path": "a.py"}), cut(after_chunks=2))
        client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)

`base_url` ends in `/v1`, as the SDK expects. Each accepted POST /v1/chat/completions
consumes one scripted step (the text "ok" when the script is empty). The wire is the real
one: `data: {chunk}` lines without `event:` names, one chunk per HTTP chunk, ended by
`data: [DONE]`. A reply streams as

    role chunk (delta.role = assistant), content chunks, for each tool call: a chunk with
    index/id/type/function.name and empty arguments, then argument fragments (index only),
    a chunk with finish_reason (stop | tool_calls | length), then — with
    stream_options.include_usage — a chunk with `choices: []` and `usage`, then [DONE].

Faults: `http_error(status)` (401/429/500… as JSON `{"error": {...}}`, `retry_after=`),
`cut(after_chunks)` (the socket shut without a terminating chunk: the SDK raises
APIConnectionError), `truncated(after_chunks)` (a clean end without finish_reason or [DONE]),
`error_chunk(after_chunks)` (a `data: {"error": …}` line: openai.APIError), `hold()` (pause
until release()), `no_tools(model)` makes that model answer 400 "… does not support tools"
whenever tools are sent (as Ollama does).

Validation mirrors the real API (400 invalid_request_error): `model` and non-empty
`messages` required; roles system|developer|user|assistant|tool; a `tool` message must answer
a `tool_calls` id of the nearest preceding assistant message, and every such id must be
answered before the next non-tool message; ids unique; `tools` entries of type function with
a name; `arguments` a string. A missing key is 401 unless `require_key=False` (a local server).
GET /v1/models lists `models`.

Azure OpenAI (`FakeOpenAI(azure={deployment: model})`, from Azure's data-plane REST
reference): `base_url` is the resource endpoint; the request is
`POST /openai/deployments/{deployment}/chat/completions?api-version=…`, signed with an
`api-key` header (`api_key=`) or `Authorization: Bearer` with an Entra ID token (`tokens=`).
What Azure rejects: a missing api-version (404 "Resource not found"), an unsupported one (400
"API version not supported"), a wrong or missing key (401 "Access denied due to invalid
subscription key or wrong API endpoint…"), a deployment that does not exist (404
DeploymentNotFound). The deployment decides the model (the body's `model` is ignored); the
stream opens with a chunk of `choices: []` and `prompt_filter_results`, as Azure's does.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeAlias
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakeapi import Recorded, _Handler, _HTTPServer, _split
from tests.fakeapi import _estimate_tokens as estimate_tokens

COMPLETIONS_PATH = "/v1/chat/completions"
AZURE_PATH = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/chat/completions$")
AZURE_API_VERSIONS = ("2024-10-21", "2025-04-01-preview")
MODELS_PATH = "/v1/models"
ROLES = ("system", "developer", "user", "assistant", "tool")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}
ERROR_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}

JSON: TypeAlias = dict[str, Any]
_call_ids = itertools.count(1)


@dataclass(frozen=True)
class Text:
    text: str
    chunks: int = 3


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # raw JSON text, as the model produced it
    id: str
    chunks: int = 3


@dataclass(frozen=True)
class Reply:
    parts: tuple[Text | ToolCall, ...]
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None

    def finish(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if any(isinstance(p, ToolCall) for p in self.parts) else "stop"


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Fault:
    after_chunks: int = 2
    of: Reply = field(default_factory=lambda: Reply((Text("hello world"),)))


@dataclass(frozen=True, kw_only=True)
class Cut(Fault):
    pass


@dataclass(frozen=True, kw_only=True)
class Truncated(Fault):
    pass


@dataclass(frozen=True, kw_only=True)
class ErrorChunk(Fault):
    message: str = "The server had an error while processing your request."


@dataclass(frozen=True, kw_only=True)
class Hold(Fault):
    pass


Step: TypeAlias = Reply | Text | ToolCall | HttpError | Fault


def text(content: str, chunks: int = 3) -> Text:
    return Text(content, chunks)


def tool_call(name: str, args: Any, id: str | None = None, chunks: int = 3) -> ToolCall:
    """A call whose JSON arguments arrive in `chunks` fragments (a str is sent verbatim)."""
    raw = args if isinstance(args, str) else json.dumps(args)
    return ToolCall(name, raw, id or f"call_fake{next(_call_ids):04d}", chunks)


def reply(
    *parts: Text | ToolCall,
    finish_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> Reply:
    return Reply(tuple(parts), finish_reason, usage)


def http_error(
    status: int, message: str | None = None, retry_after: float | None = None
) -> HttpError:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return HttpError(status, message or f"fake error {status}", headers)


def _as_reply(of: Reply | Text | ToolCall | None) -> Reply:
    if of is None:
        return Reply((Text("hello world"),))
    return of if isinstance(of, Reply) else Reply((of,))


def cut(after_chunks: int = 2, of: Reply | Text | ToolCall | None = None) -> Cut:
    return Cut(after_chunks=after_chunks, of=_as_reply(of))


def truncated(after_chunks: int = 2, of: Reply | Text | ToolCall | None = None) -> Truncated:
    return Truncated(after_chunks=after_chunks, of=_as_reply(of))


def error_chunk(after_chunks: int = 2, of: Reply | Text | ToolCall | None = None) -> ErrorChunk:
    return ErrorChunk(after_chunks=after_chunks, of=_as_reply(of))


def hold(after_chunks: int = 2, of: Reply | Text | ToolCall | None = None) -> Hold:
    return Hold(after_chunks=after_chunks, of=_as_reply(of))


# --------------------------------------------------------------------------- wire format


def usage_of(reply_: Reply, body: JSON) -> JSON:
    prompt = estimate_tokens({k: body.get(k) for k in ("messages", "tools")})
    output = estimate_tokens([p.text if isinstance(p, Text) else p.arguments for p in reply_.parts])
    usage: JSON = {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    usage.update(reply_.usage or {})
    return usage


def chunks_of(reply_: Reply, body: JSON, chunk_id: str) -> list[JSON]:
    """The chunk sequence the real API streams for `reply_` (before `[DONE]`)."""
    base = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": body.get("model"),
        "system_fingerprint": "fp_fake",
    }
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        out = base | {
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        }
        if include_usage:
            out["usage"] = None
        return out

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    call_index = 0
    for part in reply_.parts:
        if isinstance(part, Text):
            out += [chunk({"content": piece}) for piece in _split(part.text, part.chunks)]
            continue
        head = {"index": call_index, "id": part.id, "type": "function"}
        out.append(
            chunk({"tool_calls": [head | {"function": {"name": part.name, "arguments": ""}}]})
        )
        for piece in _split(part.arguments, part.chunks):
            out.append(
                chunk({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]})
            )
        call_index += 1
    out.append(chunk({}, reply_.finish()))
    if include_usage:
        out.append(base | {"choices": [], "usage": usage_of(reply_, body)})
    return out


# --------------------------------------------------------------------------- validation


class _Invalid(Exception):
    pass


def validation_error(body: Any) -> str | None:
    """Why the real API would refuse this body (400), or None."""
    try:
        _check(body)
    except _Invalid as err:
        return str(err)
    return None


def _check(body: Any) -> None:
    if not isinstance(body, dict):
        raise _Invalid("We could not parse the JSON body of your request.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _Invalid("you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Invalid("[] is too short - 'messages'")
    _check_tools(body.get("tools"))
    waiting: list[str] = []  # tool_call ids of the last assistant message not yet answered
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ROLES:
            raise _Invalid(
                f"Invalid value: '{role}'. Supported values are: {', '.join(ROLES)}. "
                f"('messages.[{i}].role')"
            )
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in waiting:
                raise _Invalid(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    f"preceeding message with 'tool_calls'. ('messages.[{i}]')"
                )
            waiting.remove(call_id)
            if not isinstance(msg.get("content"), str | list):
                raise _Invalid(f"messages.[{i}].content: expected a string")
            continue
        if waiting:
            raise _Invalid(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(waiting)}"
            )
        content = msg.get("content")
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if content is None and not calls:
                raise _Invalid(f"messages.[{i}]: an assistant message needs content or tool_calls")
            for j, call in enumerate(calls):
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                    raise _Invalid(f"messages.[{i}].tool_calls.[{j}].function: missing name")
                if not isinstance(fn.get("arguments"), str):
                    raise _Invalid(
                        f"messages.[{i}].tool_calls.[{j}].function.arguments: expected a string"
                    )
                if call.get("type") != "function":
                    raise _Invalid(f"messages.[{i}].tool_calls.[{j}].type: expected 'function'")
                call_id = call.get("id")
                if not isinstance(call_id, str) or not call_id or call_id in seen:
                    raise _Invalid(f"messages.[{i}].tool_calls.[{j}].id: duplicate or missing id")
                seen.add(call_id)
                waiting.append(call_id)
        elif not isinstance(content, str | list):
            raise _Invalid(f"messages.[{i}].content: expected a string or an array of parts")
        elif isinstance(content, list):
            _check_parts(i, role, content)
    if waiting:
        raise _Invalid(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(waiting)}"
        )


# Chat Completions' image input: an `image_url` part of a user message whose url is an
# http(s) URL or a data URL `data:image/{png,jpeg,gif,webp};base64,<base64>`, at most 20 MB.
_DATA_URL = re.compile(r"data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/]*={0,2})")
IMAGE_MAX_BYTES = 20 * 1024 * 1024


def _check_parts(i: int, role: str, parts: list[Any]) -> None:
    for j, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        where = f"messages.[{i}].content.[{j}]"
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise _Invalid(f"{where}.text: expected a string")
        elif kind == "image_url":
            if role != "user":
                raise _Invalid(f"{where}: image_url is only supported in user messages")
            url = (part.get("image_url") or {}).get("url")
            if not isinstance(url, str):
                raise _Invalid(f"{where}.image_url.url: expected a string")
            if url.startswith(("http://", "https://")):
                continue
            m = _DATA_URL.fullmatch(url)
            if m is None:
                raise _Invalid(
                    "Invalid image URL: expected a base64-encoded data URL with an image MIME "
                    f"type (e.g. 'data:image/png;base64,...'). ('{where}.image_url.url')"
                )
            import base64
            import binascii

            try:
                raw = base64.b64decode(m.group(2), validate=True)
            except (binascii.Error, ValueError):
                raise _Invalid(f"{where}: invalid base64 image data") from None
            if len(raw) > IMAGE_MAX_BYTES:
                raise _Invalid(f"{where}: image exceeds the 20 MB limit")
        else:
            raise _Invalid(f"Invalid value: '{kind}'. ('{where}.type')")


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list) or not tools:
        raise _Invalid("[] is too short - 'tools'")
    names: set[str] = set()
    for k, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            raise _Invalid(f"tools.[{k}]: expected {{type: 'function', function: {{...}}}}")
        name = fn.get("name")
        if not isinstance(name, str) or not name or name in names:
            raise _Invalid(f"tools.[{k}].function.name: missing or duplicate")
        names.add(name)
        if not isinstance(fn.get("parameters", {}), dict):
            raise _Invalid(f"tools.[{k}].function.parameters: expected an object")


# --------------------------------------------------------------------------- server


class FakeOpenAI:
    """The fake server on 127.0.0.1:<free port>; `base_url` is `http://…/v1`."""

    def __init__(
        self,
        api_key: str | None = None,
        require_key: bool = True,
        models: Sequence[str] = ("gpt-4.1", "gpt-4.1-mini", "llama3.1"),
        azure: Mapping[str, str] | None = None,
        tokens: Sequence[str] = (),
    ) -> None:
        self.azure = dict(azure) if azure is not None else None
        self.tokens = list(tokens)  # Entra ID tokens accepted (azure)
        self.api_key = api_key
        self.require_key = require_key
        self.models = list(models)
        self.no_tools_models: set[str] = set()
        self.requests: list[Recorded] = []
        self.errors: list[str] = []
        # Monotonic time the first byte of each stream's first content chunk was written.
        self.first_content_sent: list[float] = []
        self.holding = threading.Event()
        self.disconnected = threading.Event()
        self._released = threading.Event()
        self._closing = threading.Event()
        self._cond = threading.Condition()
        self._script: deque[Step] = deque()
        self._counter = itertools.count(1)
        self._conns: set[Any] = set()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self  # type: ignore[assignment]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}" + ("" if self.azure is not None else "/v1")

    def script(self, *steps: Step) -> None:
        with self._cond:
            self._script.extend(steps)

    def no_tools(self, model: str) -> None:
        """`model` answers 400 "does not support tools" to any request with tools (Ollama)."""
        self.no_tools_models.add(model)

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._script)

    def release(self) -> None:
        self._released.set()

    def completions(self) -> list[Recorded]:
        with self._cond:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def wait_for_requests(self, n: int, timeout: float = 10) -> list[Recorded]:
        """Until `n` chat completion requests arrived; a snapshot of them."""
        with self._cond:
            ok = self._cond.wait_for(lambda: len(self.completions()) >= n, timeout)
            if not ok:
                raise AssertionError(
                    f"expected {n} request(s) in {timeout}s, got {len(self.completions())}"
                )
            return self.completions()

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._cond:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(2)
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- handler side (called by tests.fakeapi._Handler)

    def _track(self, conn: Any, add: bool) -> None:
        with self._cond:
            (self._conns.add if add else self._conns.discard)(conn)

    def _serve(self, h: _Handler) -> None:
        import traceback

        try:
            self._respond(h)
        except OSError:
            self.disconnected.set()
            h.close_connection = True
        except Exception:
            self.errors.append(traceback.format_exc())
            h.close_connection = True

    def _respond(self, h: _Handler) -> None:
        url = urlsplit(h.path)
        raw = h.read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in h.headers.items()}
        with self._cond:
            self.requests.append(Recorded(h.command, url.path, headers, body, parse_qs(url.query)))
            self._cond.notify_all()
        request_id = f"req_{next(self._counter):04d}"
        ids = {"x-request-id": request_id}

        def fail(status: int, message: str, extra: Mapping[str, str] | None = None) -> None:
            err = {
                "message": message,
                "type": ERROR_TYPES.get(status, "server_error"),
                "param": None,
                "code": ERROR_CODES.get(status),
            }
            h.send_json(status, {"error": err}, {**ids, **(extra or {})})

        if self.azure is not None:
            found = AZURE_PATH.match(url.path)
            version = parse_qs(url.query).get("api-version", [""])[0]
            if not found or not version:
                return fail(404, "Resource not found")
            if version not in AZURE_API_VERSIONS:
                return fail(400, "API version not supported")
            if problem := self._azure_auth_problem(headers):
                return fail(401, problem)
            model = self.azure.get(found["deployment"])
            if model is None:
                return fail(
                    404,
                    "The API deployment for this resource does not exist. If you created the "
                    "deployment within the last 5 minutes, please wait a moment and try again.",
                )
            if isinstance(body, dict):
                body = {**body, "model": model}
        elif problem := self._auth_problem(headers):
            return fail(401, problem)
        if self.azure is None and (h.command, url.path) == ("GET", MODELS_PATH):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models
            ]
            return h.send_json(200, {"object": "list", "data": data}, ids)
        if h.command != "POST" or (self.azure is None and url.path != COMPLETIONS_PATH):
            return fail(404, f"Invalid URL ({h.command} {url.path})")
        if problem := validation_error(body):
            return fail(400, problem)
        assert isinstance(body, dict)  # validation_error refuses anything but an object
        if body.get("tools") and body["model"] in self.no_tools_models:
            return fail(
                400, f"registry.ollama.ai/library/{body['model']}:latest does not support tools"
            )
        with self._cond:
            step: Step = self._script.popleft() if self._script else text("ok")
        if isinstance(step, HttpError):
            return fail(step.status, step.message, step.headers)
        fault = step if isinstance(step, Fault) else None
        reply_ = step.of if isinstance(step, Fault) else _as_reply(step)
        chunks = chunks_of(reply_, body, f"chatcmpl-{request_id}")
        if self.azure is not None:
            filters = [{"prompt_index": 0, "content_filter_results": {}}]
            chunks.insert(
                0,
                {"id": "", "object": "", "created": 0, "model": "", "choices": []}
                | {"prompt_filter_results": filters},
            )
        h.start_stream(ids)
        self._stream(h, chunks, fault)

    def _auth_problem(self, headers: Mapping[str, str]) -> str | None:
        bearer = headers.get("authorization", "")
        key = bearer[7:] if bearer[:7].lower() == "bearer " else ""
        if not self.require_key:
            return None
        if not key.strip():
            return "You didn't provide an API key."
        if self.api_key is not None and key != self.api_key:
            return "Incorrect API key provided."
        return None

    def _azure_auth_problem(self, headers: Mapping[str, str]) -> str | None:
        key = headers.get("api-key", "")
        bearer = headers.get("authorization", "")
        token = bearer[7:] if bearer[:7].lower() == "bearer " else ""
        if (key and key == self.api_key) or (token and token in self.tokens):
            return None
        return (
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure "
            "to provide a valid key for an active subscription and use a correct regional API "
            "endpoint for your resource."
        )

    def _send(self, h: _Handler, data: str) -> None:
        payload = f"data: {data}\n\n".encode()
        h.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def _stream(self, h: _Handler, chunks: list[JSON], fault: Fault | None) -> None:
        import time

        at = len(chunks) if fault is None else min(fault.after_chunks, len(chunks))
        first_content = True

        def send(c: JSON) -> None:
            nonlocal first_content
            delta = (c.get("choices") or [{}])[0].get("delta") or {}
            if first_content and (delta.get("content") or delta.get("tool_calls")):
                first_content = False
                self.first_content_sent.append(time.monotonic())
            self._send(h, json.dumps(c))

        for c in chunks[:at]:
            send(c)
        if isinstance(fault, Cut):
            return h.abort()
        if isinstance(fault, ErrorChunk):
            self._send(
                h,
                json.dumps(
                    {
                        "error": {
                            "message": fault.message,
                            "type": "server_error",
                            "param": None,
                            "code": None,
                        }
                    }
                ),
            )
            return h.end_stream()
        if isinstance(fault, Truncated):
            return h.end_stream()
        if isinstance(fault, Hold):
            self.holding.set()
            try:
                while not self._released.is_set() and not self._closing.is_set():
                    if h.peer_closed():
                        self.disconnected.set()
                        return h.abort()
                    self._closing.wait(0.01)
            finally:
                self._released.clear()
                self.holding.clear()
            for c in chunks[at:]:
                send(c)
        self._send(h, "[DONE]")
        h.end_stream()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server
    assert not server.errors, "fake OpenAI crashed:\n" + "\n".join(server.errors)
