"""The real provider: the official anthropic SDK, always streaming.

The SDK costs ~1.5 s to import, so it is imported in the background after the core
starts (preload) or on the first send, never on an interactive path. The SDK runs
with max_retries=0: the core retries itself (providers/base.py with_retries) so each
retry can be shown in the pane.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sightline.domain import secrets
from sightline.domain.config import ProviderConfig
from sightline.providers.base import (
    AbortableStream,
    Capabilities,
    ProviderBase,
    ProviderError,
    Reply,
    Request,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    address_origin,
    key_from_cmd,
    preload_module,
    with_retries,
)

# provider.thinking given as an effort: the budget it means for Claude.
EFFORT_BUDGET = {"low": 2048, "medium": 8192, "high": 24576}
_THINKING = ("thinking", "redacted_thinking")


def thinking_budget(cfg: ProviderConfig) -> int | None:
    if isinstance(cfg.thinking, str):
        return EFFORT_BUDGET.get(cfg.thinking)
    return cfg.thinking


def thinking_allowed(messages: list[dict[str, Any]]) -> bool:
    """Whether thinking may be on for this request. With thinking on, the API requires the
    assistant message whose tool calls the last user message answers to start with its
    thinking block; a history written without thinking (or by another provider) has none,
    and none can be made up, so that request goes without thinking (the next turn has it)."""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return True
    content = messages[-1].get("content")
    answers = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    if not answers:
        return True
    previous = messages[-2].get("content")
    first = previous[0] if isinstance(previous, list) and previous else None
    return isinstance(first, dict) and first.get("type") in _THINKING


def _mark_last_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with a cache breakpoint on the last block of the last one (the third
    of at most four: the tools, the system prompt, the last turn), copied, not changed."""
    if not messages or not isinstance(messages[-1].get("content"), list):
        return messages
    last = dict(messages[-1])
    blocks = list(last["content"])
    if not blocks or not isinstance(blocks[-1], dict) or blocks[-1].get("type") in _THINKING:
        return messages
    blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
    last["content"] = blocks
    return [*messages[:-1], last]


def resolve_api_key(cfg: ProviderConfig, timeout_s: float = 10.0) -> str | None:
    """The key from $ANTHROPIC_API_KEY, else from running api_key_cmd once (off the UI thread)."""
    key = secrets.env_secret("ANTHROPIC_API_KEY")
    if not key and cfg.api_key_cmd:
        key = key_from_cmd(cfg.api_key_cmd, timeout_s)
    secrets.register(key)
    return key


_STATUS_TEXT = {
    400: "The API refused the request (400)",
    401: "Authentication failed (401): check ANTHROPIC_API_KEY or provider.api_key_cmd",
    403: "Permission denied (403): the key may not have access to this model",
    404: "Not found (404): check provider.model and provider.base_url",
    413: "The request is too large (413): start a new conversation with :Sightline reset",
    429: "Rate limited (429): wait a moment, then send again",
    500: "The API had an internal error (500): send again",
    529: "The API is overloaded (529): try again shortly",
}
_RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}


def _error_from_status(status: int, body: object, headers: Any) -> ProviderError:
    kind, detail = "", ""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            kind = str(err.get("type", ""))
            detail = str(err.get("message", ""))
    if status == 200:
        # An `error` event after HTTP 200: the reply was cut off by the server.
        text = f"The API reported an error mid-reply ({kind or 'error'})"
        text += f": {detail}" if detail else ""
        return ProviderError(secrets.redact(text + ". Nothing was applied; send again."))
    base = _STATUS_TEXT.get(status, f"The API answered HTTP {status}")
    if detail and status in (400, 404, 413):
        base += f": {detail}"
    retry_after: float | None = None
    try:
        raw = headers.get("retry-after") if headers is not None else None
        retry_after = float(raw) if raw is not None else None
    except (TypeError, ValueError):
        retry_after = None
    return ProviderError(
        secrets.redact(base + "."), retryable=status in _RETRYABLE, retry_after=retry_after
    )


def _causes(err: BaseException) -> Iterator[BaseException]:
    """err and what it was raised from, outermost first (the SDK wraps httpx wraps OSError)."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def _endpoint(err: BaseException) -> str:
    """host:port the request went to, from the request the SDK error carries."""
    url = getattr(getattr(err, "request", None), "url", None)
    host = getattr(url, "host", None)
    if not host:
        return "the API"
    port = getattr(url, "port", None) or (443 if getattr(url, "scheme", "") == "https" else 80)
    return f"{host}:{port}"


def _connect_failure(err: BaseException) -> str | None:
    """Why no connection was made, when none was (nothing was sent): else None."""
    chain = list(_causes(err))
    for cause in chain:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (is anything listening there?)"
        if isinstance(cause, socket.gaierror):
            return "the host name could not be resolved"
    if any(type(c).__name__ in ("ConnectError", "ConnectTimeout") for c in chain):
        reason = next((c.strerror for c in chain if isinstance(c, OSError) and c.strerror), None)
        timed_out = any("Timeout" in type(c).__name__ for c in chain)
        return "timed out" if timed_out and not reason else (reason or "failed").lower()
    return None


def classify(
    err: BaseException, timeout_s: float, origin: str = "the provider's default address"
) -> ProviderError:
    """Map SDK and transport exceptions (anthropic 2.x surfaces httpx2 errors mid-stream).
    A connection that was never made is told apart from one lost mid-reply, and names
    where the address came from (`origin`: a config key, an environment variable)."""
    import anthropic

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, anthropic.APIStatusError):
        return _error_from_status(err.status_code, err.body, err.response.headers)
    name = type(err).__name__
    failure = _connect_failure(err)
    if failure is not None:
        return ProviderError(
            secrets.redact(
                f"Could not connect to {_endpoint(err)}: {failure}; nothing was sent ({origin})."
            ),
            retryable=True,
        )
    if isinstance(err, anthropic.APITimeoutError) or "Timeout" in name:
        return ProviderError(
            f"No data from the API for {timeout_s:g} s (provider.timeout_ms): "
            "the reply was abandoned; send again.",
            retryable=True,
        )
    if isinstance(err, anthropic.APIConnectionError) or name in (
        "RemoteProtocolError",
        "ReadError",
        "ConnectError",
        "NetworkError",
        "ProtocolError",
        "IncompleteRead",
    ):
        return ProviderError(
            "The connection to the API was lost mid-reply; nothing was applied, send again.",
            retryable=True,
        )
    return ProviderError(secrets.redact(f"The model request failed: {name}: {err}"))


@dataclass
class _Assembler:
    """Builds the content blocks of one streamed message from raw SSE events."""

    reply: Reply = field(default_factory=Reply)
    partial_json: dict[int, str] = field(default_factory=dict)
    stopped: bool = False
    live: bool = False  # the usage changed: tell the pane

    def feed(self, event: Any) -> TextDelta | ThinkingDelta | None:
        kind = event.type
        if kind == "message_start":
            usage = event.message.usage
            self.reply.input_tokens = usage.input_tokens or 0
            self.reply.cache_read_tokens = getattr(usage, "cache_read_input_tokens", 0) or 0
            self.reply.cache_write_tokens = getattr(usage, "cache_creation_input_tokens", 0) or 0
            self.live = True
        elif kind == "content_block_start":
            block = event.content_block.model_dump(exclude_none=True)
            if block.get("type") == "tool_use":
                block["input"] = {}
                self.partial_json[event.index] = ""
            self.reply.content.append(block)
        elif kind == "content_block_delta":
            delta = event.delta
            block = self.reply.content[event.index]
            if delta.type == "text_delta":
                block["text"] = block.get("text", "") + delta.text
                return TextDelta(str(delta.text)) if delta.text else None
            if delta.type == "thinking_delta":
                # Kept exactly as streamed: the API checks it against the signature when
                # it comes back before a tool_result.
                block["thinking"] = block.get("thinking", "") + delta.thinking
                return ThinkingDelta(str(delta.thinking)) if delta.thinking else None
            if delta.type == "signature_delta":
                block["signature"] = block.get("signature", "") + delta.signature
            if delta.type == "input_json_delta":
                self.partial_json[event.index] += delta.partial_json
        elif kind == "content_block_stop":
            if event.index in self.partial_json:
                raw = self.partial_json.pop(event.index)
                self.reply.content[event.index]["input"] = json.loads(raw) if raw else {}
        elif kind == "message_delta":
            self.reply.stop_reason = event.delta.stop_reason
            self.reply.output_tokens = event.usage.output_tokens or 0
            self.live = True
        elif kind == "message_stop":
            self.stopped = True
        return None


def _abortable_http_client(client_cls: Any = None) -> tuple[Any, Callable[[], None]]:
    """An HTTP client whose open connections can be torn down from another thread.

    Closing a response while a worker is blocked reading it does not wake the read, and the
    server keeps streaming into a dead turn. Shutting the socket down does both, so Stop
    closes the stream at once. The hook sits on httpcore2's network backend; if that private
    seam ever moves, Stop still works, only less promptly (the response is closed).
    The openai SDK sits on the same httpx2 stack and passes its own client class.
    """
    import httpcore2
    import httpx2

    if client_cls is None:
        import anthropic

        client_cls = anthropic.DefaultHttpxClient
    live: weakref.WeakSet[socket.socket] = weakref.WeakSet()

    class TrackingBackend(httpcore2.SyncBackend):
        def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
            stream = super().connect_tcp(*args, **kwargs)
            sock = stream.get_extra_info("socket")
            if sock is not None:
                live.add(sock)
            return stream

    transport = httpx2.HTTPTransport()
    pool = getattr(transport, "_pool", None)
    if pool is not None and hasattr(pool, "_network_backend"):
        pool._network_backend = TrackingBackend()

    def abort() -> None:
        for sock in list(live):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    return client_cls(transport=transport), abort


@dataclass
class AnthropicProvider(AbortableStream, ProviderBase):
    cfg: ProviderConfig
    name: str = "anthropic"
    _client: Any = None
    _abort: Callable[[], None] | None = None
    _stream: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _client_lock: threading.Lock = field(default_factory=threading.Lock)
    _cancelled: threading.Event = field(default_factory=threading.Event)

    @property
    def model(self) -> str:
        return self.cfg.model

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]  # per model
        return Capabilities(thinking="budget").for_model(self.cfg.model)

    def _get_client(self) -> Any:
        # One api_key_cmd at a time: a turn started while a stopped one still waits for the
        # key waits for that run rather than starting another.
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        import anthropic

        key = resolve_api_key(self.cfg)
        token = None if key else secrets.env_secret("ANTHROPIC_AUTH_TOKEN")
        secrets.register(token)
        http_client, self._abort = _abortable_http_client()
        # Passed explicitly (the SDK takes one of the two): the core took both variables out
        # of its environment (secrets.capture_env), so the SDK would not find them there.
        return anthropic.Anthropic(
            http_client=http_client,
            api_key=None if token else key or "",
            auth_token=token,
            base_url=self.cfg.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            max_retries=0,
            timeout=self.cfg.timeout_ms / 1000,
        )

    def _params(self, request: Request) -> dict[str, Any]:
        tools = [dict(t) for t in request.tools]
        if tools:
            # One breakpoint after the tool list and one after the system prompt: a repeated
            # turn reads both from the prompt cache.
            tools[-1]["cache_control"] = {"type": "ephemeral"}
        params: dict[str, Any] = {
            "model": self.cfg.model,
            "max_tokens": self.cfg.max_tokens,
            "system": [
                {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": _mark_last_turn(request.messages),
        }
        if tools:
            params["tools"] = tools
        budget = thinking_budget(self.cfg)
        thinks = self.capabilities.thinks  # claude-3-5-haiku refuses a thinking budget
        if budget and thinks and request.thinking and thinking_allowed(request.messages):
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
            # provider.max_tokens stays the reply's own budget; thinking counts on top.
            params["max_tokens"] = self.cfg.max_tokens + budget
        return params

    def _classify(self, err: BaseException) -> ProviderError:
        origin = address_origin(self.cfg.base_url, "ANTHROPIC_BASE_URL")
        return classify(err, self.cfg.timeout_ms / 1000, origin)

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        self._cancelled.clear()
        return with_retries(
            lambda: self._stream_once(request, cancelled),
            self._classify,
            self.cfg.retries,
            stopped=lambda: cancelled() or self._cancelled.is_set(),
            wait=self._cancelled.wait,
        )

    def _stream_once(
        self, request: Request, cancelled: Callable[[], bool]
    ) -> Iterator[StreamEvent]:
        client = self._get_client()
        if cancelled():
            return  # stopped while the key was fetched: the request never goes out
        stream = client.messages.create(stream=True, **self._params(request))
        with self._lock:
            self._stream = stream
        if self._cancelled.is_set():
            stream.close()
            return
        assembler = _Assembler()
        try:
            for event in stream:
                if cancelled():
                    return
                if event.type == "error":
                    raise _error_from_status(200, event.model_dump(), None)
                delta = assembler.feed(event)
                if delta is not None:
                    yield delta
                if assembler.live:
                    assembler.live = False
                    yield assembler.reply.usage()
        finally:
            with self._lock:
                self._stream = None
            stream.close()
        if not assembler.stopped:
            raise ProviderError(
                "The reply ended before it was complete (the stream closed without "
                "message_stop); nothing was applied, send again.",
                retryable=False,
            )
        yield assembler.reply

    def models(self) -> list[str]:
        """The ids of the models the API offers (the Models endpoint); raise ProviderError."""
        try:
            return sorted(m.id for m in self._get_client().models.list())
        except Exception as err:
            raise self._classify(err) from None

    def prepare(self) -> None:
        """Import the SDK and resolve the key (api_key_cmd) before anything is recorded."""
        self._get_client()

    def preload(self) -> threading.Event:
        return preload_module("anthropic")
