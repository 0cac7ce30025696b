"""The `copilot` provider: GitHub Copilot's chat API, which speaks Chat Completions, so this
is the openai provider (the same mapping, stream, retries and Stop) with Copilot's own
credentials and headers.

The key is the short-lived Copilot API token (providers/copilot_auth.py), exchanged from
the user's GitHub sign-in and renewed before it expires: each request asks the keeper for a
token, so a conversation that outlives one token goes on with the next. A token the server
refuses all the same (401: revoked, or expired early) is dropped and the request tried once
more with a fresh one. The address is the one the token names (`endpoints.api`), unless
provider.base_url says otherwise; `provider.host` is the GitHub host (Enterprise).

What a model can do is what Copilot's model list says of it (`capabilities.supports`:
`tool_calls`, `vision`; `limits.vision`: how many images, how large, which types), once the
list is known (fetched by `:Sightline model` or in the background after the first sign-in
of the process); until then the table of domain/models.py answers by name. Images go as
Chat Completions `image_url` data URLs with the header `Copilot-Vision-Request: true`; a new
image a model cannot take is refused before anything is sent, and an earlier one (a model
chosen since) becomes a line of text saying it was left out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sightline.domain import images, secrets
from sightline.providers import copilot_auth
from sightline.providers.base import Capabilities, Notice, ProviderError, Request, StreamEvent
from sightline.providers.openai_api import OpenAIProvider, _Fault, classify

# What Copilot's chat API asks of an editor integration.
CHAT_HEADERS = {
    "copilot-integration-id": "vscode-chat",
    "editor-version": copilot_auth.HEADERS["editor-version"],
    "editor-plugin-version": copilot_auth.HEADERS["editor-plugin-version"],
    "openai-intent": "conversation-panel",
}


def initiator(request: Request) -> str:
    """`user` for a request the user's prompt starts, `agent` for one that only carries
    tool results (Copilot counts premium requests by the first)."""
    last = request.messages[-1] if request.messages else {}
    content = last.get("content")
    blocks = content if isinstance(content, list) else []
    typed = any(isinstance(b, dict) and b.get("type") == "text" for b in blocks)
    return "user" if typed or not blocks else "agent"


VISION_HEADER = "Copilot-Vision-Request"


@dataclass(frozen=True)
class Listed:
    """What Copilot's model list says of one model."""

    tools: bool = True
    vision: bool = False
    max_images: int | None = None
    max_image_bytes: int | None = None
    media_types: tuple[str, ...] = ()

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Listed:
        caps = entry.get("capabilities")
        caps = caps if isinstance(caps, dict) else {}
        supports = caps.get("supports")
        supports = supports if isinstance(supports, dict) else {}
        limits = caps.get("limits")
        limits = limits if isinstance(limits, dict) else {}
        seen = limits.get("vision")
        seen = seen if isinstance(seen, dict) else {}

        def count(key: str) -> int | None:
            value = seen.get(key)
            ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
            return value if ok else None

        media = seen.get("supported_media_types")
        return cls(
            tools=supports.get("tool_calls") is not False,
            vision=supports.get("vision") is True,
            max_images=count("max_prompt_images"),
            max_image_bytes=count("max_prompt_image_size"),
            media_types=tuple(str(m) for m in media) if isinstance(media, list) else (),
        )

    def refusal(self, who: str, shown: Sequence[tuple[str, int]]) -> str | None:
        """Why these images (media type, bytes) cannot go with one message, or None."""
        if not self.vision:
            return (
                f"{who} cannot look at images (Copilot's model list says so); nothing was "
                "sent: choose a model with vision (:Sightline model) or remove the image."
            )
        if self.max_images is not None and len(shown) > self.max_images:
            return (
                f"{who} takes at most {self.max_images} image(s) in a request; nothing was "
                f"sent: attach {self.max_images} or fewer."
            )
        for media, size in shown:
            if self.media_types and media not in self.media_types:
                kinds = ", ".join(m.removeprefix("image/") for m in self.media_types)
                return f"{who} takes {kinds} images, not {media}; nothing was sent."
            if self.max_image_bytes is not None and size > self.max_image_bytes:
                return (
                    f"{who} takes images of at most {self.max_image_bytes // 1024} kB, this "
                    f"one is {size // 1024} kB; nothing was sent: crop it or send a smaller one."
                )
        return None


# The model lists seen in this process, by (GitHub host, base_url): kept across providers
# (a new one is made for each model chosen) so the capabilities of each are known at once.
_LISTED: dict[tuple[str, str | None], dict[str, Listed]] = {}
_FETCHING: dict[tuple[str, str | None], threading.Event] = {}
_LISTED_LOCK = threading.Lock()
LIST_WAIT_S = 15.0


def _image_blocks(content: Any) -> Iterator[dict[str, Any]]:
    """The API image blocks of a message's content, tool results' included."""
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "image":
            yield block
        elif block.get("type") == "tool_result":
            yield from _image_blocks(block.get("content"))


def _shape(block: dict[str, Any]) -> tuple[str, int]:
    source = block.get("source")
    source = source if isinstance(source, dict) else {}
    data = str(source.get("data") or "")
    return str(source.get("media_type") or ""), len(data) * 3 // 4 - data[-2:].count("=")


def has_images(request: Request) -> bool:
    return any(next(_image_blocks(m.get("content")), None) for m in request.messages)


def _left_out(content: Any, keep: Callable[[dict[str, Any]], bool]) -> Any:
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image" and not keep(block):
            out.append({"type": "text", "text": "[an earlier image, left out: not sent]"})
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            out.append({**block, "content": _left_out(block.get("content"), keep)})
        else:
            out.append(block)
    return out


@dataclass
class CopilotProvider(OpenAIProvider):
    keeper: copilot_auth.TokenKeeper = field(init=False)
    multipliers: dict[str, float] = field(default_factory=dict)
    _token: str = ""
    _http: Any = None
    _renewed: bool = False  # this request already exchanged again after a 401

    def __post_init__(self) -> None:
        self.keeper = copilot_auth.TokenKeeper(copilot_auth.Host.of(self.cfg.host))

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        caps = Capabilities(thinking="effort", subscription=True).for_model(self.cfg.model)
        facts = self.listed()
        if facts is None:
            return caps
        return dataclasses.replace(caps, tools=facts.tools, vision=facts.vision)

    # -- the model list's facts ----------------------------------------------------------

    @property
    def _list_key(self) -> tuple[str, str | None]:
        return (self.keeper.host.name, self.cfg.base_url)

    def listed(self, model: str | None = None) -> Listed | None:
        """What the model list said of `model` (the current one); None before it is known,
        or when it does not name the model."""
        with _LISTED_LOCK:
            return _LISTED.get(self._list_key, {}).get(model or self.cfg.model)

    def _known(self) -> bool:
        with _LISTED_LOCK:
            return self._list_key in _LISTED

    def _learn_list(self, wait: bool) -> None:
        """Fetch the model list once (per host, per process): `wait` on this thread (a
        request with images), else in the background; a failure leaves the table's word."""
        with _LISTED_LOCK:
            if self._list_key in _LISTED:
                return
            done = _FETCHING.get(self._list_key)
            mine = done is None
            if done is None:
                done = _FETCHING[self._list_key] = threading.Event()

        def fetch() -> None:
            try:
                with contextlib.suppress(ProviderError):
                    self.models()
            finally:
                with _LISTED_LOCK:
                    _FETCHING.pop(self._list_key, None)
                done.set()

        if mine and wait:
            fetch()
        elif mine:
            threading.Thread(target=fetch, name="sightline-copilot-models", daemon=True).start()
        elif wait:
            done.wait(LIST_WAIT_S)

    def image_refusal(self, attached: Sequence[images.Image]) -> str | None:
        """Why the images of a new message cannot go to this model (the list's limits), said
        before anything is sent or recorded; None when they can, or the list is not known
        yet (the request checks again: `_fit_images`)."""
        facts = self.listed()
        if facts is None or not attached:
            return None
        return facts.refusal(self._who, [(i.media_type, i.size) for i in attached])

    @property
    def _who(self) -> str:
        return f"copilot {self.cfg.model}"

    def _fit_images(self, request: Request) -> Request:
        """The request as this model may take it: the newest message's images checked
        against the list (ProviderError before anything is sent), earlier ones the model
        cannot take (a model chosen since, over the count) left out with a line saying so."""
        if not has_images(request):
            return request
        self._learn_list(wait=True)
        facts = self.listed() or Listed(vision=self.capabilities.vision)
        last = request.messages[-1] if request.messages else {}
        content = last.get("content")
        # The user's own new images (a tool's come in tool results: kept while they fit).
        new = [b for b in content if b.get("type") == "image"] if isinstance(content, list) else []
        if new and (why := facts.refusal(self._who, [_shape(b) for b in new])):
            raise ProviderError(why)
        room = facts.max_images if facts.max_images is not None else 1 << 30
        room -= len(new)
        kept = {id(b) for b in new}
        every = [b for m in request.messages for b in _image_blocks(m.get("content"))]
        for block in reversed(every):
            if id(block) in kept:
                continue
            if room > 0 and facts.refusal("", [_shape(block)]) is None:
                kept.add(id(block))
                room -= 1
        if len(kept) == len(every):
            return request
        messages = [
            {**m, "content": _left_out(m.get("content"), lambda b: id(b) in kept)}
            for m in request.messages
        ]
        return dataclasses.replace(request, messages=messages)

    def _stream_once(
        self, request: Request, cancelled: Callable[[], bool]
    ) -> Iterator[StreamEvent]:
        yield from super()._stream_once(self._fit_images(request), cancelled)

    def _get_client(self) -> Any:
        """A client holding a token valid for the whole request (renewed as needed)."""
        import openai

        from sightline.providers.anthropic_api import _abortable_http_client

        token = self.keeper.current()
        if self._client is None or token.token != self._token:
            if self._http is None:
                self._http, self._abort = _abortable_http_client(openai.DefaultHttpxClient)
            self._client = openai.OpenAI(
                http_client=self._http,
                api_key=token.token,
                base_url=self.cfg.base_url or token.api,
                max_retries=0,
                timeout=self.cfg.timeout_ms / 1000,
                default_headers=CHAT_HEADERS,
            )
            self._token = token.token
        return self._client

    def _extra_headers(self, request: Request) -> dict[str, str]:
        headers = {"x-initiator": initiator(request)}
        if has_images(request):
            headers[VISION_HEADER] = "true"  # Copilot refuses image parts without it
        return headers

    def _classify(self, err: BaseException) -> ProviderError:
        fault = classify(err, self.cfg)
        if not isinstance(fault, _Fault):
            return fault
        status = fault.status
        text = {
            401: "Copilot refused the token (401) again after renewing it: run "
            f"{copilot_auth.LOGIN}",
            403: "Copilot refused the request (403): this account or organisation may not "
            f"allow {self.cfg.model}, or has no Copilot seat",
            404: f"Copilot has no model {self.cfg.model} (404): pick one with :Sightline model",
            429: "Copilot is rate limiting you (429): wait a moment, then send again",
        }.get(status)
        if text is None:
            return fault
        if fault.detail and status in (403, 404):
            text += f": {fault.detail}"
        return _Fault(
            secrets.redact(text + "."),
            status,
            fault.detail,
            retryable=fault.retryable,
            retry_after=fault.retry_after,
        )

    def _recover(self, fault: ProviderError) -> Notice | None:
        """A 401 once per request: the token was revoked or expired early; renew it."""
        if isinstance(fault, _Fault) and fault.status == 401 and not self._renewed:
            self._renewed = True
            self.keeper.forget()
            return Notice("↻ Copilot's token had expired: renewed, sending again.")
        return self._without_tools(fault)

    def stream(self, request: Request, cancelled: Any) -> Any:
        self._renewed = False
        return super().stream(request, cancelled)

    def models(self) -> list[str]:
        """The chat models the account may pick (GET /models), each with its premium
        multiplier kept for `model_notes`."""
        client = self._get_client()
        try:
            raw = client.get("/models", cast_to=object)
        except Exception as err:
            raise self._classify(err) from None
        data = raw.get("data") if isinstance(raw, dict) else None
        out: list[str] = []
        facts: dict[str, Listed] = {}
        for m in data if isinstance(data, list) else []:
            if not isinstance(m, dict) or not isinstance(m.get("id"), str):
                continue
            facts[m["id"]] = Listed.of(m)
            caps: dict[str, Any] = m.get("capabilities") or {}
            caps = caps if isinstance(caps, dict) else {}
            if caps.get("type", "chat") != "chat" or m.get("model_picker_enabled") is False:
                continue
            if (m.get("policy") or {}).get("state") == "disabled":
                continue
            billing: dict[str, Any] = m.get("billing") or {}
            billing = billing if isinstance(billing, dict) else {}
            with contextlib.suppress(TypeError, ValueError):
                self.multipliers[m["id"]] = float(billing.get("multiplier", 0))
            out.append(m["id"])
        with _LISTED_LOCK:
            _LISTED[self._list_key] = facts
        return sorted(set(out))

    def model_notes(self) -> dict[str, str]:
        return {name: f"{m:g}x" for name, m in self.multipliers.items()}

    def prepare(self) -> None:
        """Find the sign-in and exchange it before anything is recorded; then learn the
        model list in the background (what each model can do, for the next message)."""
        self._get_client()
        self._learn_list(wait=False)
