"""The `copilot` provider: GitHub Copilot's chat API, which speaks Chat Completions, so this
is the openai provider (the same mapping, stream, retries and Stop) with Copilot's own
credentials and headers.

The key is the short-lived Copilot API token (providers/copilot_auth.py), exchanged from
the user's GitHub sign-in and renewed before it expires: each request asks the keeper for a
token, so a conversation that outlives one token goes on with the next. A token the server
refuses all the same (401: revoked, or expired early) is dropped and the request tried once
more with a fresh one. The address is the one the token names (`endpoints.api`), unless
provider.base_url says otherwise; `provider.host` is the GitHub host (Enterprise).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from sightline.domain import secrets
from sightline.providers import copilot_auth
from sightline.providers.base import Capabilities, Notice, ProviderError, Request
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
        return Capabilities(thinking="effort", subscription=True).for_model(self.cfg.model)

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
        return {"x-initiator": initiator(request)}

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
        for m in data if isinstance(data, list) else []:
            if not isinstance(m, dict) or not isinstance(m.get("id"), str):
                continue
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
        return sorted(set(out))

    def model_notes(self) -> dict[str, str]:
        return {name: f"{m:g}x" for name, m in self.multipliers.items()}

    def prepare(self) -> None:
        """Find the sign-in and exchange it before anything is recorded."""
        self._get_client()
