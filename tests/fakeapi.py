"""A loopback fake of the Anthropic Messages API, for driving the real SDK in tests.

Usage::

    with FakeAnthropic() as server:            # or the `fake_api` pytest fixture
        server.script(text("hello"), tool_use("read_file", {"path": "a.py"}), cut(after_events=4))
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        ...
        server.wait_for_requests(3)

Each POST /v1/messages that passes validation consumes one scripted step; when the script is
empty the reply is the text "ok". A step is a reply (`text`, `tool_use`, `reply`), an HTTP
error (`http_error`) or a stream fault (`error_event`, `cut`, `stall`, `truncated`, `hold`)
that interrupts a normal reply (`of=`, by default text "hello world") after `after_events`
SSE events. Events are counted from `message_start`, and the `ping` counts as one: a
one-block reply streams

    0 message_start, 1 content_block_start, 2 ping, 3.. content_block_delta (one per chunk),
    content_block_stop, [more blocks], message_delta, message_stop

What each fault raises in anthropic 2.14 (httpx2 transport) with ``max_retries=0``, when the
caller streams (``messages.create(stream=True)`` / ``messages.stream()``) — errors raised
mid-stream come from iterating the stream, not from ``create()``; the SDK does not wrap them:

    ==============================  ============================================================
    fault                           exception
    ==============================  ============================================================
    http_error(400, ...)            anthropic.BadRequestError             (APIStatusError)
    http_error(401, ...)            anthropic.AuthenticationError         (APIStatusError)
    http_error(429, ...)            anthropic.RateLimitError              (APIStatusError)
    http_error(500, ...)            anthropic.InternalServerError         (APIStatusError)
    http_error(529, ...)            anthropic.OverloadedError             (InternalServerError)
    validation failure              anthropic.BadRequestError, .type == "invalid_request_error"
    missing auth header             anthropic.AuthenticationError
    error_event(...)                anthropic.APIStatusError itself (not a subclass),
                                    .status_code == 200, .type == err_type, .body == the event
    cut(...)                        httpx2.RemoteProtocolError  (httpx2._exceptions; a
                                    TransportError, not an anthropic.APIError)
    stall(...)                      httpx2.ReadTimeout  (httpx2._exceptions; a TimeoutException,
                                    not anthropic.APITimeoutError) once the read timeout fires
    truncated(...)                  nothing: iteration just ends without message_stop;
                                    messages.stream().get_final_message() returns a message
                                    whose stop_reason is None
    hold(...)                       nothing; the stream pauses until release()
    ==============================  ============================================================

HTTP errors raise from ``create()`` / entering ``messages.stream()``. With ``max_retries > 0``
the SDK itself retries 408/409/429/5xx (honouring ``retry-after``/``retry-after-ms``, or
``x-should-retry: false`` to refuse), and each attempt consumes one scripted step; it never
retries a fault raised mid-stream. Non-streaming requests
get a plain JSON message; there `error_event` becomes the matching HTTP error, `cut` and
`stall` become anthropic.APIConnectionError / anthropic.APITimeoutError (the SDK wraps faults
while it reads a whole body), `truncated` is ignored and `hold` delays the reply.

Validation mirrors the real API: 401 for a missing key (or a wrong one when `api_key=` is
given; `Authorization: Bearer` and `x-api-key` both count), 400 for a missing
`anthropic-version` header, 400 invalid_request_error for bodies the API rejects (see
`validation_error`), 404 not_found_error for any other path. A rejected request is recorded in
`requests` but does not consume the script.

Besides `requests`, `holding` and `release()`: `disconnected` (Event) is set when a client hangs
up mid-response (noticed reliably while a hold is paused), `pending` counts unconsumed steps,
and `errors` collects tracebacks of bugs in the fake itself (the fixture fails on them).
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import itertools
import json
import re
import select
import socket
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self, TypeAlias
from urllib.parse import parse_qs, urlsplit

import pytest

__all__ = [
    "ERROR_TYPES",
    "Cut",
    "ErrorEvent",
    "FakeAnthropic",
    "Hold",
    "HttpError",
    "Recorded",
    "RedactedThinkingBlock",
    "Reply",
    "Stall",
    "StreamFault",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "Truncated",
    "cut",
    "error_event",
    "fake_api",
    "hold",
    "http_error",
    "redacted_thinking",
    "reply",
    "sign",
    "stall",
    "stream_events",
    "text",
    "thinking",
    "tool_use",
    "truncated",
    "validation_error",
]

MESSAGES_PATH = "/v1/messages"
MAX_CACHE_BREAKPOINTS = 4
DEFAULT_AFTER_EVENTS = 4

# The error type the real API pairs with each status (docs: "HTTP errors").
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_STATUS_FOR_TYPE = {v: k for k, v in ERROR_TYPES.items()}

_tool_ids = itertools.count(1)

JSON: TypeAlias = dict[str, Any]
Event: TypeAlias = tuple[str, JSON]


# --------------------------------------------------------------------------- reply builders


@dataclass(frozen=True)
class TextBlock:
    text: str
    chunks: int = 3


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: Any  # a Mapping normally; any JSON to play a broken model
    id: str
    chunks: int = 3


@dataclass(frozen=True)
class ThinkingBlock:
    """Extended thinking: streamed as thinking_delta events, then one signature_delta."""

    thinking: str
    signature: str
    chunks: int = 3


@dataclass(frozen=True)
class RedactedThinkingBlock:
    data: str


Block: TypeAlias = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock


@dataclass(frozen=True)
class Reply:
    """One assistant message. `usage` overrides the computed token counts (any Usage key)."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Mapping[str, int] | None = None

    def final_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        has_tool = any(isinstance(b, ToolUseBlock) for b in self.blocks)
        return "tool_use" if has_tool else "end_turn"


@dataclass(frozen=True)
class HttpError:
    status: int
    err_type: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class StreamFault:
    """Streams `of` normally, then misbehaves once `after_events` events have been sent."""

    after_events: int | None = DEFAULT_AFTER_EVENTS
    of: Reply = field(default_factory=lambda: Reply((TextBlock("hello world"),)))


@dataclass(frozen=True, kw_only=True)
class ErrorEvent(StreamFault):
    err_type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass(frozen=True, kw_only=True)
class Cut(StreamFault):
    pass


@dataclass(frozen=True, kw_only=True)
class Stall(StreamFault):
    seconds: float = 5.0


@dataclass(frozen=True, kw_only=True)
class Truncated(StreamFault):
    pass


@dataclass(frozen=True, kw_only=True)
class Hold(StreamFault):
    pass


Step: TypeAlias = Reply | TextBlock | ToolUseBlock | HttpError | StreamFault


def text(content: str, chunks: int = 3) -> TextBlock:
    """A text block streamed as `chunks` text_delta events (fewer if the text is shorter)."""
    return TextBlock(content, chunks)


def tool_use(name: str, input: Any, id: str | None = None, chunks: int = 3) -> ToolUseBlock:
    """A tool_use block whose JSON input arrives as `chunks` input_json_delta pieces (any
    JSON value: a non-object plays a broken model)."""
    value = dict(input) if isinstance(input, Mapping) else input
    return ToolUseBlock(name, value, id or f"toolu_fake_{next(_tool_ids):04d}", chunks)


# The real API signs each thinking block (and encrypts redacted ones) with a key of its own
# and refuses one that comes back altered; the fake does the same with this key.
_SIGNING_KEY = b"sightline-fake-signing-key"


def sign(thinking_text: str) -> str:
    """The signature the fake gives (and expects back with) this thinking text."""
    mac = hmac.new(_SIGNING_KEY, thinking_text.encode("utf-8", "surrogatepass"), "sha256")
    return base64.b64encode(mac.digest()).decode()


def thinking(content: str, chunks: int = 3) -> ThinkingBlock:
    """A thinking block with the fake's signature (checked when it comes back)."""
    return ThinkingBlock(content, sign(content), chunks)


def redacted_thinking(payload: str = "hidden reasoning") -> RedactedThinkingBlock:
    """A redacted_thinking block: opaque data, signed like a thinking block."""
    raw = base64.b64encode(payload.encode()).decode()
    return RedactedThinkingBlock(f"{raw}.{sign(raw)}")


def _signed(block: JSON) -> bool:
    if block.get("type") == "thinking":
        text_, signature = block.get("thinking"), block.get("signature")
        return (
            isinstance(text_, str)
            and isinstance(signature, str)
            and (hmac.compare_digest(signature, sign(text_)))
        )
    data = block.get("data")
    if not isinstance(data, str) or "." not in data:
        return False
    raw, signature = data.rsplit(".", 1)
    return hmac.compare_digest(signature, sign(raw))


def reply(
    *blocks: Block, stop_reason: str | None = None, usage: Mapping[str, int] | None = None
) -> Reply:
    """Several blocks in one message; stop_reason defaults to tool_use/end_turn."""
    return Reply(tuple(blocks), stop_reason, usage)


def http_error(
    status: int,
    err_type: str | None = None,
    message: str | None = None,
    headers: Mapping[str, str] | None = None,
    retry_after: float | None = None,
) -> HttpError:
    """A non-200 JSON error; err_type defaults to the API's type for `status`."""
    kind = err_type or ERROR_TYPES.get(status, "api_error")
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = f"{retry_after:g}"
    return HttpError(status, kind, message or kind.replace("_", " "), extra)


def _as_reply(of: Reply | Block | None) -> Reply:
    if of is None:
        return Reply((TextBlock("hello world"),))
    return of if isinstance(of, Reply) else Reply((of,))


def error_event(
    err_type: str = "overloaded_error",
    message: str = "Overloaded",
    after_events: int = DEFAULT_AFTER_EVENTS,
    of: Reply | Block | None = None,
) -> ErrorEvent:
    """HTTP 200, `after_events` normal events, then `event: error` and a clean end."""
    return ErrorEvent(
        after_events=after_events, of=_as_reply(of), err_type=err_type, message=message
    )


def cut(after_events: int = DEFAULT_AFTER_EVENTS, of: Reply | Block | None = None) -> Cut:
    """HTTP 200, `after_events` events, then the socket is shut without a terminating chunk."""
    return Cut(after_events=after_events, of=_as_reply(of))


def stall(
    after_events: int = DEFAULT_AFTER_EVENTS, seconds: float = 5.0, of: Reply | Block | None = None
) -> Stall:
    """`after_events` events, then silence for `seconds` (or until close), then a cut."""
    return Stall(after_events=after_events, of=_as_reply(of), seconds=seconds)


def truncated(after_events: int | None = None, of: Reply | Block | None = None) -> Truncated:
    """A clean chunked end after `after_events` events (default: all but message_delta/stop)."""
    return Truncated(after_events=after_events, of=_as_reply(of))


def hold(after_events: int = DEFAULT_AFTER_EVENTS, of: Reply | Block | None = None) -> Hold:
    """Pause after `after_events` events until `server.release()` (or close), then finish."""
    return Hold(after_events=after_events, of=_as_reply(of))


# --------------------------------------------------------------------------- wire format


def _split(s: str, parts: int) -> list[str]:
    """`s` in up to `parts` non-empty, nearly equal pieces (one empty piece for '')."""
    n = max(1, min(parts, len(s)))
    size, extra = divmod(len(s), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(s[pos : pos + step])
        pos += step
    return out


def _estimate_tokens(value: Any) -> int:
    # Rough chars/4, like a tokenizer would give for English; only needs to be stable and > 0.
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


def _block_json(block: Block) -> JSON:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def _usage(reply_: Reply, request: JSON) -> JSON:
    counted = {k: request.get(k) for k in ("system", "tools", "messages")}
    usage: JSON = {
        "input_tokens": _estimate_tokens(counted),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": _estimate_tokens([_block_json(b) for b in reply_.blocks]),
        "service_tier": "standard",
    }
    usage.update(reply_.usage or {})
    return usage


def message_json(reply_: Reply, request: JSON, msg_id: str) -> JSON:
    """The complete (non-streaming) message for `reply_`."""
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": request.get("model"),
        "content": [_block_json(b) for b in reply_.blocks],
        "stop_reason": reply_.final_stop_reason(),
        "stop_sequence": None,
        "usage": _usage(reply_, request),
    }


def _block_events(index: int, block: Block) -> Iterator[Event]:
    if isinstance(block, TextBlock):
        start: JSON = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": t} for t in _split(block.text, block.chunks)]
    elif isinstance(block, ThinkingBlock):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": t} for t in _split(block.thinking, block.chunks)
        ]
        deltas.append({"type": "signature_delta", "signature": block.signature})
    elif isinstance(block, RedactedThinkingBlock):
        start, deltas = {"type": "redacted_thinking", "data": block.data}, []
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        # The real API opens with an empty partial_json; clients must tolerate it.
        # Any JSON: a hostile or broken model may send a non-object input.
        pieces = ["", *_split(json.dumps(block.input), block.chunks)]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    yield (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": start},
    )
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def stream_events(reply_: Reply, request: JSON, msg_id: str) -> list[Event]:
    """The full SSE event sequence the real API would send for `reply_`."""
    usage = _usage(reply_, request)
    start = message_json(reply_, request, msg_id) | {"content": [], "stop_reason": None}
    start["usage"] = usage | {"output_tokens": 1}
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(reply_.blocks):
        events.extend(_block_events(i, block))
    # The real API pings right after the first content_block_start.
    events.insert(min(2, len(events)), ("ping", {"type": "ping"}))
    delta = {"stop_reason": reply_.final_stop_reason(), "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _error_body(err_type: str, message: str, request_id: str) -> JSON:
    return {
        "type": "error",
        "error": {"type": err_type, "message": message},
        "request_id": request_id,
    }


# --------------------------------------------------------------------------- validation


class _Invalid(Exception):
    """A request the real API would refuse with 400 invalid_request_error."""


def validation_error(body: Any) -> str | None:
    """Why the real API would reject this request body (400), or None if it is acceptable."""
    try:
        _check_required(body)
        messages = body["messages"]
        _check_roles(messages)
        _check_content(messages)
        _check_tool_blocks(messages)
        _check_tool_pairing(messages)
        _check_cache_control(body)
        _check_thinking(body)
        _check_images(messages)
    except _Invalid as err:
        return str(err)
    return None


# What the Messages API takes of an image block: these types, base64 of at most 5 MB whose
# bytes are the type named, at most 8000 px on each side (docs: Vision).
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_MAX_BYTES = 5 * 1024 * 1024
IMAGE_MAX_EDGE = 8000
_MAGIC = {
    "image/png": lambda b: b.startswith(b"\x89PNG\r\n\x1a\n"),
    "image/jpeg": lambda b: b.startswith(b"\xff\xd8\xff"),
    "image/gif": lambda b: b.startswith((b"GIF87a", b"GIF89a")),
    "image/webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP",
}


def _check_images(messages: list[JSON]) -> None:
    for i, msg in enumerate(messages):
        blocks = list(_blocks(msg))
        for block in list(blocks):
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                blocks += [b for b in block["content"] if isinstance(b, dict)]
        for block in blocks:
            if block.get("type") != "image":
                continue
            if msg["role"] != "user":
                raise _Invalid(f"messages.{i}: image blocks are only allowed in user messages")
            _check_image(i, block.get("source"))


def _check_image(i: int, source: Any) -> None:
    import base64
    import binascii

    where = f"messages.{i}.content.image.source"
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise _Invalid(f"{where}: Input tag must be 'base64' or 'url'")
    media = source.get("media_type")
    if media not in IMAGE_TYPES:
        raise _Invalid(f"{where}.media_type: Input should be " + ", ".join(map(repr, IMAGE_TYPES)))
    data = source.get("data")
    if not isinstance(data, str) or len(data) > IMAGE_MAX_BYTES:
        raise _Invalid(f"{where}.base64: image exceeds 5 MB maximum")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _Invalid(f"{where}: invalid base64 data") from None
    if not _MAGIC[media](raw):
        raise _Invalid(f"{where}: Image does not match the provided media type {media}")
    from PIL import Image

    with Image.open(__import__("io").BytesIO(raw)) as img:
        if max(img.size) > IMAGE_MAX_EDGE:
            raise _Invalid(f"{where}: image dimensions exceed max allowed size: 8000 pixels")


def _check_required(body: Any) -> None:
    if not isinstance(body, dict):
        raise _Invalid("request body must be a JSON object")
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            raise _Invalid(f"{name}: Field required")
    if not isinstance(body["model"], str) or not body["model"]:
        raise _Invalid("model: Input should be a non-empty string")
    max_tokens = body["max_tokens"]
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise _Invalid("max_tokens: Input should be an integer greater than or equal to 1")
    if not isinstance(body["messages"], list) or not body["messages"]:
        raise _Invalid("messages: at least one message is required")


def _check_roles(messages: list[Any]) -> None:
    previous = None
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ("user", "assistant"):
            raise _Invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i == 0 and role != "user":
            raise _Invalid('messages: first message must use the "user" role')
        if role == previous:
            raise _Invalid(
                'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        previous = role


def _blocks(msg: JSON) -> list[JSON]:
    content = msg.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _check_content(messages: list[JSON]) -> None:
    for i, msg in enumerate(messages):
        content = msg.get("content")
        # The API lets only a final assistant turn (a prefill) be empty.
        final_assistant = i == len(messages) - 1 and msg["role"] == "assistant"
        if not isinstance(content, str | list):
            raise _Invalid(f"messages.{i}.content: Input should be a string or a list of blocks")
        if not content and not final_assistant:
            raise _Invalid(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        texts = [content] if isinstance(content, str) else _texts(msg)
        if isinstance(content, list) and any(not t.strip() for t in texts):
            raise _Invalid(f"messages.{i}: text content blocks must contain non-whitespace text")
        if final_assistant and texts and texts[-1] != texts[-1].rstrip():
            raise _Invalid("messages: final assistant content cannot end with trailing whitespace")


def _texts(msg: JSON) -> list[str]:
    return [str(b.get("text", "")) for b in _blocks(msg) if b.get("type") == "text"]


def _ids(msg: JSON, block_type: str, key: str) -> list[str]:
    return [str(b.get(key)) for b in _blocks(msg) if b.get("type") == block_type]


def _check_tool_blocks(messages: list[JSON]) -> None:
    """tool_use ids are unique in the request, inputs are objects; in a user message the
    tool_result blocks come first, one per tool_use_id."""
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        blocks = _blocks(msg)
        for j, block in enumerate(blocks):
            where = f"messages.{i}.content.{j}"
            if block.get("type") == "tool_use":
                if msg["role"] != "assistant":
                    raise _Invalid(f"{where}: tool_use blocks are only allowed in assistant turns")
                tid, name = block.get("id"), block.get("name")
                if not isinstance(tid, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", tid):
                    raise _Invalid(f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
                if not isinstance(name, str) or not name:
                    raise _Invalid(f"{where}.name: Field required")
                if not isinstance(block.get("input"), dict):
                    raise _Invalid(f"{where}.input: Input should be a valid dictionary")
                if tid in seen:
                    raise _Invalid(f"`tool_use` ids must be unique: {tid}")
                seen.add(tid)
            elif block.get("type") == "tool_result":
                if msg["role"] != "user":
                    raise _Invalid(f"{where}: tool_result blocks are only allowed in user turns")
                if any(b.get("type") != "tool_result" for b in blocks[:j]):
                    raise _Invalid(
                        f"messages.{i}: tool_result blocks must come first in the content "
                        "array, before any other content"
                    )
        results = _ids(msg, "tool_result", "tool_use_id")
        if len(results) != len(set(results)):
            raise _Invalid(f"messages.{i}: each `tool_use` may have only one `tool_result`")


def _check_tool_pairing(messages: list[JSON]) -> None:
    for i, msg in enumerate(messages):
        if msg["role"] == "assistant":
            asked = _ids(msg, "tool_use", "id")
            nxt = messages[i + 1] if i + 1 < len(messages) else {}
            missing = [t for t in asked if t not in _ids(nxt, "tool_result", "tool_use_id")]
            if missing:
                raise _Invalid(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
        else:
            prev = messages[i - 1] if i > 0 else {}
            asked = _ids(prev, "tool_use", "id")
            unexpected = [t for t in _ids(msg, "tool_result", "tool_use_id") if t not in asked]
            if unexpected:
                raise _Invalid(
                    f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{', '.join(unexpected)}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )


_THINKING_TYPES = ("thinking", "redacted_thinking")


def _check_thinking(body: JSON) -> None:
    """As the API: a budget of at least 1024 below max_tokens; no thinking block altered
    (its signature must match); and with thinking on, the assistant message whose tool
    calls the last user message answers must start with its thinking block."""
    config = body.get("thinking")
    enabled = isinstance(config, dict) and config.get("type") == "enabled"
    if config is not None and not enabled and config != {"type": "disabled"}:
        raise _Invalid("thinking: Input tag does not match 'enabled' or 'disabled'")
    if isinstance(config, dict) and enabled:
        budget = config.get("budget_tokens")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1024:
            raise _Invalid(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            )
        if budget >= body["max_tokens"]:
            raise _Invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
    messages = body["messages"]
    for i, msg in enumerate(messages):
        for j, block in enumerate(_blocks(msg)):
            if block.get("type") not in _THINKING_TYPES:
                continue
            if msg["role"] != "assistant":
                raise _Invalid(
                    f"messages.{i}.content.{j}: thinking blocks are only allowed in assistant turns"
                )
            if not _signed(block):
                raise _Invalid(
                    f"messages.{i}.content.{j}: Invalid `signature` in `{block.get('type')}` block"
                )
    if not enabled or len(messages) < 2 or messages[-1]["role"] != "user":
        return
    if not _ids(messages[-1], "tool_result", "tool_use_id"):
        return
    first = next(iter(_blocks(messages[-2])), {})
    if first.get("type") not in _THINKING_TYPES:
        raise _Invalid(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first.get('type')}`. When `thinking` is enabled, "
            "a final `assistant` message must start with a thinking block (preceeding the "
            "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
            "thinking blocks from previous turns."
        )


def _cache_marked(blocks: Any) -> int:
    """Blocks in `blocks` (and in tool_result contents) that carry a cache_control."""
    if not isinstance(blocks, list):
        return 0
    count = 0
    for block in blocks:
        if isinstance(block, dict):
            count += block.get("cache_control") is not None
            if block.get("type") == "tool_result":
                count += _cache_marked(block.get("content"))
    return count


def _check_cache_control(body: JSON) -> None:
    # Walk only where breakpoints may sit: tool input schemas may legitimately have a
    # property called "cache_control".
    found = _cache_marked(body.get("system")) + _cache_marked(body.get("tools"))
    found += sum(_cache_marked(m.get("content")) for m in body["messages"])
    if found > MAX_CACHE_BREAKPOINTS:
        raise _Invalid(
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )


# --------------------------------------------------------------------------- server


@dataclass(frozen=True)
class Recorded:
    """One request as received. `body` is the parsed JSON (None if absent or unparsable)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    query: dict[str, list[str]] = field(default_factory=dict)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeAnthropic

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-stream (Stop, a cut) is part of the tests, not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """HTTP plumbing only; FakeAnthropic decides what to send."""

    protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, like the real API
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Each event leaves when it is written, as from the real API's edge: with Nagle on,
        # an event written while the previous one waits for its (delayed, 40 ms) ACK sits in
        # the kernel, and a stream's first text reaches the client 40 ms after it was written.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        self.server.fake._track(self.connection, add=False)
        with contextlib.suppress(OSError):  # the socket may already be shut down by a cut
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        self.server.fake._serve(self)

    do_GET = do_POST
    do_PUT = do_POST
    do_DELETE = do_POST

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _read_chunked(self) -> bytes:
        data = b""
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            data += self.rfile.read(size)
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return data

    def send_json(self, status: int, obj: JSON, headers: Mapping[str, str]) -> None:
        payload = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def start_stream(self, headers: Mapping[str, str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def send_event(self, name: str, data: JSON) -> None:
        # One event per chunk, written at once: the client sees each event as it is "generated".
        payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def abort(self) -> None:
        """Hang up mid-response: FIN without a terminating chunk or full body."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def peer_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


class FakeAnthropic:
    """The fake API server: starts at construction on 127.0.0.1:<free port>."""

    def __init__(self, api_key: str | None = None, host: str = "127.0.0.1") -> None:
        # api_key=None accepts any non-empty key; a string makes other keys a 401.
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.errors: list[str] = []  # tracebacks of bugs in the fake itself
        self.holding = threading.Event()  # set while a hold step is paused
        self.disconnected = threading.Event()  # set when a client hung up mid-response
        self._released = threading.Event()
        self._closing = threading.Event()
        self._cond = threading.Condition()
        self._script: deque[Step] = deque()
        self._counter = itertools.count(1)
        self._conns: set[socket.socket] = set()
        self._httpd = _HTTPServer((host, 0), _Handler)
        self._httpd.fake = self
        # A short poll interval keeps close() fast; many tests start their own server.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    # -- public API

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Step) -> None:
        """Queue replies; each accepted POST /v1/messages consumes one."""
        with self._cond:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._cond:
            return len(self._script)

    def release(self) -> None:
        """Let a paused hold step finish its stream (a release before the hold lets it pass)."""
        self._released.set()

    def wait_for_requests(self, n: int, timeout: float = 10) -> list[Recorded]:
        """Block until at least `n` requests were received; return a snapshot of all of them."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= n, timeout):
                got = len(self.requests)
                raise AssertionError(f"expected {n} request(s) within {timeout}s, got {got}")
            return list(self.requests)

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()  # wakes holds and stalls
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._cond:
            conns = list(self._conns)
        for conn in conns:  # unblock handler threads waiting on keep-alive reads
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- request handling (runs on handler threads)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._cond:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _serve(self, h: _Handler) -> None:
        request_id = f"req_fake_{next(self._counter):04d}"
        try:
            self._respond(h, request_id)
        except OSError:
            # Socket errors mean the client hung up (or close() shut the socket): an expected
            # event in these tests, not a bug in the fake.
            self.disconnected.set()
            h.close_connection = True
        except Exception:
            self.errors.append(traceback.format_exc())
            h.close_connection = True

    def _respond(self, h: _Handler, request_id: str) -> None:
        url = urlsplit(h.path)
        body = self._parse(h.read_body())
        headers = {k.lower(): v for k, v in h.headers.items()}
        self._record(Recorded(h.command, url.path, headers, body, parse_qs(url.query)))
        ids = {"request-id": request_id}

        def fail(status: int, message: str) -> None:
            h.send_json(status, _error_body(ERROR_TYPES[status], message, request_id), ids)

        if (h.command, url.path) != ("POST", MESSAGES_PATH):
            return fail(404, f"{h.command} {url.path} not found")
        if problem := self._auth_problem(headers):
            return fail(401, problem)
        if not headers.get("anthropic-version"):
            return fail(400, "anthropic-version: header is required")
        if problem := validation_error(body):
            return fail(400, problem)
        self._play(h, self._next_step(), body, request_id)

    @staticmethod
    def _parse(raw: bytes) -> Any:
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _record(self, rec: Recorded) -> None:
        with self._cond:
            self.requests.append(rec)
            self._cond.notify_all()

    def _auth_problem(self, headers: Mapping[str, str]) -> str | None:
        bearer = headers.get("authorization", "")
        key = headers.get("x-api-key") or (bearer[7:] if bearer[:7].lower() == "bearer " else "")
        if not key.strip():
            return "x-api-key header is required"
        if self.api_key is not None and key != self.api_key:
            return "invalid x-api-key"
        return None

    def _next_step(self) -> Step:
        with self._cond:
            return self._script.popleft() if self._script else text("ok")

    def _play(self, h: _Handler, step: Step, body: JSON, request_id: str) -> None:
        ids = {"request-id": request_id}
        msg_id = request_id.replace("req_", "msg_")
        if isinstance(step, HttpError):
            err = _error_body(step.err_type, step.message, request_id)
            return h.send_json(step.status, err, {**ids, **step.headers})
        fault = step if isinstance(step, StreamFault) else None
        reply_ = step.of if isinstance(step, StreamFault) else _as_reply(step)
        if body.get("stream"):
            h.start_stream(ids)
            self._stream(h, stream_events(reply_, body, msg_id), fault, request_id)
        else:
            self._whole(h, message_json(reply_, body, msg_id), fault, request_id)

    def _stream(
        self, h: _Handler, events: Sequence[Event], fault: StreamFault | None, request_id: str
    ) -> None:
        at = _fault_position(fault, len(events))
        for name, data in events[:at]:
            h.send_event(name, data)
        if isinstance(fault, ErrorEvent):
            h.send_event("error", _error_body(fault.err_type, fault.message, request_id))
        elif isinstance(fault, Cut):
            return h.abort()
        elif isinstance(fault, Stall):
            self._park(h, None, fault.seconds)
            return h.abort()
        elif isinstance(fault, Hold):
            if not self._hold(h):
                return None
            for name, data in events[at:]:
                h.send_event(name, data)
        # Truncated and normal replies both end cleanly, with the terminating chunk.
        h.end_stream()

    def _whole(
        self, h: _Handler, message: JSON, fault: StreamFault | None, request_id: str
    ) -> None:
        ids = {"request-id": request_id}
        if isinstance(fault, ErrorEvent):
            status = _STATUS_FOR_TYPE.get(fault.err_type, 500)
            return h.send_json(status, _error_body(fault.err_type, fault.message, request_id), ids)
        if isinstance(fault, Hold) and not self._hold(h):
            return
        if isinstance(fault, Cut | Stall):
            # Headers promise a body that never fully arrives.
            h.send_response(200)
            h.send_header("content-type", "application/json")
            h.send_header("content-length", "100000")
            h.end_headers()
            h.wfile.write(json.dumps(message).encode()[:10])
            if isinstance(fault, Stall):
                self._park(h, None, fault.seconds)
            return h.abort()
        h.send_json(200, message, ids)

    def _hold(self, h: _Handler) -> bool:
        """Pause until release()/close(); False if the client hung up meanwhile."""
        self.holding.set()
        try:
            outcome = self._park(h, self._released, None)
        finally:
            self._released.clear()
            self.holding.clear()
        if outcome == "peer closed":
            h.abort()
            return False
        return True

    def _park(self, h: _Handler, until: threading.Event | None, seconds: float | None) -> str:
        """Wait for `until`, `seconds`, close() or the client hanging up; say which."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            if until is not None and until.is_set():
                return "released"
            if self._closing.is_set():
                return "closing"
            if deadline is not None and time.monotonic() >= deadline:
                return "elapsed"
            if h.peer_closed():
                self.disconnected.set()
                return "peer closed"
            # Short slices: the socket cannot be awaited together with the events.
            self._closing.wait(0.01)


def _fault_position(fault: StreamFault | None, n_events: int) -> int:
    if fault is None:
        return n_events
    if fault.after_events is None:
        # truncated(): everything but message_delta and message_stop.
        return max(0, n_events - 2)
    return max(0, fault.after_events)


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    """A started FakeAnthropic, closed after the test; fails the test if the fake itself broke."""
    with FakeAnthropic() as server:
        yield server
    assert not server.errors, "fake API crashed:\n" + "\n".join(server.errors)
