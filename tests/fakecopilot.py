"""A loopback fake of GitHub Copilot for the `copilot` provider: GitHub's device flow, the
Copilot token exchange, and Copilot's chat and models endpoints (Chat Completions, streamed
as tests/fakeopenai.py streams them: Copilot's chat API is OpenAI-compatible).

Usage::

    with FakeCopilot() as gh:                 # host = gh.base_url (a URL host: one origin)
        gh.script(fo.text("hi"))              # the chat replies, as for FakeOpenAI
        oauth = gh.grant()                    # a signed-in user's OAuth token

The wire, as GitHub documents the device flow (RFC 8628) and as Copilot's clients use it:

* `POST /login/device/code` (form: client_id, scope) → `{device_code, user_code,
  verification_uri, expires_in, interval}`;
* `POST /login/oauth/access_token` (form: client_id, device_code, grant_type =
  urn:ietf:params:oauth:grant-type:device_code, `accept: application/json`) →
  `{error: authorization_pending}` until the user entered the code (`pending_polls` answers,
  one `slow_down` first when `slow_down`), then `{access_token, token_type, scope}`;
  `access_denied` when `deny`; a poll sooner than `interval` after the last is `slow_down`;
* `GET /copilot_internal/v2/token` (`authorization: token <oauth>`) → `{token, expires_at,
  refresh_in, endpoints: {api}}`; 401 `Bad credentials` for an unknown OAuth token, 403
  with `error_details` when the account has no Copilot seat (`seat=False`);
* `POST /chat/completions` (`authorization: Bearer <api token>`, `copilot-integration-id`
  and `editor-version` required: 400 without) and `GET /models`; an API token past its
  `expires_at` (by `clock`, which tests may move) is 401 `unauthorized: token expired`;
* images: OpenAI-style `image_url` data-URL parts, only for a model whose list entry says
  `capabilities.supports.vision`, only with the request header `Copilot-Vision-Request:
  true` (400 otherwise, as Copilot answers), within the entry's `limits.vision`
  (`max_prompt_images`, `max_prompt_image_size` in bytes, `supported_media_types`).
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakeapi import Recorded, _Handler
from tests.fakeopenai import FakeOpenAI

CLIENT_ID = "Iv1.b507a08c87ecfe98"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"
CHAT_ROUTE = "/v1/chat/completions"  # where the OpenAI fake serves a chat


# What Copilot's list reports of a vision model (the shape its entries have).
VISION_LIMITS = {
    "max_prompt_image_size": 3_145_728,
    "max_prompt_images": 1,
    "supported_media_types": ["image/jpeg", "image/png", "image/webp", "image/gif"],
}

MODELS = [
    {
        "id": "gpt-4.1",
        "name": "GPT-4.1",
        "model_picker_enabled": True,
        "capabilities": {
            "type": "chat",
            "supports": {"tool_calls": True, "streaming": True, "vision": True},
            "limits": {"max_context_window_tokens": 128_000, "vision": VISION_LIMITS},
        },
        "billing": {"is_premium": False, "multiplier": 0},
        "policy": {"state": "enabled"},
    },
    {
        "id": "claude-sonnet-4",
        "name": "Claude Sonnet 4",
        "model_picker_enabled": True,
        "capabilities": {
            "type": "chat",
            "supports": {"tool_calls": True, "vision": True},
            "limits": {"vision": {**VISION_LIMITS, "max_prompt_images": 5}},
        },
        "billing": {"is_premium": True, "multiplier": 1},
        "policy": {"state": "enabled"},
    },
    {
        # No `vision` in supports: Copilot refuses its image parts (sightline's table says
        # o3-mini sees, as o3 does: the list is what decides).
        "id": "o3-mini",
        "name": "o3-mini",
        "model_picker_enabled": True,
        "capabilities": {"type": "chat", "supports": {"tool_calls": True, "streaming": True}},
        "billing": {"is_premium": False, "multiplier": 0},
        "policy": {"state": "enabled"},
    },
    {
        "id": "o3",
        "name": "o3",
        "model_picker_enabled": True,
        "capabilities": {"type": "chat", "supports": {"tool_calls": True}},
        "billing": {"is_premium": True, "multiplier": 0.33},
        "policy": {"state": "disabled"},
    },
    {
        "id": "text-embedding-3-small",
        "model_picker_enabled": False,
        "capabilities": {"type": "embeddings"},
    },
]


class FakeCopilot(FakeOpenAI):
    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        token_ttl: float = 1800,
        seat: bool = True,
        interval: float = 0.01,
    ) -> None:
        self.clock = clock
        self.token_ttl = token_ttl
        self.seat = seat
        self.interval = interval
        self.pending_polls = 1
        self.slow_down = False
        self.deny = False
        self.oauth_tokens: set[str] = set()
        self.api_tokens: dict[str, float] = {}  # token → expires_at
        self.exchanges: list[str] = []  # the OAuth token of each exchange
        self.polls = 0
        self._device_codes: dict[str, float] = {}  # device_code → last poll (monotonic)
        self._n = itertools.count(1)
        super().__init__(api_key=None, require_key=True, models=[str(m["id"]) for m in MODELS])

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeCopilot:
        return self

    def grant(self) -> str:
        """An OAuth token of a signed-in user (as copilot.vim would have saved it)."""
        token = f"gho_fake{next(self._n):04d}oauthtoken"
        self.oauth_tokens.add(token)
        return token

    def chats(self) -> list[Recorded]:
        # (a chat is recorded under the OpenAI fake's route until its reply is sent, and
        # the client may have read that reply already: both names are the one request)
        return [r for r in self.requests if r.path in ("/chat/completions", CHAT_ROUTE)]

    def wait_for_requests(self, n: int, timeout: float = 10) -> list[Recorded]:
        with self._cond:
            ok = self._cond.wait_for(lambda: len(self.chats()) >= n, timeout)
            if not ok:
                raise AssertionError(f"expected {n} chat request(s), got {len(self.chats())}")
            return self.chats()

    def completions(self) -> list[Recorded]:
        return self.chats()

    # -- handler side ------------------------------------------------------------------------

    def _respond(self, h: _Handler) -> None:
        url = urlsplit(h.path)
        headers = {k.lower(): v for k, v in h.headers.items()}
        if url.path in ("/chat/completions", "/models"):
            return self._copilot_api(h, url.path, headers)
        raw = h.read_body()
        form = {k: v[0] for k, v in parse_qs(raw.decode(errors="replace")).items()}
        if not form and raw.strip().startswith(b"{"):
            form = json.loads(raw)
        with self._cond:
            self.requests.append(Recorded(h.command, url.path, headers, form))
            self._cond.notify_all()
        if (h.command, url.path) == ("POST", "/login/device/code"):
            return self._device_code(h, form)
        if (h.command, url.path) == ("POST", "/login/oauth/access_token"):
            return self._access_token(h, form, headers)
        if (h.command, url.path) == ("GET", "/copilot_internal/v2/token"):
            return self._exchange(h, headers)
        h.send_json(404, {"message": "Not Found"}, {})

    def _device_code(self, h: _Handler, form: dict[str, Any]) -> None:
        if form.get("client_id") != CLIENT_ID:
            return h.send_json(400, {"error": "unauthorized_client"}, {})
        code = f"dc{next(self._n):06d}"
        self._device_codes[code] = 0.0
        h.send_json(
            200,
            {
                "device_code": code,
                "user_code": "WDJB-MJHT",
                "verification_uri": f"{self.base_url}/login/device",
                "expires_in": 900,
                "interval": self.interval,
            },
            {},
        )

    def _access_token(self, h: _Handler, form: dict[str, Any], headers: dict[str, str]) -> None:
        self.polls += 1
        if "application/json" not in headers.get("accept", ""):
            # Without it GitHub answers form-encoded: a client that parses JSON breaks.
            return h.send_json(406, {"error": "not_acceptable"}, {})
        code = str(form.get("device_code"))
        if form.get("client_id") != CLIENT_ID or form.get("grant_type") != GRANT:
            return h.send_json(200, {"error": "unsupported_grant_type"}, {})
        if code not in self._device_codes:
            return h.send_json(200, {"error": "bad_verification_code"}, {})
        now = time.monotonic()
        too_soon = now - self._device_codes[code] < self.interval * 0.9
        self._device_codes[code] = now
        if self.slow_down or too_soon:
            self.slow_down = False
            return h.send_json(200, {"error": "slow_down", "interval": self.interval}, {})
        if self.deny:
            return h.send_json(200, {"error": "access_denied"}, {})
        if self.pending_polls > 0:
            self.pending_polls -= 1
            return h.send_json(200, {"error": "authorization_pending"}, {})
        del self._device_codes[code]
        token = self.grant()
        h.send_json(200, {"access_token": token, "token_type": "bearer", "scope": "read:user"}, {})

    def _exchange(self, h: _Handler, headers: dict[str, str]) -> None:
        auth = headers.get("authorization", "")
        oauth = auth.split(" ", 1)[1] if " " in auth else ""
        self.exchanges.append(oauth)
        if oauth not in self.oauth_tokens:
            return h.send_json(401, {"message": "Bad credentials"}, {})
        if not self.seat:
            details = {
                "message": "You do not have access to GitHub Copilot.",
                "title": "Copilot is not enabled",
            }
            return h.send_json(403, {"error_details": details, "message": "Forbidden"}, {})
        expires = int(self.clock() + self.token_ttl)
        token = f"tid=fake{next(self._n):04d};exp={expires};sku=copilot_fake:apitoken"
        self.api_tokens[token] = expires
        body = {
            "token": token,
            "expires_at": expires,
            "refresh_in": int(self.token_ttl) - 300,
            "endpoints": {"api": self.base_url},
        }
        h.send_json(200, body, {})

    def _copilot_api(self, h: _Handler, path: str, headers: dict[str, str]) -> None:
        auth = headers.get("authorization", "")
        token = auth[7:] if auth[:7].lower() == "bearer " else ""
        expires = self.api_tokens.get(token)
        if expires is None or self.clock() >= expires:
            h.read_body()
            with self._cond:
                self.requests.append(Recorded(h.command, path, headers, None))
                self._cond.notify_all()
            why = "unauthorized: token expired" if expires else "unauthorized: bad token"
            return h.send_json(401, {"error": {"message": why, "code": "unauthorized"}}, {})
        for needed in ("copilot-integration-id", "editor-version"):
            if not headers.get(needed):
                h.read_body()
                return h.send_json(400, {"error": {"message": f"missing {needed} header"}}, {})
        if path == "/models":
            with self._cond:
                self.requests.append(Recorded(h.command, path, headers, None))
            return h.send_json(200, {"data": MODELS, "object": "list"}, {})
        raw = h.read_body()
        if problem := self._vision_problem(raw, headers):
            with self._cond:
                self.requests.append(Recorded(h.command, path, headers, json.loads(raw)))
                self._cond.notify_all()
            return h.send_json(400, {"error": {"message": problem, "code": "bad_request"}}, {})
        h.read_body = lambda: raw  # type: ignore[method-assign]
        h.path = CHAT_ROUTE  # the OpenAI fake's route: its validation and stream
        super()._respond(h)
        with self._cond:
            last = self.requests[-1]
            self.requests[-1] = Recorded(last.method, path, last.headers, last.body, last.query)
            self._cond.notify_all()

    def _vision_problem(self, raw: bytes, headers: dict[str, str]) -> str | None:
        """Copilot's rules for image parts (the OpenAI fake checks their data URLs)."""
        try:
            body = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(body, dict):
            return None
        urls = [
            str((part.get("image_url") or {}).get("url", ""))
            for msg in body.get("messages") or []
            if isinstance(msg, dict) and isinstance(msg.get("content"), list)
            for part in msg["content"]
            if isinstance(part, dict) and part.get("type") == "image_url"
        ]
        if not urls:
            return None
        if headers.get("copilot-vision-request") != "true":
            return "missing required Copilot-Vision-Request header for vision requests"
        entry = next((m for m in MODELS if m["id"] == body.get("model")), None)
        caps: Any = (entry or {}).get("capabilities") or {}
        if not (caps.get("supports") or {}).get("vision"):
            return f"model {body.get('model')} does not support vision (image inputs)"
        limits = (caps.get("limits") or {}).get("vision") or {}
        if len(urls) > limits.get("max_prompt_images", len(urls)):
            return f"too many images: at most {limits['max_prompt_images']} per request"
        for url in urls:
            found = re.match(r"data:([^;]+);base64,(.*)", url, re.S)
            if found is None:
                continue  # the OpenAI fake says what is wrong with it
            if found[1] not in limits.get("supported_media_types", [found[1]]):
                return f"unsupported image media type {found[1]}"
            size = len(base64.b64decode(found[2]))
            if size > limits.get("max_prompt_image_size", size):
                return f"image too large: {size} bytes (at most {limits['max_prompt_image_size']})"
        return None

    def _auth_problem(self, headers: Any) -> str | None:
        return None  # checked above, by the token's expiry


@pytest.fixture
def fake_copilot() -> Iterator[FakeCopilot]:
    with FakeCopilot() as server:
        yield server
    assert not server.errors, "fake Copilot crashed:\n" + "\n".join(server.errors)
