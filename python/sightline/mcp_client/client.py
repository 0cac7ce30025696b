"""Connections to MCP servers, on one asyncio loop on a thread of its own.

The SDK is asyncio (anyio): every connection lives in one task of that loop, which enters and
leaves the SDK's context managers itself (their cancel scopes must stay in one task). The
other threads — a turn's worker, the completion's background start — submit coroutines with
`asyncio.run_coroutine_threadsafe` and wait with a deadline; pynvim's loop thread only ever
reads the state or submits without waiting. Nothing here imports the SDK before a server is
started: it costs ~0.3 s of CPU.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sightline.domain import secrets, spawn
from sightline.domain.mcp_config import (
    ServerConfig,
    ServerConfigError,
    resolved_env,
    resolved_headers,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_PAGES = 50  # of tools or resources: a server that pages forever is cut off
PING_TIMEOUT_S = 3.0
STDERR_TAIL_LINES = 20


class McpFailure(Exception):
    """A server could not do what was asked; the text is for the user (no key, one line)."""


class Stopped(McpFailure):
    """The call was cancelled (the turn stopped, or the server was stopped)."""


class _Loop:
    """The one event loop, started on first use; a daemon thread, so it never keeps the core
    alive (the servers die with it: see domain/spawn.py)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="mcp-loop", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)


_loop: _Loop | None = None
_loop_lock = threading.Lock()


def event_loop() -> _Loop:
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = _Loop()
        return _loop


def wait(
    future: concurrent.futures.Future[T],
    timeout_s: float,
    on_cancel: Callable[[Callable[[], None]], None] | None = None,
) -> T:
    """The result of a submitted coroutine; it is cancelled when the deadline passes (and
    when `on_cancel`'s callback runs: a stopped turn)."""
    if threading.current_thread() is event_loop().thread:
        raise RuntimeError("wait() on the MCP loop itself would deadlock")
    if on_cancel is not None:

        def cancel() -> None:
            future.cancel()

        on_cancel(cancel)
    try:
        return future.result(timeout_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise
    except concurrent.futures.CancelledError:
        raise Stopped("stopped") from None


@dataclass
class Listing:
    tools: list[Any]
    resources: list[Any]
    server_name: str | None
    version: str | None
    prompts: list[Any] = field(default_factory=list)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(secrets.redact(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class Connection:
    """One running server: its SDK client, kept open by a task of the loop until stop()."""

    def __init__(
        self,
        cfg: ServerConfig,
        on_death: Callable[[Connection, str], None],
        wrap: Callable[[list[str]], list[str]] | None = None,
    ):
        self.cfg = cfg
        self._wrap = wrap  # the sandbox a server that opted in runs in (domain/sandbox.py)
        self.client: Any = None
        self.listing: Listing | None = None
        self._on_death = on_death
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._lifeline: spawn.Lifeline | None = None
        self._future: concurrent.futures.Future[None] | None = None
        self.dead = False

    # -- on the loop ---------------------------------------------------------------------

    async def serve(self, started: concurrent.futures.Future[Listing]) -> None:
        self._task = asyncio.current_task()
        self._stop = asyncio.Event()
        stack = contextlib.AsyncExitStack()
        try:
            try:
                self.client = await stack.enter_async_context(self._client(stack))
                if self._lifeline is not None:
                    self._lifeline.spawned()  # the server holds its end now
                listing = await self._list()
            except BaseException as err:
                await _close(stack)
                if not started.done():
                    started.set_exception(McpFailure(self._why(err)))
                if isinstance(err, asyncio.CancelledError):
                    raise
                return
            self.listing = listing
            started.set_result(listing)
            await self._stop.wait()
        finally:
            await _close(stack)

    def _client(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        from mcp.types import Implementation

        cfg = self.cfg
        info = Implementation(name="sightline", version="0.1.0")
        if cfg.url is not None:
            http = create_mcp_http_client(headers=resolved_headers(cfg))
            transport: Any = streamable_http_client(cfg.url, http_client=http)
            stack.push_async_callback(http.aclose)
        else:
            assert cfg.command is not None
            # The server's own process group, killed whole however the core ends: the SDK
            # spawns it, so the lifeline is its stderr, which the core reads to say why it
            # died (domain/spawn.py).
            lifeline = self._lifeline = spawn.Lifeline(spawn.STDERR)
            lifeline.read_lines(self._stderr.append)
            argv = [cfg.command, *cfg.args]
            shell, *args = lifeline.argv(self._wrap(argv) if self._wrap else argv)
            params = StdioServerParameters(command=shell, args=args, env=resolved_env(cfg))
            transport = stdio_client(params, errlog=lifeline.child)  # type: ignore[arg-type]
            stack.callback(lifeline.cut)
        return Client(transport, client_info=info, mode="legacy")

    async def _list(self) -> Listing:
        client = self.client
        caps = client.server_capabilities
        tools: list[Any] = []
        resources: list[Any] = []
        if caps.tools is not None:
            cursor = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                if not (cursor := page.next_cursor):
                    break
        if caps.resources is not None:
            cursor = None
            for _ in range(MAX_PAGES):
                rpage = await client.list_resources(cursor=cursor)
                resources.extend(rpage.resources)
                if not (cursor := rpage.next_cursor):
                    break
        prompts: list[Any] = []
        if caps.prompts is not None:
            cursor = None
            for _ in range(MAX_PAGES):
                ppage = await client.list_prompts(cursor=cursor)
                prompts.extend(ppage.prompts)
                if not (cursor := ppage.next_cursor):
                    break
        info = client.server_info
        name, version = (info.name, info.version) if info else (None, None)
        return Listing(tools, resources, name, version, prompts)

    def _why(self, err: BaseException) -> str:
        """Why the start failed, said once: the SDK nests the same error in task groups, so
        each distinct reason once, then the server's stderr tail once."""
        if isinstance(err, ServerConfigError):
            return str(err)
        reasons = list(dict.fromkeys(self._reasons(err)))
        return self._with_stderr("; ".join(reasons[:3]))

    def _reasons(self, err: BaseException) -> Iterator[str]:
        if isinstance(err, BaseExceptionGroup):
            for inner in err.exceptions:
                yield from self._reasons(inner)
        elif isinstance(err, asyncio.CancelledError):
            yield "it did not answer in time"
        elif isinstance(err, OSError):
            yield f"{err.strerror or err}" + (f": {err.filename}" if err.filename else "")
        elif type(err).__module__.startswith("mcp") and self._closed(err):
            yield "it exited"  # its stdout closed: the stderr tail says why
        else:
            yield f"{type(err).__name__}: {err}" if str(err) else type(err).__name__

    def _with_stderr(self, text: str) -> str:
        """`text`, then the last line the server wrote to its stderr (one line in all)."""
        tail = self.stderr_tail()
        return _one_line(text + (f"; its stderr: {tail}" if tail else ""))

    def stderr_tail(self) -> str:
        if self._lifeline is not None:
            self._lifeline.flushed()
        lines = [ln for ln in list(self._stderr) if ln.strip()]
        return _one_line(lines[-1]) if lines else ""

    async def call_tool(self, name: str, args: dict[str, Any], timeout_s: float) -> Any:
        from mcp import MCPError

        try:
            return await asyncio.wait_for(self.client.call_tool(name, args), timeout_s)
        except MCPError as err:
            if self._closed(err):
                self._died("it exited")
            raise McpFailure(_one_line(str(err))) from None

    async def read_resource(self, uri: str, timeout_s: float) -> Any:
        from mcp import MCPError

        try:
            return await asyncio.wait_for(self.client.read_resource(uri), timeout_s)
        except MCPError as err:
            if self._closed(err):
                self._died("it exited")
            raise McpFailure(_one_line(str(err))) from None

    async def get_prompt(self, name: str, args: dict[str, str], timeout_s: float) -> Any:
        from mcp import MCPError

        try:
            return await asyncio.wait_for(self.client.get_prompt(name, args), timeout_s)
        except MCPError as err:
            if self._closed(err):
                self._died("it exited")
            raise McpFailure(_one_line(str(err))) from None

    async def ping(self) -> bool:
        from mcp import MCPDeprecationWarning, MCPError

        # Removed in the 2026-07-28 protocol, kept by the legacy handshake this client uses.
        warnings.filterwarnings("ignore", "ping is removed", MCPDeprecationWarning)
        try:
            await asyncio.wait_for(self.client.send_ping(), PING_TIMEOUT_S)
        except (MCPError, TimeoutError) as err:
            self._died("it exited" if isinstance(err, MCPError) else "it stopped answering")
            return False
        return True

    @staticmethod
    def _closed(err: Any) -> bool:
        from mcp_types import CONNECTION_CLOSED

        return getattr(err, "code", None) == CONNECTION_CLOSED or "Connection closed" in str(err)

    def _died(self, how: str) -> None:
        if self.dead:
            return
        self.dead = True
        self._on_death(self, self._with_stderr(how))
        self.stop_soon()

    def stop_soon(self) -> None:
        """Close the connection (the SDK stops a stdio server's process group); safe from
        any thread."""
        stop = self._stop
        if self.listing is None and self._future is not None:
            self._future.cancel()  # still starting: cancel the start where it waits
        elif stop is not None:
            event_loop().loop.call_soon_threadsafe(stop.set)

    async def stop(self) -> None:
        self.stop_soon()
        if self._task is not None and self._task is not asyncio.current_task():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._task), 8.0)


async def _close(stack: contextlib.AsyncExitStack) -> None:
    try:
        await stack.aclose()
    except BaseException as err:  # a transport dying as it closes: nothing left to do
        log.debug("closing an MCP connection: %r", err)


def start(
    cfg: ServerConfig,
    on_death: Callable[[Connection, str], None],
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> tuple[Connection, concurrent.futures.Future[Listing]]:
    """Start a server in the background (its argv passed through `wrap`, the sandbox, when
    given); the future says when its tools are listed."""
    conn = Connection(cfg, on_death, wrap)
    started: concurrent.futures.Future[Listing] = concurrent.futures.Future()
    conn._future = event_loop().submit(conn.serve(started))
    return conn, started


def stop_all(connections: list[Connection], timeout_s: float = 5.0) -> None:
    if not connections or _loop is None:
        return

    async def stop() -> None:
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    deadline = time.monotonic() + timeout_s
    with contextlib.suppress(Exception):
        _loop.submit(stop()).result(max(0.1, deadline - time.monotonic()))
