"""Azure OpenAI (`azure`): Chat Completions through the openai SDK's AzureOpenAI client.

The request and reply are the openai provider's (providers/openai_api.py); what differs is
where they go and how they are signed: `{endpoint}/openai/deployments/{deployment}/chat/
completions?api-version=…`, with an `api-key` header (the key from $AZURE_OPENAI_API_KEY or
provider.api_key_cmd) or `Authorization: Bearer` with a Microsoft Entra ID token
(provider.entra_token_cmd, e.g. `az account get-access-token …`, or $AZURE_OPENAI_AD_TOKEN).
A token is run for again shortly before the expiry its JWT states (else every 45 minutes);
each key and token is registered with the redactor before it is used.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sightline.domain import secrets
from sightline.domain.config import ProviderConfig
from sightline.providers.base import ProviderError, key_from_cmd
from sightline.providers.openai_api import OpenAIProvider, _status_text, classify, resolve_api_key

DEFAULT_API_VERSION = "2024-10-21"  # the GA data-plane version with streamed usage
TOKEN_MARGIN_S = 300.0  # a token is fetched again this long before it expires
TOKEN_DEFAULT_LIFE_S = 45 * 60.0  # a token whose expiry cannot be read


def endpoint(cfg: ProviderConfig) -> str:
    """The resource endpoint (`https://NAME.openai.azure.com`): provider.base_url, else
    $AZURE_OPENAI_ENDPOINT; ProviderError when neither is set."""
    found = cfg.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
    if not found:
        raise ProviderError(
            "No Azure endpoint: set provider.base_url (https://NAME.openai.azure.com) or "
            "$AZURE_OPENAI_ENDPOINT."
        )
    # A URL copied with the deployment path in it still names the resource.
    return found.split("/openai/", 1)[0].rstrip("/")


def api_version(cfg: ProviderConfig) -> str:
    return cfg.api_version or os.environ.get("OPENAI_API_VERSION") or DEFAULT_API_VERSION


def jwt_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT (seconds since the epoch), or None when it has none."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        exp = json.loads(base64.urlsafe_b64decode(payload)).get("exp")
    except (ValueError, binascii.Error, AttributeError):
        return None
    return float(exp) if isinstance(exp, int | float) else None


def status_text(status: int, cfg: ProviderConfig) -> str:
    """Azure's faults, with Azure's fixes."""
    texts = {
        401: "Authentication failed (401): check $AZURE_OPENAI_API_KEY, provider.api_key_cmd "
        "or provider.entra_token_cmd (a key of this resource, or a token for "
        "https://cognitiveservices.azure.com)",
        403: "Permission denied (403): the identity needs the role 'Cognitive Services "
        "OpenAI User' on this resource, or the resource's network rules refuse this address",
        404: f"Not found (404): check provider.deployment ({cfg.deployment or cfg.model}), "
        "provider.base_url "
        f"and provider.api_version ({api_version(cfg)})",
    }
    return texts.get(status) or _status_text(status, cfg)


@dataclass
class EntraToken:
    """An Entra ID token from a command, run again before it expires (the SDK asks before
    each request, on the turn's thread)."""

    cmd: str | list[str]
    timeout_s: float
    _token: str = ""
    _renew_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> str:
        with self._lock:
            if not self._token or time.time() >= self._renew_at:
                token = key_from_cmd(self.cmd, self.timeout_s, "provider.entra_token_cmd")
                if not token:
                    raise ProviderError("provider.entra_token_cmd printed no token.")
                secrets.register(token)
                expiry = jwt_expiry(token)
                now = time.time()
                self._renew_at = (
                    expiry - TOKEN_MARGIN_S if expiry is not None else now + TOKEN_DEFAULT_LIFE_S
                )
                self._token = token
            return self._token


@dataclass
class AzureProvider(OpenAIProvider):
    """provider.deployment is where requests go; provider.model (default: the deployment's
    name) is the model it runs, for its capabilities and price."""

    _token: EntraToken | None = None

    @property
    def deployment(self) -> str:
        return self.cfg.deployment or self.cfg.model

    def credential_source(self) -> str:
        """Where the credential comes from (never its value), for errors and :checkhealth."""
        if self.cfg.entra_token_cmd:
            return "provider.entra_token_cmd"
        if secrets.env_secret("AZURE_OPENAI_AD_TOKEN"):
            return "$AZURE_OPENAI_AD_TOKEN"
        if secrets.env_secret("AZURE_OPENAI_API_KEY"):
            return "$AZURE_OPENAI_API_KEY"
        return "provider.api_key_cmd" if self.cfg.api_key_cmd else ""

    def _make_client(self) -> Any:
        import openai

        from sightline.providers.anthropic_api import _abortable_http_client

        address = endpoint(self.cfg)
        if not self.deployment:
            raise ProviderError("No Azure deployment: set provider.deployment.")
        auth: dict[str, Any] = {}
        if self.cfg.entra_token_cmd:
            self._token = EntraToken(self.cfg.entra_token_cmd, 10.0)
            auth["azure_ad_token_provider"] = self._token
        elif token := secrets.env_secret("AZURE_OPENAI_AD_TOKEN"):
            secrets.register(token)
            auth["azure_ad_token"] = token
        else:
            key = resolve_api_key(self.cfg)
            if not key:
                raise ProviderError(
                    "No credential for azure: set $AZURE_OPENAI_API_KEY, provider.api_key_cmd "
                    "or provider.entra_token_cmd."
                )
            auth["api_key"] = key
        http_client, self._abort = _abortable_http_client(openai.DefaultHttpxClient)
        return openai.AzureOpenAI(
            azure_endpoint=address,
            azure_deployment=self.deployment,
            api_version=api_version(self.cfg),
            http_client=http_client,
            max_retries=0,
            timeout=self.cfg.timeout_ms / 1000,
            **auth,
        )

    def _classify(self, err: BaseException) -> ProviderError:
        return classify(err, self.cfg, status_text)

    def base_url(self) -> str | None:
        try:
            return f"{endpoint(self.cfg)}/openai/deployments/{self.deployment}"
        except ProviderError:
            return None

    def models(self) -> list[str]:
        """No list: a deployment is what is called, and the data plane lists none. Its
        `deployments` operation ended with api-version 2023-03-15-preview; 2024-10-21 has
        only `GET /openai/models`, the base models the resource could deploy, which cannot
        be called by name. Deployments are listed by the management plane (Azure Resource
        Manager: subscription, resource group, an Entra token for management.azure.com),
        which the resource's key cannot reach. Said, so `:Sightline model` tells why."""
        raise ProviderError(
            "Azure lists no deployments through the resource's endpoint (only the Azure "
            "portal or az cognitiveservices account deployment list do): the model is "
            f"the deployment {self.deployment!r}; set provider.deployment to use another."
        )
