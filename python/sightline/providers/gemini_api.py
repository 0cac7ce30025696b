"""The `gemini` provider: the Gemini API on Google's google-genai SDK, always streaming
(`streamGenerateContent?alt=sse`).

The SDK is an optional extra (`pip install 'sightline[gemini]'`): it is imported in the
background after start-up (preload) or on the first send, and a missing one is said by
`prepare()` in one line instead of failing on import.

History stays in the core's Messages-shaped records; `gemini_body` maps a request to the
Gemini wire JSON, a pure function of (cfg, request), so the history plus that function is
exactly what was sent:

    system                                    →  systemInstruction {parts: [{text}]}
    tool spec {name, description, input_schema}  →  tools[0].functionDeclarations[] with
                                                  parametersJsonSchema (full JSON Schema)
    assistant text / tool_use blocks          ↔  {role: model, parts: [{text} | {functionCall:
                                                  {id, name, args}}]}, each with the
                                                  thoughtSignature it came with
    user tool_result / text blocks            →  {role: user, parts: [{functionResponse:
                                                  {id, name, response: {output | error}}},
                                                  {text}]}

Thought signatures: Gemini signs the first function call of each reply (and the last part
of a reply without calls) and, from Gemini 3 on, refuses a request whose current turn (the
model steps since the last user text) holds a function call part without its signature.
The reply's signatures are recorded on its blocks (`signature`, base64, exactly as sent)
and come back in the same parts (the session asks wire_messages to keep them:
capabilities.signed_parts). A step of the current turn that has none to send (written by
another provider) goes as text, which every model accepts. Thought summaries are shown,
never recorded: the API needs only the signatures.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import itertools
import json
import re
import threading
import time
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
    Usage,
    address_origin,
    key_from_cmd,
    with_retries,
)

KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
SDK_MODULE = "google.genai"
EXTRA_MISSING = (
    "The gemini provider needs the google-genai package: pip install 'sightline[gemini]' "
    "(in the plugin's folder: .venv/bin/pip install -e '.[gemini]')."
)

# provider.thinking given as an effort, for a model that takes a budget (Gemini 2.x).
EFFORT_BUDGET = {"low": 2048, "medium": 8192, "high": 24576}

# finishReason → the Messages stop_reason the core reads.
STOP_REASONS = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "BLOCKLIST": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "SPII": "refusal",
    "IMAGE_SAFETY": "refusal",
}

_SIGNATURE = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
_GEMINI_MAJOR = re.compile(r"^(?:models/)?gemini-(\d+)")
_call_ids = itertools.count(1)


def requires_signatures(model: str) -> bool:
    """Whether the model refuses a current-turn function call without its signature
    (Gemini 3 and later; 2.x only reads them)."""
    found = _GEMINI_MAJOR.match(model)
    return found is not None and int(found.group(1)) >= 3


def resolve_api_key(cfg: ProviderConfig, timeout_s: float = 10.0) -> tuple[str, str]:
    """The key and where it came from ($GEMINI_API_KEY, $GOOGLE_API_KEY, api_key_cmd), run
    on the turn's thread; registered with the redactor before use."""
    for name in KEY_ENVS:
        key = secrets.env_secret(name)
        if key:
            secrets.register(key)
            return key, f"${name}"
    if cfg.api_key_cmd:
        key = key_from_cmd(cfg.api_key_cmd, timeout_s)
        secrets.register(key)
        if key:
            return key, "provider.api_key_cmd"
    raise ProviderError(
        "No API key for gemini: set $GEMINI_API_KEY (or $GOOGLE_API_KEY) or "
        "provider.api_key_cmd; a key is free at aistudio.google.com."
    )


# -- the mapping (pure) ----------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(str(b.get("text", "")) for b in texts)
    return ""


def _signed(part: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    sig = block.get("signature")
    if isinstance(sig, str) and _SIGNATURE.match(sig):
        part["thoughtSignature"] = sig
    return part


def function_declarations(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": t["name"],
            "description": t.get("description", ""),
            "parametersJsonSchema": t.get("input_schema") or {"type": "object", "properties": {}},
        }
        for t in tools
    ]


def _model_parts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append(_signed({"text": str(b["text"])}, b))
        elif b.get("type") == "tool_use":
            call = {"id": b["id"], "name": b["name"], "args": b.get("input") or {}}
            parts.append(_signed({"functionCall": call}, b))
        # Claude's thinking blocks (a conversation begun with anthropic): nothing Gemini reads.
    return parts


def _user_parts(blocks: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "tool_result":
            call_id = str(b.get("tool_use_id"))
            text = _text_of(b.get("content")) or "(no output)"
            response = {"error": text} if b.get("is_error") else {"output": text}
            parts.append(
                {
                    "functionResponse": {
                        "id": call_id,
                        "name": names.get(call_id, "unknown"),
                        "response": response,
                    }
                }
            )
        elif b.get("type") == "text":
            parts.append({"text": str(b["text"])})
    return parts


def _as_text(model: dict[str, Any], answers: dict[str, Any] | None) -> None:
    """A step whose calls cannot go back as calls (no signature): said as text, in place."""
    said = []
    for part in model["parts"]:
        call = part.get("functionCall")
        if call is None:
            said.append({"text": part["text"]})
        else:
            said.append({"text": f"[called {call['name']} {json.dumps(call['args'])}]"})
    model["parts"] = said
    if answers is None:
        return
    out = []
    for part in answers["parts"]:
        fr = part.get("functionResponse")
        if fr is None:
            out.append(part)
            continue
        result = fr["response"].get("output", fr["response"].get("error"))
        out.append({"text": f"[result of {fr['name']}] {result}"})
    answers["parts"] = out


def _has_text(content: dict[str, Any]) -> bool:
    return any("text" in p for p in content["parts"])


def gemini_contents(messages: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """Gemini `contents` for a Messages conversation (wire_messages' output)."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for msg in messages:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if msg.get("role") == "assistant":
            role, parts = "model", _model_parts(blocks)
            names = {str(b["id"]): str(b["name"]) for b in blocks if b.get("type") == "tool_use"}
        else:
            role, parts = "user", _user_parts(blocks, names)
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)  # a model message that held only Claude's thinking
        else:
            out.append({"role": role, "parts": parts})
    if requires_signatures(model):
        start = max(
            (i for i, c in enumerate(out) if c["role"] == "user" and _has_text(c)), default=0
        )
        for i in range(start, len(out)):
            calls = [p for p in out[i]["parts"] if "functionCall" in p]
            if out[i]["role"] == "model" and calls and "thoughtSignature" not in calls[0]:
                _as_text(out[i], out[i + 1] if i + 1 < len(out) else None)
    return out


def thinking_config(cfg: ProviderConfig, request: Request) -> dict[str, Any] | None:
    """provider.thinking for this model: a level for Gemini 3, a budget for 2.x; nil leaves
    the model's own default (2.5 Pro cannot think less than it does)."""
    if cfg.thinking is None or not request.thinking:
        return None
    if isinstance(cfg.thinking, int):
        return {"thinkingBudget": cfg.thinking, "includeThoughts": True}
    if requires_signatures(cfg.model):
        return {"thinkingLevel": cfg.thinking, "includeThoughts": True}
    return {"thinkingBudget": EFFORT_BUDGET.get(cfg.thinking, 8192), "includeThoughts": True}


def gemini_body(cfg: ProviderConfig, request: Request) -> dict[str, Any]:
    """The wire JSON of the request for `request` (the model goes in the URL); pure."""
    body: dict[str, Any] = {
        "contents": gemini_contents(request.messages, cfg.model),
        "systemInstruction": {"parts": [{"text": request.system}]},
        "generationConfig": {"maxOutputTokens": cfg.max_tokens},
    }
    if request.tools:
        body["tools"] = [{"functionDeclarations": function_declarations(request.tools)}]
    thinking = thinking_config(cfg, request)
    if thinking is not None:
        body["generationConfig"]["thinkingConfig"] = thinking
    return body


# -- the reply ------------------------------------------------------------------------------


@dataclass
class _Assembler:
    """Builds the Messages blocks of one streamed reply from GenerateContentResponse chunks."""

    content: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = None
    usage: Usage | None = None
    blocked: str | None = None
    pending_signature: str | None = None  # arrived on a thought part: for the next block

    def feed(self, chunk: Any) -> tuple[list[StreamEvent], bool]:
        """The deltas of this chunk, and whether the usage changed."""
        events: list[StreamEvent] = []
        live = False
        meta = getattr(chunk, "usage_metadata", None)
        if meta is not None:
            self.usage = _usage(meta)
            live = True
        feedback = getattr(chunk, "prompt_feedback", None)
        if feedback is not None and getattr(feedback, "block_reason", None):
            self.blocked = str(getattr(feedback.block_reason, "value", feedback.block_reason))
        for candidate in (chunk.candidates or [])[:1]:
            content = candidate.content
            for part in (content.parts if content is not None else None) or []:
                events += self._part(part)
            if candidate.finish_reason is not None:
                self.finish = str(
                    getattr(candidate.finish_reason, "value", candidate.finish_reason)
                )
        return events, live

    def _part(self, part: Any) -> list[StreamEvent]:
        raw = part.thought_signature
        sig = base64.b64encode(raw).decode("ascii") if raw else None
        if part.thought:
            self.pending_signature = sig or self.pending_signature
            return [ThinkingDelta(part.text)] if part.text else []
        if part.function_call is not None:
            fc = part.function_call
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": fc.id or f"gemini_call_{int(time.time())}_{next(_call_ids)}",
                "name": fc.name or "",
                "input": fc.args if fc.args is not None else {},
            }
            self._attach(block, sig)
            self.content.append(block)
            return []
        if part.text is not None:
            last = self.content[-1] if self.content else None
            if last is None or last["type"] != "text" or "signature" in last:
                last = {"type": "text", "text": ""}
                self.content.append(last)
            last["text"] += part.text
            self._attach(last, sig)
            return [TextDelta(part.text)] if part.text else []
        return []

    def _attach(self, block: dict[str, Any], sig: str | None) -> None:
        sig = sig or self.pending_signature
        self.pending_signature = None
        if sig:
            block["signature"] = sig

    def reply(self) -> Reply:
        content = [b for b in self.content if b["type"] != "text" or b["text"]]
        if self.pending_signature and content:
            content[-1].setdefault("signature", self.pending_signature)
        calls = any(b["type"] == "tool_use" for b in content)
        stop = STOP_REASONS.get(self.finish or "", (self.finish or "").lower())
        if calls and stop in ("end_turn", ""):
            stop = "tool_use"
        usage = self.usage or Usage()
        return Reply(
            content=content,
            stop_reason=stop,
            input_tokens=usage.input,
            output_tokens=usage.output,
            cache_read_tokens=usage.cache_read,
        )


def _usage(meta: Any) -> Usage:
    prompt = int(getattr(meta, "prompt_token_count", 0) or 0)
    cached = int(getattr(meta, "cached_content_token_count", 0) or 0)
    # Thoughts are billed as output; promptTokenCount counts the cached ones too.
    output = int(getattr(meta, "candidates_token_count", 0) or 0) + int(
        getattr(meta, "thoughts_token_count", 0) or 0
    )
    return Usage(max(0, prompt - cached), output, cached, 0)


# -- faults ---------------------------------------------------------------------------------

_RETRYABLE = {408, 429, 500, 502, 503, 504}


def _reason(details: Any) -> str:
    for d in details if isinstance(details, list) else []:
        if isinstance(d, dict) and d.get("reason"):
            return str(d["reason"])
    return ""


def _retry_delay(details: Any, headers: Any) -> float | None:
    """google.rpc.RetryInfo's retryDelay ("21s"), else a retry-after header."""
    for d in details if isinstance(details, list) else []:
        delay = d.get("retryDelay") if isinstance(d, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            with contextlib.suppress(ValueError):
                return float(delay[:-1])
    with contextlib.suppress(AttributeError, TypeError, ValueError):
        raw = headers.get("retry-after")
        return float(raw) if raw is not None else None
    return None


def _status_text(status: int, state: str, reason: str, key_from: str, cfg: ProviderConfig) -> str:
    if reason == "API_KEY_INVALID" or status == 401:
        return f"Gemini refused the API key ({status} {reason or state}): check {key_from}"
    if state == "FAILED_PRECONDITION" or reason == "USER_LOCATION_INVALID":
        return (
            f"The Gemini API is not available here ({status} {state}): the free tier is "
            "not offered in every region; enable billing on the key's project or use vertex"
        )
    texts = {
        400: "Gemini refused the request (400)",
        403: f"Permission denied (403): the key from {key_from} may not have the "
        "Generative Language API enabled, or no access to this model",
        404: f"Not found (404): check provider.model ({cfg.model})",
        429: "Quota exceeded (429 RESOURCE_EXHAUSTED): wait a moment, or check the key's "
        "rate limits at aistudio.google.com",
        500: "The Gemini API had an internal error (500): send again",
        503: "The Gemini API is overloaded (503): try again shortly",
    }
    return texts.get(status, f"The Gemini API answered HTTP {status}")


def classify(err: BaseException, cfg: ProviderConfig, key_from: str) -> ProviderError:
    from google.genai import errors

    from sightline.providers.anthropic_api import _connect_failure, _endpoint

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, errors.APIError):
        status = int(err.code or 0)
        state = str(err.status or "")
        details = err.details.get("error", {}).get("details") if err.details else None
        reason = _reason(details)
        text = _status_text(status, state, reason, key_from, cfg)
        if err.message and status in (400, 404) and reason != "API_KEY_INVALID":
            text += f": {err.message}"
        return ProviderError(
            secrets.redact(text + "."),
            retryable=status in _RETRYABLE,
            retry_after=_retry_delay(details, getattr(err.response, "headers", None)),
        )
    failure = _connect_failure(err)
    if failure is not None:
        origin = address_origin(cfg.base_url)
        return ProviderError(
            secrets.redact(
                f"Could not connect to {_endpoint(err)}: {failure}; nothing was sent ({origin})."
            ),
            retryable=True,
        )
    name = type(err).__name__
    if "Timeout" in name:
        return ProviderError(
            f"No data from the API for {cfg.timeout_ms / 1000:g} s (provider.timeout_ms): "
            "the reply was abandoned; send again.",
            retryable=True,
        )
    if name in ("RemoteProtocolError", "ReadError", "NetworkError", "ProtocolError"):
        return ProviderError(
            "The connection to the API was lost mid-reply; nothing was applied, send again.",
            retryable=True,
        )
    return ProviderError(secrets.redact(f"The model request failed: {name}: {err}"))


# -- the provider ---------------------------------------------------------------------------


def _sdk() -> Any:
    try:
        return importlib.import_module(SDK_MODULE)
    except ImportError:
        raise ProviderError(EXTRA_MISSING) from None


@dataclass
class GeminiProvider(AbortableStream, ProviderBase):
    cfg: ProviderConfig
    name: str = "gemini"
    key_from: str = "$GEMINI_API_KEY"
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
        return Capabilities(thinking="budget", signed_parts=True).for_model(self.cfg.model)

    def _get_client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        genai = _sdk()
        import httpx2
        from google.genai import types

        from sightline.providers.anthropic_api import _abortable_http_client

        key, self.key_from = resolve_api_key(self.cfg)
        http_client, self._abort = _abortable_http_client(httpx2.Client)
        options = types.HttpOptions(
            base_url=self.cfg.base_url or None,
            api_version="v1beta",
            timeout=self.cfg.timeout_ms,
            httpx_client=http_client,
        )
        # vertexai=False: the SDK would otherwise follow $GOOGLE_GENAI_USE_VERTEXAI.
        return genai.Client(api_key=key, vertexai=False, http_options=options)

    def _classify(self, err: BaseException) -> ProviderError:
        return classify(err, self.cfg, self.key_from)

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        self._cancelled.clear()
        return with_retries(
            lambda: self._stream_once(request, cancelled),
            self._classify,
            self.cfg.retries,
            stopped=lambda: cancelled() or self._cancelled.is_set(),
            wait=self._cancelled.wait,
        )

    def _sdk_args(self, request: Request) -> dict[str, Any]:
        """gemini_body as the SDK's own types (parsed from the wire JSON by the SDK itself,
        so what it sends is that JSON)."""
        from google.genai import types

        body = gemini_body(self.cfg, request)
        config = {k: v for k, v in body.items() if k != "contents"}
        flat = {**config.pop("generationConfig"), **config}
        flat["automaticFunctionCalling"] = {"disable": True}
        return {
            "model": self.cfg.model,
            "contents": [
                types.Content.model_validate_json(json.dumps(c)) for c in body["contents"]
            ],
            "config": types.GenerateContentConfig.model_validate_json(json.dumps(flat)),
        }

    def _stream_once(
        self, request: Request, cancelled: Callable[[], bool]
    ) -> Iterator[StreamEvent]:
        client = self._get_client()
        if cancelled():
            return
        stream = client.models.generate_content_stream(**self._sdk_args(request))
        with self._lock:
            self._stream = stream
        if self._cancelled.is_set():
            return
        assembler = _Assembler()
        try:
            for chunk in stream:
                if cancelled():
                    return
                events, live = assembler.feed(chunk)
                yield from events
                if live and assembler.usage is not None:
                    yield assembler.usage
        finally:
            with self._lock:
                self._stream = None
            with contextlib.suppress(Exception):
                stream.close()
        if assembler.blocked and not assembler.content:
            raise ProviderError(
                f"Gemini refused the prompt ({assembler.blocked}): rephrase it, or start a "
                "new conversation with :Sightline reset."
            )
        if assembler.finish is None:
            raise ProviderError(
                "The reply ended before it was complete (the stream closed without a "
                "finishReason); nothing was applied, send again."
            )
        if assembler.finish == "MALFORMED_FUNCTION_CALL" and not assembler.content:
            raise ProviderError(
                "Gemini produced a malformed tool call (MALFORMED_FUNCTION_CALL); send again."
            )
        yield assembler.reply()

    def models(self) -> list[str]:
        """The models that generate content (GET /v1beta/models); raise ProviderError."""
        try:
            listed = self._get_client().models.list()
            out = []
            for m in listed:
                actions = m.supported_actions or []
                if "generateContent" in actions or not actions:
                    out.append(str(m.name).removeprefix("models/"))
            return sorted(out)
        except Exception as err:
            raise self._classify(err) from None

    def prepare(self) -> None:
        """Import the SDK (or say the extra is missing) and resolve the key."""
        self._get_client()

    def preload(self) -> threading.Event:
        return _preload()


def _warm() -> None:
    """Import the SDK and build its response parser (pydantic builds it on first use,
    ~20 ms that would otherwise delay the first reply's first text)."""
    with contextlib.suppress(Exception):  # a missing SDK is said by prepare()
        types = importlib.import_module("google.genai.types")
        sample = {"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}}]}
        types.GenerateContentResponse._from_response(response=sample, kwargs={})


_WARM_LOCK = threading.Lock()
_warmed: threading.Event | None = None


def _preload() -> threading.Event:
    global _warmed
    with _WARM_LOCK:
        if _warmed is None:
            done = _warmed = threading.Event()

            def run() -> None:
                try:
                    _warm()
                finally:
                    done.set()

            threading.Thread(target=run, name="sightline-import-gemini", daemon=True).start()
        return _warmed
