"""OpenAI-compatible providers (`openai`, `ollama`, `openrouter` and the presets of
domain/presets.py; `azure` subclasses it): the official openai SDK, Chat Completions,
always streaming.

History stays in the core's own Messages-shaped records. The request is mapped at this
boundary by `chat_request`, a pure function of (system, wire_messages(records), tools,
tools_on), so the history plus that function is exactly what was sent; the reply is mapped
back into Messages blocks (`text`, `tool_use`) before it is recorded. The mapping:

    tool spec {name, description, input_schema}  →  {type: function, function: {name,
                                                     description, parameters}}
    assistant text + tool_use blocks             ↔  {role: assistant, content, tool_calls}
    user tool_result blocks                      →  {role: tool, tool_call_id, content}
                                                     (one each, first, in call order)
    user text blocks                             →  {role: user, content: parts joined}

wire_messages already guarantees each tool_use is answered in the next user message, so
every `tool_calls` entry gets its `tool` message. With tools off (the model refused them),
calls and results of earlier turns become plain text, which every server accepts.

The SDK runs with max_retries=0 (the core retries, each retry shown: providers/base.py
with_retries); Stop shuts the socket down, as the anthropic provider does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sightline.domain import models, secrets
from sightline.domain.config import ProviderConfig
from sightline.domain.presets import PRESETS, Preset
from sightline.providers.base import (
    AbortableStream,
    Capabilities,
    Notice,
    ProviderBase,
    ProviderError,
    Reply,
    Request,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    Usage,
    address_origin,
    key_from_cmd,
    preload_module,
    with_retries,
)

# finish_reason → the Messages stop_reason the core reads.
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def preset_of(cfg: ProviderConfig) -> Preset:
    return PRESETS.get(cfg.name) or PRESETS["openai"]


def resolve_api_key(cfg: ProviderConfig, timeout_s: float = 10.0) -> str | None:
    """The key from the preset's variable, else from running api_key_cmd once (this runs on
    the turn's thread, never on Neovim's); registered with the redactor before use."""
    found = preset_of(cfg)
    key = secrets.env_secret(found.key_env) if found.key_env else None
    if not key and cfg.api_key_cmd:
        key = key_from_cmd(cfg.api_key_cmd, timeout_s)
    secrets.register(key)
    if not key and found.needs_key:
        where = f"${found.key_env} or " if found.key_env else ""
        raise ProviderError(f"No API key for {cfg.name}: set {where}provider.api_key_cmd.")
    return key


# -- the mapping (pure) ----------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(str(b.get("text", "")) for b in texts)
    return ""


def _result_text(block: dict[str, Any]) -> str:
    text = _text_of(block.get("content")) or "(no output)"
    # Chat Completions has no is_error flag: the model reads it in the text.
    return f"error: {text}" if block.get("is_error") else text


def chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def _assistant(blocks: list[dict[str, Any]], tools_on: bool) -> dict[str, Any]:
    texts = [str(b["text"]) for b in blocks if b.get("type") == "text"]
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    out: dict[str, Any] = {"role": "assistant"}
    if not tools_on:
        texts += [f"[called {c['name']} {json.dumps(c.get('input', {}))}]" for c in calls]
        calls = []
    out["content"] = "\n\n".join(texts) if texts else None
    if calls:
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("input", {}))},
            }
            for c in calls
        ]
    return out


def _data_url(block: dict[str, Any]) -> dict[str, Any] | None:
    """A Messages API base64 image block as Chat Completions' `image_url` data URL part."""
    source = block.get("source")
    if block.get("type") != "image" or not isinstance(source, dict):
        return None
    url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _user(blocks: list[dict[str, Any]], tools_on: bool) -> list[dict[str, Any]]:
    results = [b for b in blocks if b.get("type") == "tool_result"]
    texts = [str(b["text"]) for b in blocks if b.get("type") == "text"]
    pictures = [p for b in blocks if (p := _data_url(b)) is not None]
    # A tool message carries text only: a tool result's images follow in the user message.
    for r in results:
        content = r.get("content")
        if isinstance(content, list):
            pictures += [p for b in content if isinstance(b, dict) and (p := _data_url(b))]
    out: list[dict[str, Any]] = []
    if tools_on:
        out += [
            {"role": "tool", "tool_call_id": r["tool_use_id"], "content": _result_text(r)}
            for r in results
        ]
    else:
        texts = [f"[result of a tool call] {_result_text(r)}" for r in results] + texts
    if pictures:
        parts: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        out.append({"role": "user", "content": [*parts, *pictures]})
    elif texts:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def chat_messages(system: str, messages: list[dict[str, Any]], tools_on: bool) -> list[Any]:
    """Chat Completions messages for a Messages conversation (wire_messages' output)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for msg in messages:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if msg.get("role") == "assistant":
            said = _assistant(blocks, tools_on)
            # Only Claude's thinking blocks (a conversation begun with anthropic): nothing
            # Chat Completions can carry, and an empty assistant message is refused.
            if said["content"] is not None or "tool_calls" in said:
                out.append(said)
        else:
            out.extend(_user(blocks, tools_on))
    return out


def chat_request(cfg: ProviderConfig, request: Request, tools_on: bool = True) -> dict[str, Any]:
    """The body sent for `request` (without `stream`); pure, see the module's docstring."""
    limit = preset_of(cfg).max_tokens_key
    params: dict[str, Any] = {
        "model": cfg.model,
        "messages": chat_messages(request.system, request.messages, tools_on),
        limit: cfg.max_tokens,
        "stream_options": {"include_usage": True},
    }
    if tools_on and request.tools:
        params["tools"] = chat_tools(request.tools)
    thinks = models.lookup(cfg.model).thinking is not False  # gpt-4.1 refuses reasoning_effort
    if isinstance(cfg.thinking, str) and request.thinking and thinks:
        params["reasoning_effort"] = cfg.thinking
    return params


# -- the reply ------------------------------------------------------------------------------


@dataclass
class _Assembler:
    """Builds the Messages blocks of one streamed reply from Chat Completions chunks."""

    text: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish: str | None = None
    usage: Usage | None = None
    thought: str = ""  # this chunk's reasoning text (servers that stream it; never sent back)

    def feed(self, chunk: Any) -> tuple[str, bool]:
        """The new text of this chunk, and whether the usage changed."""
        new = ""
        live = False
        self.thought = ""
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
            live = True
        for choice in chunk.choices or []:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    new += delta.content
                # DeepSeek, vLLM and Ollama say reasoning_content, OpenRouter reasoning.
                reasoning = getattr(delta, "reasoning_content", None) or getattr(
                    delta, "reasoning", None
                )
                if isinstance(reasoning, str):
                    self.thought += reasoning
                for call in delta.tool_calls or []:
                    slot = self.calls.setdefault(call.index, {"id": "", "name": "", "args": ""})
                    if call.id:
                        slot["id"] = call.id
                    if call.function is not None:
                        slot["name"] += call.function.name or ""
                        slot["args"] += call.function.arguments or ""
            if choice.finish_reason:
                self.finish = choice.finish_reason
        self.text += new
        return new, live

    def reply(self) -> Reply:
        content: list[dict[str, Any]] = []
        if self.text:
            content.append({"type": "text", "text": self.text})
        for n, index in enumerate(sorted(self.calls)):
            slot = self.calls[index]
            try:
                args: Any = json.loads(slot["args"]) if slot["args"].strip() else {}
            except ValueError:
                args = slot["args"]  # the session answers a non-object input with an error
            call_id = slot["id"] or f"call_sightline_{n + 1}"
            content.append({"type": "tool_use", "id": call_id, "name": slot["name"], "input": args})
        usage = self.usage or Usage()
        stop = STOP_REASONS.get(self.finish or "", self.finish)
        if stop == "end_turn" and self.calls:
            stop = "tool_use"  # some servers say "stop" after tool calls
        return Reply(
            content=content,
            stop_reason=stop,
            input_tokens=usage.input,
            output_tokens=usage.output,
            cache_read_tokens=usage.cache_read,
            cache_write_tokens=usage.cache_write,
        )


def _usage(raw: Any) -> Usage:
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    written = int(getattr(details, "cache_write_tokens", 0) or 0) if details is not None else 0
    output = int(getattr(raw, "completion_tokens", 0) or 0)
    # prompt_tokens counts cached ones too; `input` is the uncached rest, as Anthropic's.
    return Usage(max(0, prompt - cached - written), output, cached, written)


# -- faults ---------------------------------------------------------------------------------

_RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}


def _status_text(status: int, cfg: ProviderConfig) -> str:
    key = preset_of(cfg).key_env
    texts = {
        400: "The API refused the request (400)",
        401: f"Authentication failed (401): check {f'${key} or ' if key else ''}"
        "provider.api_key_cmd",
        402: "Payment required (402): the account has no credit left; top it up on the "
        f"{cfg.name} console",
        403: "Permission denied (403): the key may not have access to this model",
        404: f"Not found (404): check provider.model ({cfg.model}) and provider.base_url",
        413: "The request is too large (413): start a new conversation with :Sightline reset",
        429: "Rate limited (429): wait a moment, then send again",
        500: "The API had an internal error (500): send again",
        503: "The API is unavailable (503): try again shortly",
    }
    return texts.get(status, f"The API answered HTTP {status}")


def _quota_spent(body: object) -> bool:
    """A 429 that waiting does not cure: the account's quota or credit is used up."""
    err = body.get("error", body) if isinstance(body, dict) else None
    code = str(err.get("code") or err.get("type") or "") if isinstance(err, dict) else ""
    return code in ("insufficient_quota", "quota_exceeded", "billing_hard_limit_reached")


def _detail(body: object) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return str(err.get("message") or "")
        if isinstance(err, str):
            return err
    return ""


class _Fault(ProviderError):
    """An HTTP error, with its status and the server's own words."""

    def __init__(self, message: str, status: int, detail: str, **kw: Any):
        super().__init__(message, **kw)
        self.status = status
        self.detail = detail


_NO_TOOLS = re.compile(r"\btools?\b.*\b(support|enable|allowed|unknown|unrecognized)", re.I | re.S)
_NO_TOOLS_REV = re.compile(r"\b(support|enable|allowed)\w*\b.*\btools?\b", re.I | re.S)


def refuses_tools(err: ProviderError) -> bool:
    """A 400 saying the model cannot use tools (Ollama: "… does not support tools"), not
    one about a malformed request that merely names a tool message."""
    if not isinstance(err, _Fault) or err.status != 400:
        return False
    return bool(_NO_TOOLS.search(err.detail) or _NO_TOOLS_REV.search(err.detail))


def classify(
    err: BaseException,
    cfg: ProviderConfig,
    status_text: Callable[[int, ProviderConfig], str] | None = None,
) -> ProviderError:
    """An SDK error in the user's words; `status_text` words an HTTP status for a provider
    whose fixes differ (azure: the deployment, the Entra role)."""
    import openai

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        detail = _detail(err.body)
        text = (status_text or _status_text)(status, cfg)
        if detail and status in (400, 404, 413, 422):
            text += f": {detail}"
        if status == 429 and _quota_spent(err.body):
            return _Fault(
                secrets.redact(
                    f"The {cfg.name} quota is used up (429): waiting will not help; check the "
                    f"account's plan and billing. {detail}".rstrip()
                ),
                status,
                detail,
            )
        retry_after: float | None = None
        with contextlib.suppress(TypeError, ValueError):
            raw = err.response.headers.get("retry-after")
            retry_after = float(raw) if raw is not None else None
        return _Fault(
            secrets.redact(text + "."),
            status,
            detail,
            retryable=status in _RETRYABLE,
            retry_after=retry_after,
        )
    if isinstance(err, openai.APITimeoutError):
        return ProviderError(
            f"No data from the API for {cfg.timeout_ms / 1000:g} s (provider.timeout_ms): "
            "the reply was abandoned; send again.",
            retryable=True,
        )
    if isinstance(err, openai.APIConnectionError):
        cause = type(err.__cause__).__name__ if err.__cause__ else ""
        if cause == "ConnectError":
            url = cfg.base_url or preset_of(cfg).base_url or "the API"
            origin = address_origin(cfg.base_url)
            if not cfg.base_url:
                origin = f"the {cfg.name} preset's address"
            return ProviderError(
                secrets.redact(f"Could not connect to {url}: is the server running? ({origin})"),
                retryable=True,
            )
        return ProviderError(
            "The connection to the API was lost mid-reply; nothing was applied, send again.",
            retryable=True,
        )
    if isinstance(err, openai.APIError):
        # An error object inside a 200 stream: the server gave up mid-reply.
        detail = _detail(err.body) or str(err.message)
        return ProviderError(
            secrets.redact(
                f"The API reported an error mid-reply: {detail}. Nothing was applied; send again."
            )
        )
    return ProviderError(secrets.redact(f"The model request failed: {type(err).__name__}: {err}"))


# -- the provider ---------------------------------------------------------------------------


@dataclass
class OpenAIProvider(AbortableStream, ProviderBase):
    cfg: ProviderConfig
    tools_on: bool = True  # off once the model refused tools (said once in the pane)
    _told_no_tools: bool = False
    _client: Any = None
    _abort: Callable[[], None] | None = None
    _stream: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _client_lock: threading.Lock = field(default_factory=threading.Lock)
    _cancelled: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        # A model declared without tools (domain/models.py) chats without them from the start.
        self.tools_on = self.capabilities.tools

    @property
    def name(self) -> str:
        return self.cfg.name

    @property
    def model(self) -> str:
        return self.cfg.model

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]  # per preset and model
        found = preset_of(self.cfg)
        return Capabilities(thinking=found.thinking, local=found.local).for_model(self.cfg.model)

    def base_url(self) -> str | None:
        return self.cfg.base_url or preset_of(self.cfg).base_url

    def _get_client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
                if not self.cfg.model:
                    self._first_listed_model()
        return self._client

    def _make_client(self) -> Any:
        import openai

        from sightline.providers.anthropic_api import _abortable_http_client

        key = resolve_api_key(self.cfg)
        http_client, self._abort = _abortable_http_client(openai.DefaultHttpxClient)
        return openai.OpenAI(
            http_client=http_client,
            # A local server needs no key, but the SDK insists on one; it is not secret.
            api_key=key or "sightline-no-key",
            base_url=self.base_url(),
            max_retries=0,
            timeout=self.cfg.timeout_ms / 1000,
        )

    def _first_listed_model(self) -> None:
        """A server that serves what it loaded (LM Studio, vLLM, llama.cpp): its model is the
        first one its list names, asked once."""
        try:
            listed = [m.id for m in self._client.models.list()]
        except Exception as err:
            self._client = None
            raise self._classify(err) from None
        if not listed:
            self._client = None
            raise ProviderError(
                f"The {self.cfg.name} server lists no model: load one, or set provider.model."
            )
        self.cfg = dataclasses.replace(self.cfg, model=listed[0])
        self.tools_on = self.capabilities.tools

    def _classify(self, err: BaseException) -> ProviderError:
        return classify(err, self.cfg)

    def _no_tools_notice(self) -> Notice:
        return Notice(
            f"⚠ {self.cfg.model} does not support tools: it chats without them "
            "(no file reading or edits)."
        )

    def _without_tools(self, fault: ProviderError) -> Notice | None:
        """A model that refuses tools chats without them from now on (said once)."""
        if not (self.tools_on and refuses_tools(fault)):
            return None
        self.tools_on = False
        self._told_no_tools = True
        return self._no_tools_notice()

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        self._cancelled.clear()
        return with_retries(
            lambda: self._stream_once(request, cancelled),
            self._classify,
            self.cfg.retries,
            stopped=lambda: cancelled() or self._cancelled.is_set(),
            wait=self._cancelled.wait,
            recover=self._recover,
        )

    # Hooks for a service on this provider (copilot: token renewal, its headers).
    def _recover(self, fault: ProviderError) -> Notice | None:
        return self._without_tools(fault)

    def _extra_headers(self, request: Request) -> dict[str, str] | None:
        return None

    def _stream_once(
        self, request: Request, cancelled: Callable[[], bool]
    ) -> Iterator[StreamEvent]:
        client = self._get_client()
        if not self.tools_on and not self._told_no_tools:
            self._told_no_tools = True  # declared without tools: said once, before its reply
            yield self._no_tools_notice()
        stream = client.chat.completions.create(
            stream=True,
            extra_headers=self._extra_headers(request),
            **chat_request(self.cfg, request, self.tools_on),
        )
        with self._lock:
            self._stream = stream
        if self._cancelled.is_set():
            stream.close()
            return
        assembler = _Assembler()
        try:
            for chunk in stream:
                if cancelled():
                    return
                text, live = assembler.feed(chunk)
                if assembler.thought:
                    yield ThinkingDelta(assembler.thought)
                if text:
                    yield TextDelta(text)
                if live and assembler.usage is not None:
                    yield assembler.usage
        finally:
            with self._lock:
                self._stream = None
            stream.close()
        if assembler.finish is None:
            raise ProviderError(
                "The reply ended before it was complete (the stream closed without a "
                "finish_reason); nothing was applied, send again."
            )
        yield assembler.reply()

    def models(self) -> list[str]:
        """The ids the server lists (GET /models); raise ProviderError."""
        try:
            return sorted(m.id for m in self._get_client().models.list())
        except Exception as err:
            raise self._classify(err) from None

    def prepare(self) -> None:
        """Import the SDK and resolve the key before anything is recorded."""
        self._get_client()

    def preload(self) -> threading.Event:
        return preload_module("openai")
