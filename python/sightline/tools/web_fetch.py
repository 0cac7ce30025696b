"""One bounded HTTP GET for the network tools (fetch_url, web_search, `@url:`).

http.client rather than an HTTP library, because each hop must connect to the address that
was checked (domain/netrules.py) and to no other: the host is resolved here, every address
is checked, and the socket is opened to that address (TLS still verifies the host's name),
so a name that resolves anew to a private address between check and connect reaches
nothing. Redirects are followed here, at most MAX_REDIRECTS, each one checked the same way.
Proxies from the environment (http_proxy, https_proxy, no_proxy) are honoured: the proxy
then connects, and a host this machine cannot resolve is left to it.

Bounded: one deadline for the whole fetch (every hop, every read), and at most `max_bytes`
of body read, after which the connection is closed and the page says it was cut.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import ssl
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urljoin, urlsplit

from sightline.domain import netrules
from sightline.domain.errors import Refused

MAX_REDIRECTS = 5
CHUNK = 65536
USER_AGENT = "sightline (an editor's agent; fetches a page the user or model asked for)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchFailed(Exception):
    """The fetch could not complete (timeout, connection, TLS, protocol); the text says why."""


@dataclass
class Response:
    url: str  # where the body came from, after redirects
    status: int
    reason: str
    content_type: str  # the media type, lower case, without parameters ("" when none)
    charset: str | None
    body: bytes
    cut: bool  # more body was there than max_bytes
    redirects: list[str] = field(default_factory=list)  # the URLs that redirected, in order

    @property
    def size(self) -> int:
        return len(self.body)


# What the body of a response may be: the caller says which media types it reads, so a
# refused type is closed after its headers, its body never downloaded.
Accept = Callable[[str], str | None]  # media type → None to read it, or why it is refused


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    max_bytes: int


def get(
    url: str,
    limits: Limits,
    allow_hosts: Iterable[str],
    *,
    accept: Accept,
    follow_to: Callable[[SplitResult, SplitResult], str | None] | None = None,
    headers: Mapping[str, str] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    post: bytes | None = None,
) -> Response:
    """GET `url`, following up to MAX_REDIRECTS redirects. Raises Refused (a rule said no:
    nothing was sent to that address) or FetchFailed. `follow_to(first, next)` may refuse a
    redirect (why), beyond the address rules. `post`: a JSON body to POST instead (a search
    API that takes no GET; fetch_url never posts), dropped on a redirect as browsers do."""
    allowed = tuple(allow_hosts)
    deadline = time.monotonic() + limits.timeout_s
    first = netrules.parse_url(url)
    parts = first
    redirects: list[str] = []
    while True:
        if cancelled():
            raise FetchFailed("stopped with the turn")
        try:
            conn, resp = _request(parts, deadline, allowed, headers or {}, limits.timeout_s, post)
        except Refused as err:
            if not redirects:
                raise
            raise Refused(f"redirect to {parts.geturl()} {err.message}") from None
        try:
            location = resp.getheader("Location")
            if resp.status in _REDIRECTS and location:
                target = urljoin(parts.geturl(), location.strip())
                if len(redirects) >= MAX_REDIRECTS:
                    raise FetchFailed(
                        f"more than {MAX_REDIRECTS} redirects (the last one to {target})"
                    )
                try:
                    nxt = netrules.parse_url(target)
                except Refused as err:
                    raise Refused(f"redirect to {target} refused: {err.message}") from None
                why = follow_to(first, nxt) if follow_to is not None else None
                if why is not None:
                    raise Refused(f"redirect to {target} refused: {why}")
                redirects.append(parts.geturl())
                parts = nxt
                post = None
                continue
            media, charset = _content_type(resp.getheader("Content-Type"))
            refused = accept(media)
            if refused is not None:
                raise Refused(refused)
            body, cut = _read(resp, conn, deadline, limits)
            return Response(
                parts.geturl(), resp.status, resp.reason, media, charset, body, cut, redirects
            )
        finally:
            conn.close()


def _content_type(value: str | None) -> tuple[str, str | None]:
    if not value:
        return "", None
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip("\"'")
    return media.strip().lower(), charset


def _remaining(deadline: float, timeout_s: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchFailed(f"timed out after {timeout_s:g} s (tools.network.timeout_ms)")
    return left


def _proxy_for(parts: SplitResult) -> SplitResult | None:
    """The proxy the environment names for this URL (http_proxy, https_proxy, no_proxy)."""
    host = parts.hostname or ""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme.lower())
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    if "://" not in proxy:
        proxy = "http://" + proxy
    found = urlsplit(proxy)
    return found if found.hostname else None


def _resolve(host: str, port: int, deadline: float, timeout_s: float) -> list[str]:
    literal = netrules.literal(host)
    if literal is not None:
        return [str(literal)]
    _remaining(deadline, timeout_s)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise FetchFailed(f"{host} could not be resolved ({err.strerror or err})") from None
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


def _request(
    parts: SplitResult,
    deadline: float,
    allowed: tuple[str, ...],
    headers: Mapping[str, str],
    timeout_s: float,
    post: bytes | None = None,
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    host = parts.hostname or ""
    https = parts.scheme.lower() == "https"
    port = parts.port or (443 if https else 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    send = {
        "User-Agent": USER_AGENT,
        "Accept": "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.1",
        "Accept-Encoding": "identity",
        **headers,
    }
    proxy = _proxy_for(parts)
    timeout = _remaining(deadline, timeout_s)
    conn: http.client.HTTPConnection
    if proxy is None:
        addresses = _resolve(host, port, deadline, timeout_s)
        netrules.check_addresses(host, addresses, allowed)
        pinned = addresses[0]
        if https:
            conn = _PinnedHTTPS(host, port, pinned, timeout)
        else:
            conn = _PinnedHTTP(host, port, pinned, timeout)
    else:
        # The proxy connects; what this machine can tell of the host is still checked (a
        # literal address, `localhost`, a name it resolves), and the rest is the proxy's.
        literal = netrules.literal(host)
        addresses = [str(literal)] if literal is not None else []
        if literal is None:
            with contextlib.suppress(FetchFailed):
                addresses = _resolve(host, port, deadline, timeout_s)
        netrules.check_addresses(host, addresses, allowed)
        proxy_port = proxy.port or (443 if proxy.scheme == "https" else 80)
        auth = {}
        if proxy.username is not None:
            token = f"{proxy.username}:{proxy.password or ''}".encode()
            auth["Proxy-Authorization"] = "Basic " + base64.b64encode(token).decode()
        proxy_host = proxy.hostname or ""
        if https:
            conn = http.client.HTTPSConnection(
                proxy_host, proxy_port, timeout=timeout, context=ssl.create_default_context()
            )
            conn.set_tunnel(host, port, headers=auth)
        else:
            conn = http.client.HTTPConnection(proxy_host, proxy_port, timeout=timeout)
            path = parts._replace(fragment="").geturl()
            send.update(auth)
    try:
        if post is not None:
            send["Content-Type"] = "application/json"
        conn.request("GET" if post is None else "POST", path, body=post, headers=send)
        return conn, conn.getresponse()
    except TimeoutError:
        conn.close()
        raise FetchFailed(f"timed out after {timeout_s:g} s (tools.network.timeout_ms)") from None
    except ssl.SSLError as err:
        conn.close()
        raise FetchFailed(f"TLS failed with {host}: {err.reason or err}") from None
    except (OSError, http.client.HTTPException) as err:
        conn.close()
        raise FetchFailed(f"could not fetch from {host}: {_why(err)}") from None


def _why(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err) or type(err).__name__


def _read(
    resp: http.client.HTTPResponse,
    conn: http.client.HTTPConnection,
    deadline: float,
    limits: Limits,
) -> tuple[bytes, bool]:
    """At most max_bytes of the body, within the deadline (each read waits at most what is
    left of it, so a server that stalls or trickles is cut at the deadline)."""
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= limits.max_bytes:
            left = _remaining(deadline, limits.timeout_s)
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = resp.read1(min(CHUNK, limits.max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except TimeoutError:
        raise FetchFailed(
            f"timed out after {limits.timeout_s:g} s (tools.network.timeout_ms) "
            f"with {size} bytes read"
        ) from None
    except (OSError, http.client.HTTPException) as err:
        raise FetchFailed(f"the connection failed while reading: {_why(err)}") from None
    body = b"".join(chunks)
    if len(body) > limits.max_bytes:
        return body[: limits.max_bytes], True
    return body, False


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to the checked address, whatever the name resolves to by then."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """The same over TLS, the certificate checked against the host's name."""

    def __init__(self, host: str, port: int, address: str, timeout: float):
        self._tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)
