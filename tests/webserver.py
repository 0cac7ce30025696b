"""A loopback web server for the network tools' tests (fetch_url, web_search, `@url:`).

    with WebServer() as web:
        web.page("/doc", "<html>…</html>")                  # text/html
        web.page("/data.json", '{"a": 1}', "application/json")
        web.redirect("/old", "/doc")                        # 302 (a relative Location)
        web.big("/huge", 50 * 2**20)                        # that many bytes of text/plain
        web.stall("/slow")                                  # headers, then nothing
        url = web.url("/doc")                               # http://127.0.0.1:PORT/doc

Every request is recorded (`requests`: method and path), so a test can say what was never
sent. As a proxy (`proxy=True`) it answers any absolute URL itself (`GET http://host/path`)
and records the host asked for. Bounded: a stalled answer waits at most STALL_S, and
stops as soon as the server closes.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

STALL_S = 20.0


@dataclass
class Seen:
    method: str
    path: str  # the path (and query) asked for; a proxied request's whole URL
    headers: dict[str, str]
    body: bytes = b""


Route = Callable[["_Handler"], None]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _route(self) -> None:
        web = self.server.web
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size) if size else b""
        web.requests.append(Seen(self.command, self.path, dict(self.headers.items()), body))
        path = self.path
        if path.startswith("http://"):
            path = urlsplit(path)._replace(scheme="", netloc="").geturl() or "/"
        route = web.routes.get(urlsplit(path).path)
        if route is None:
            self.answer(404, "text/plain", b"not found")
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            route(self)

    do_GET = _route
    do_POST = _route
    do_HEAD = _route

    def answer(self, status: int, ctype: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    web: WebServer


class WebServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Seen] = []
        self.closed = threading.Event()
        self.sent = 0  # bytes a big() route managed to write
        self._server = _Server((host, 0), _Handler)
        self._server.web = self
        self.host = host
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.closed.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        return [urlsplit(r.path).path for r in self.requests]

    def page(self, path: str, body: str | bytes, ctype: str = "text/html; charset=utf-8") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = lambda h: h.answer(200, ctype, data)

    def status(self, path: str, status: int, body: str, ctype: str = "text/plain") -> None:
        self.routes[path] = lambda h: h.answer(status, ctype, body.encode())

    def json(self, path: str, handler: Callable[[dict[str, list[str]]], Any]) -> None:
        """A JSON API: `handler(query)` returns the document to answer with."""

        def route(h: _Handler) -> None:
            h.answer(200, "application/json", json.dumps(handler(h.query())).encode())

        self.routes[path] = route

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = lambda h: h.answer(status, "text/plain", b"moved", Location=location)

    def big(self, path: str, size: int, ctype: str = "text/plain") -> None:
        """`size` bytes of text, written in chunks until the client stops reading."""

        def route(h: _Handler) -> None:
            h.send_response(200)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(size))
            h.end_headers()
            chunk = (b"x" * 1023 + b"\n") * 64
            left = size
            while left > 0 and not self.closed.is_set():
                part = chunk[: min(len(chunk), left)]
                h.wfile.write(part)
                self.sent += len(part)
                left -= len(part)

        self.routes[path] = route

    def stall(self, path: str, body_first: bytes = b"") -> None:
        """Headers (and `body_first`), then nothing until the client gives up."""

        def route(h: _Handler) -> None:
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", "1000000")
            h.end_headers()
            h.wfile.write(body_first)
            h.wfile.flush()
            with contextlib.suppress(OSError):
                h.connection.settimeout(STALL_S)
                h.connection.recv(1)  # returns when the client closes
            self.closed.wait(0)

        self.routes[path] = route
