"""`sightline-mcp`: an MCP stdio server that lets external agents point at code in Neovim.

Two tools only, never a write or exec tool: `reveal_editor_range` (scroll + transient
highlight, cursor and selection untouched) and `go_to_position` (move the cursor, select).
Both call the plugin's Lua (`require('sightline.reveal')`) in the Neovim at `$NVIM` or
`--server ADDR`, so that Neovim must have sightline on its runtimepath.

pynvim's blocking API cannot run inside the SDK's event loop, so one worker thread owns the
Neovim connection; tool handlers hand it calls through a queue and await a future.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

from sightline.tools import view

REVEAL_TOOL: dict[str, Any] = view.mcp_spec(view.REVEAL)
GOTO_TOOL: dict[str, Any] = view.mcp_spec(view.GO_TO)
LUA_CALL = view.LUA_CALL


class NvimWorker:
    """One thread owning the pynvim connection; other threads submit calls to it."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._calls: queue.Queue[tuple[Callable[[Any], Any], concurrent.futures.Future[Any]] | None]
        self._calls = queue.Queue()
        self._nvim: Any = None
        self._thread = threading.Thread(target=self._run, name="sightline-nvim", daemon=True)
        self._thread.start()

    def _connect(self) -> Any:
        import pynvim

        addr = self.address
        host, _, port = addr.rpartition(":")
        if not os.path.exists(addr) and host and port.isdigit():
            return pynvim.attach("tcp", address=host, port=int(port))
        return pynvim.attach("socket", path=addr)

    def _run(self) -> None:
        while (item := self._calls.get()) is not None:
            fn, fut = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                if self._nvim is None:
                    self._nvim = self._connect()
                fut.set_result(fn(self._nvim))
            except Exception as err:
                # A dropped connection is re-established on the next call.
                self._drop()
                fut.set_exception(err)
        self._drop()

    def _drop(self) -> None:
        nvim, self._nvim = self._nvim, None
        if nvim is not None:
            with contextlib.suppress(Exception):
                nvim.close()

    def submit(self, fn: Callable[[Any], Any]) -> concurrent.futures.Future[Any]:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._calls.put((fn, fut))
        return fut

    def close(self, timeout: float = 2.0) -> None:
        self._calls.put(None)
        self._thread.join(timeout)


async def call_lua(
    worker: NvimWorker, fn: str, args: dict[str, Any], timeout: float
) -> tuple[str, bool]:
    """(text, is_error) of reveal()/go_to_position() in Neovim."""
    fut = worker.submit(lambda nvim: nvim.exec_lua(LUA_CALL, fn, args))
    try:
        # Neovim answers API calls from its main loop: while it is busy, or waits for a key
        # at a prompt, the call waits too. Answer the agent instead of hanging; the
        # late result is dropped.
        result = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout)
    except TimeoutError:
        return (
            f"Neovim did not answer within {timeout:g} s (is it busy or waiting for input?)",
            True,
        )
    except Exception as err:
        return f"cannot reach Neovim at {worker.address}: {err}", True
    text = result if isinstance(result, str) else f"unexpected answer from Neovim: {result!r}"
    return text, not text.startswith("OK")


def build_server(worker: NvimWorker, timeout: float = 10.0) -> Any:
    """The low-level SDK server with exactly the two tools."""
    from mcp import types
    from mcp.server.lowlevel import Server

    tools = [types.Tool.model_validate(REVEAL_TOOL), types.Tool.model_validate(GOTO_TOOL)]
    lua_fn = {"reveal_editor_range": "reveal", "go_to_position": "go_to_position"}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        fn = lua_fn.get(params.name)
        if fn is None:
            text, is_error = f"unknown tool {params.name!r}", True
        else:
            text, is_error = await call_lua(worker, fn, dict(params.arguments or {}), timeout)
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
        return types.CallToolResult(content=content, is_error=is_error)

    return Server(
        "sightline",
        version=_version(),
        instructions=(
            "Tools to point at code in the user's Neovim. Prefer reveal_editor_range to show "
            "code: it never disturbs the user's cursor, selection or buffer."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("sightline")
    except Exception:
        return "0"


async def serve(address: str, timeout: float) -> None:
    from mcp.server.stdio import stdio_server

    worker = NvimWorker(address)
    try:
        server = build_server(worker, timeout)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        worker.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sightline-mcp",
        description="MCP stdio server: reveal_editor_range and go_to_position in a running Neovim.",
    )
    parser.add_argument(
        "--server",
        metavar="ADDR",
        help="Neovim's server address (a socket path or host:port); default: $NVIM",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a tool call waits for Neovim (default: 10)",
    )
    args = parser.parse_args(argv)
    address = args.server or os.environ.get("NVIM")
    if not address:
        sys.stderr.write(
            "sightline-mcp: no Neovim to attach to: run it from Neovim's :terminal (which sets "
            "$NVIM) or pass --server ADDR (see :echo v:servername in that Neovim)\n"
        )
        return 2
    # pynvim takes the thread that first imports it for the main thread (and installs signal
    # handlers from it), so import it here, not in the worker.
    import pynvim  # noqa: F401

    try:
        import anyio
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        sys.stderr.write(
            "sightline-mcp: the optional 'mcp' package is not installed; "
            "install it with: pip install 'sightline[mcp]'\n"
        )
        return 2
    try:
        anyio.run(serve, address, args.timeout)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
