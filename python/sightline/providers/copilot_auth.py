"""GitHub Copilot's credentials: the GitHub OAuth token (sightline's own device-flow sign-in,
or the one copilot.vim (or its Lua port) saved) and the short-lived Copilot API token it is
exchanged for, refreshed before it expires.

Endpoints, for a host `H` (`github.com`, or an Enterprise host): the device flow at
`https://H/login/device/code` and `https://H/login/oauth/access_token`, the exchange at
`https://api.H/copilot_internal/v2/token`; the chat API's address comes with the API token
(`endpoints.api`). A host given as a URL (`http://127.0.0.1:8000`) is used as it is for
both (a proxy, a test server).

Every token is registered with the redactor the moment it is read, so none reaches the log,
the history, the transcript or an error; the OAuth token sightline stores is written to the
user data dir with mode 0600 (atomically), and the API token is kept in memory only.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sightline.domain import paths, secrets
from sightline.providers.base import ProviderError

# The OAuth app GitHub's own Neovim plugin signs in with (copilot.vim and its Lua port): its
# tokens are the ones the exchange accepts, and the ones those plugins saved.
CLIENT_ID = "Iv1.b507a08c87ecfe98"
DEFAULT_HOST = "github.com"
DEFAULT_API = "https://api.githubcopilot.com"
# Refresh this long before the API token expires (it lives ~30 min): a request never
# starts with a token that could expire while it streams.
REFRESH_MARGIN_S = 120.0
HTTP_TIMEOUT_S = 15.0
HEADERS = {
    "accept": "application/json",
    "editor-version": "Neovim/0.11",
    "editor-plugin-version": "sightline/0.1",
    "user-agent": "sightline/0.1",
}
LOGIN = ":Sightline login copilot"


@dataclass(frozen=True)
class Host:
    """The addresses of one GitHub host."""

    name: str
    web: str  # device flow
    api: str  # token exchange

    @classmethod
    def of(cls, host: str | None) -> Host:
        host = (host or DEFAULT_HOST).strip().rstrip("/")
        if "://" in host:
            return cls(host, host, host)
        return cls(host, f"https://{host}", f"https://api.{host}")

    @property
    def default_chat_api(self) -> str:
        if self.name == DEFAULT_HOST:
            return DEFAULT_API
        return f"https://copilot-api.{self.name}" if "://" not in self.name else self.name


@dataclass(frozen=True)
class ApiToken:
    token: str
    expires_at: float  # seconds since the epoch
    refresh_at: float
    api: str  # the chat API's base address


@dataclass(frozen=True)
class DeviceCode:
    device_code: str
    user_code: str
    verification_uri: str
    interval: float
    expires_in: float


# -- where the OAuth token is ---------------------------------------------------------------


def store_path() -> Path:
    return paths.data_dir() / "copilot" / "oauth.json"


def copilot_vim_dir() -> Path:
    """The folder of copilot.vim and its Lua port under the user config dir."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or base
    return Path(base) / "github-copilot"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _token_in(data: Any, host: str) -> str | None:
    """An oauth_token for `host` in apps.json ("host:client_id" keys) or hosts.json."""
    if not isinstance(data, dict):
        return None
    for key, entry in data.items():
        if str(key) in (host, f"{host}:{CLIENT_ID}") and isinstance(entry, dict):
            token = entry.get("oauth_token")
            if isinstance(token, str) and token.strip():
                return token.strip()
    return None


def find_oauth_token(host: Host) -> tuple[str, str] | None:
    """(token, where it came from), sightline's own sign-in first; registered with the
    redactor. None when the user has signed in nowhere."""
    candidates = [
        (store_path(), "sightline's sign-in"),
        (copilot_vim_dir() / "apps.json", "copilot.vim's apps.json"),
        (copilot_vim_dir() / "hosts.json", "copilot.vim's hosts.json"),
    ]
    for path, where in candidates:
        token = _token_in(_read_json(path), host.name)
        if token:
            secrets.register(token)
            return token, where
    return None


def token_sources(host: Host) -> list[str]:
    """Where a token for `host` was found (for :checkhealth; never the token)."""
    out = []
    for path, where in (
        (store_path(), "sightline's sign-in"),
        (copilot_vim_dir() / "apps.json", "copilot.vim's apps.json"),
        (copilot_vim_dir() / "hosts.json", "copilot.vim's hosts.json"),
    ):
        if _token_in(_read_json(path), host.name):
            out.append(f"{where} ({path})")
    return out


def store_oauth_token(host: Host, token: str, user: str = "") -> Path:
    """Keep `token` for `host` in the user data dir, mode 0600 from the start (no moment
    when another user could read it), replaced atomically."""
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = _read_json(path)
    data = data if isinstance(data, dict) else {}
    data[host.name] = {"oauth_token": token, "user": user}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".oauth-", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


# -- HTTP -----------------------------------------------------------------------------------


def _http(method: str, url: str, **kw: Any) -> tuple[int, Any, Any]:
    """(status, JSON body or None, headers); a connection failure is a ProviderError."""
    import httpx2

    try:
        resp = httpx2.request(method, url, timeout=HTTP_TIMEOUT_S, **kw)
    except httpx2.HTTPError as err:
        raise ProviderError(
            secrets.redact(
                f"Could not reach {url.split('/')[2]} ({type(err).__name__}): "
                "check the network or provider.host."
            ),
            retryable=True,
        ) from None
    try:
        body = resp.json()
    except ValueError:
        body = None
    return resp.status_code, body, resp.headers


def start_device_flow(host: Host) -> DeviceCode:
    status, body, _ = _http(
        "POST",
        f"{host.web}/login/device/code",
        headers=HEADERS,
        data={"client_id": CLIENT_ID, "scope": "read:user"},
    )
    if status != 200 or not isinstance(body, dict) or "device_code" not in body:
        raise ProviderError(f"GitHub did not start the sign-in (HTTP {status}); try again.")
    return DeviceCode(
        device_code=str(body["device_code"]),
        user_code=str(body["user_code"]),
        verification_uri=str(body.get("verification_uri") or f"{host.web}/login/device"),
        interval=float(body.get("interval") or 5),
        expires_in=float(body.get("expires_in") or 900),
    )


def poll_device_flow(host: Host, code: DeviceCode, wait: Callable[[float], bool]) -> str:
    """The OAuth token once the user entered the code; `wait(s)` sleeps and returns True
    when the sign-in was cancelled. Raises ProviderError (denied, expired, cancelled)."""
    interval = code.interval
    deadline = time.monotonic() + code.expires_in
    while time.monotonic() < deadline:
        if wait(interval):
            raise ProviderError("The Copilot sign-in was cancelled.")
        status, body, _ = _http(
            "POST",
            f"{host.web}/login/oauth/access_token",
            headers=HEADERS,
            data={
                "client_id": CLIENT_ID,
                "device_code": code.device_code,
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            },
        )
        body = body if isinstance(body, dict) else {}
        token = body.get("access_token")
        if isinstance(token, str) and token:
            secrets.register(token)
            return token
        error = body.get("error")
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            interval = float(body.get("interval") or interval + 5)
            continue
        if error == "access_denied":
            raise ProviderError("The Copilot sign-in was declined on GitHub.")
        if error == "expired_token":
            break
        raise ProviderError(f"GitHub refused the sign-in ({error or f'HTTP {status}'}).")
    raise ProviderError(f"The sign-in code expired before it was entered: run {LOGIN} again.")


def exchange(host: Host, oauth: str, where: str) -> ApiToken:
    """The Copilot API token for the OAuth token; errors in the user's words."""
    status, body, headers = _http(
        "GET",
        f"{host.api}/copilot_internal/v2/token",
        headers={**HEADERS, "authorization": f"token {oauth}"},
    )
    body = body if isinstance(body, dict) else {}
    if status == 200 and isinstance(body.get("token"), str):
        token = str(body["token"])
        secrets.register(token)
        now = time.time()
        expires = float(body.get("expires_at") or now + 1500)
        refresh_in = body.get("refresh_in")
        refresh = now + float(refresh_in) if isinstance(refresh_in, int | float) else expires
        endpoints = body.get("endpoints")
        api = endpoints.get("api") if isinstance(endpoints, dict) else None
        return ApiToken(
            token,
            expires,
            min(refresh, expires - REFRESH_MARGIN_S),
            str(api or host.default_chat_api).rstrip("/"),
        )
    if status == 401:
        raise ProviderError(
            f"GitHub refused the Copilot sign-in from {where} (401): it was revoked or has "
            f"expired; run {LOGIN}."
        )
    if status in (403, 404):
        detail = body.get("message") or (body.get("error_details") or {}).get("message")
        raise ProviderError(
            secrets.redact(
                f"This GitHub account has no Copilot seat on {host.name} ({status}"
                + (f": {detail}" if detail else "")
                + "): subscribe at github.com/settings/copilot or ask your organisation, "
                f"then run {LOGIN} if you signed in with another account."
            )
        )
    if status == 429:
        after = headers.get("retry-after") if headers is not None else None
        raise ProviderError(
            "GitHub is rate limiting Copilot sign-ins (429): wait a moment, then send again.",
            retryable=True,
            retry_after=float(after) if after and str(after).isdigit() else None,
        )
    raise ProviderError(f"GitHub did not give a Copilot token (HTTP {status}); send again.")


class TokenKeeper:
    """The API token of one host, exchanged on first use and again before it expires."""

    def __init__(self, host: Host, clock: Callable[[], float] = time.time) -> None:
        self.host = host
        self.clock = clock
        self.where = ""
        self._oauth: str | None = None
        self._api: ApiToken | None = None
        self._lock = threading.Lock()

    def oauth(self) -> str:
        if self._oauth is None:
            found = find_oauth_token(self.host)
            if found is None:
                raise ProviderError(
                    f"Not signed in to GitHub Copilot on {self.host.name}: run {LOGIN} "
                    "(or sign in with copilot.vim / copilot.lua)."
                )
            self._oauth, self.where = found
        return self._oauth

    def current(self) -> ApiToken:
        """A token that stays valid for at least REFRESH_MARGIN_S."""
        with self._lock:
            if self._api is None or self.clock() >= self._api.refresh_at:
                self._api = exchange(self.host, self.oauth(), self.where)
            return self._api

    def forget(self) -> None:
        """Drop the API token (the server refused it): the next use exchanges again."""
        with self._lock:
            self._api = None
