"""`sightline-mcp`: an MCP stdio server that lets external agents point at code in Neovim.

Three tools, never a write or exec tool: `reveal_editor_range` (scroll + transient
highlight, cursor and selection untouched; flat arguments or the seed's `anchor_json`),
`reveal_attachment` (a transcript chip by id) and `go_to_position` (move the cursor, select).
All go through the typed editor port (editor/port.py `NvimEditor`, the core's own path to
lua/sightline/port.lua) in the Neovim at `$NVIM` or `--server ADDR`, so that Neovim must have
sightline on its runtimepath. No core runs here and none is started: chip ids resolve in
Neovim (lua/sightline/ui/chips.lua), Python members here with `pyresolve`.

pynvim's blocking API cannot run inside the SDK's event loop, so one worker thread owns the
Neovim connection; tool handlers hand it calls through a queue and await a future. Each call
carries the port's deadline (editor/port.py `deadline_after`): once it has passed, the call is
dropped here or refused by the Lua side, so a call answered "did not answer" (the port's
`late` wording) never acts later.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import copy
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from sightline.editor import port as editor
from sightline.tools import view

ANCHOR_KEYS = ("file_path", "start_line", "end_line", "member_key", "syntax_scope")
# The seed's wire spells the anchor's fields in camelCase; both are taken.
ANCHOR_ALIASES = {
    "filePath": "file_path",
    "startLine": "start_line",
    "endLine": "end_line",
    "memberKey": "member_key",
    "syntaxScope": "syntax_scope",
}


def _reveal_mcp_def() -> dict[str, Any]:
    """reveal_editor_range for MCP: the agent's flat arguments, or one `anchor_json`."""
    d = copy.deepcopy(view.REVEAL_DEF)
    # The seed's clients send the anchor as JSON text, the MCP Inspector (2.x) as the object
    # itself: both are taken.
    d["inputSchema"]["properties"]["anchor_json"] = {
        "anyOf": [{"type": "object"}, {"type": "string"}],
        "description": (
            "Instead of the flat arguments: one object {file_path, start_line, end_line, "
            "member_key?, syntax_scope?} (an attachment anchor), or its JSON text. "
            "duration_ms may still be given."
        ),
    }
    d["inputSchema"]["required"] = []
    d["description"] += " Give either the flat arguments or anchor_json."
    return d


REVEAL_DEF = _reveal_mcp_def()
TOOL_DEFS: dict[str, tuple[dict[str, Any], view.ViewFn]] = {
    "reveal_editor_range": (REVEAL_DEF, "reveal"),
    "reveal_attachment": (view.ATTACHMENT_DEF, "reveal_attachment"),
    "go_to_position": (view.GOTO_DEF, "go_to_position"),
}
REVEAL_TOOL: dict[str, Any] = {
    "name": REVEAL_DEF["name"],
    "description": REVEAL_DEF["description"],
    "inputSchema": REVEAL_DEF["inputSchema"],
}
ATTACHMENT_TOOL: dict[str, Any] = view.mcp_spec(view.ATTACHMENT)
GOTO_TOOL: dict[str, Any] = view.mcp_spec(view.GO_TO)

NO_ADDRESS = (
    "sightline-mcp has no Neovim to attach to: run it from Neovim's :terminal (which sets "
    "$NVIM) or pass --server ADDR (see :echo v:servername in that Neovim); with the MCP "
    "Inspector put -- before the server's own arguments: "
    "npx @modelcontextprotocol/inspector -- sightline-mcp --server ADDR"
)


def expand_anchor(args: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """reveal_editor_range's arguments with `anchor_json` unpacked into the flat ones."""
    raw = args.get("anchor_json")
    if raw is None:
        return args, ""
    clash = sorted(k for k in ANCHOR_KEYS if args.get(k) is not None)
    if clash:
        return None, f"give either anchor_json or {', '.join(clash)}, not both"
    anchor = raw
    if isinstance(raw, str):
        try:
            anchor = json.loads(raw)
        except ValueError as bad:
            return None, f"anchor_json is not valid JSON: {bad}"
    if not isinstance(anchor, dict):
        return None, (
            "anchor_json must be one JSON object {file_path, start_line, end_line, …} "
            "or its JSON text"
        )
    flat: dict[str, Any] = {k: v for k, v in args.items() if k != "anchor_json"}
    for key, value in anchor.items():
        name = ANCHOR_ALIASES.get(str(key), str(key))
        if name not in ANCHOR_KEYS:
            return None, (
                f"anchor_json: unknown field {key} (an anchor has: {', '.join(ANCHOR_KEYS)})"
            )
        if name == "syntax_scope" and isinstance(value, dict):
            value = [value]  # one step given as an object
        flat[name] = value
    checked, why = view.check_args(view.REVEAL_DEF, flat)
    if checked is None:
        return None, f"anchor_json: {why}"
    return checked, ""


class NvimWorker:
    """One thread owning the pynvim connection; other threads submit calls to it."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._calls: queue.Queue[
            tuple[Callable[[Any], Any], concurrent.futures.Future[Any], float] | None
        ] = queue.Queue()
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
            fn, fut, deadline = item
            # A call that waited here past its deadline was answered already: drop it.
            if not fut.set_running_or_notify_cancel():
                continue
            if time.time() > deadline:
                fut.set_exception(TimeoutError())
                continue
            try:
                if self._nvim is None:
                    self._nvim = self._connect()
                fut.set_result(fn(self._nvim))
            except editor.EditorError as err:  # Neovim answered: the connection is fine
                fut.set_exception(err)
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

    def submit(
        self, fn: Callable[[Any], Any], deadline: float = float("inf")
    ) -> concurrent.futures.Future[Any]:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._calls.put((fn, fut, deadline))
        return fut

    def close(self, timeout: float = 2.0) -> None:
        self._calls.put(None)
        self._thread.join(timeout)


async def call_lua(
    worker: NvimWorker, fn: view.ViewFn, args: dict[str, Any], timeout: float
) -> tuple[str, bool]:
    """(text, is_error) of reveal()/reveal_attachment()/go_to_position() in Neovim."""
    deadline = editor.deadline_after(timeout)

    def run(nvim: Any) -> str:
        # The agent's own path: the typed port, every call carrying this call's deadline; a
        # Python member is resolved here (pyresolve), never by starting a core.
        return view.call(editor.NvimEditor.direct(nvim, deadline, timeout), fn, args)

    fut = worker.submit(run, deadline)
    try:
        # Neovim answers API calls from its main loop: while it is busy, or waits for a key
        # at a prompt, the call waits too. Answer the agent instead of hanging; the call
        # carries its deadline, so Neovim does nothing with it when it gets to it late.
        result = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout)
    except TimeoutError:
        fut.cancel()  # still queued here: never sent
        return editor.late(timeout), True
    except editor.EditorError as err:
        return str(err), True
    except Exception as err:
        return f"cannot reach Neovim at {worker.address}: {err}", True
    return view.answer(result)


async def call_tool_text(
    worker: NvimWorker | None, name: str, arguments: Any, timeout: float
) -> tuple[str, bool]:
    """A tool call's (text, is_error): arguments checked here, then run in Neovim."""
    spec = TOOL_DEFS.get(name)
    if spec is None:
        return f"unknown tool {name!r} (tools: {', '.join(TOOL_DEFS)})", True
    definition, fn = spec
    args, err = view.check_args(definition, {} if arguments is None else arguments)
    if args is not None and name == "reveal_editor_range":
        args, err = expand_anchor(args)
    if args is None:
        return err, True
    if worker is None:
        return NO_ADDRESS, True
    return await call_lua(worker, fn, args, timeout)


def build_server(worker: NvimWorker | None, timeout: float = 10.0) -> Any:
    """The low-level SDK server with exactly the three tools; without a worker (no Neovim
    address) every call answers how to give one."""
    from mcp import types
    from mcp.server.lowlevel import Server

    tools = [types.Tool.model_validate(t) for t in (REVEAL_TOOL, ATTACHMENT_TOOL, GOTO_TOOL)]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        text, is_error = await call_tool_text(worker, params.name, params.arguments, timeout)
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


async def serve(address: str | None, timeout: float) -> None:
    from mcp.server.stdio import stdio_server

    worker = NvimWorker(address) if address else None
    try:
        server = build_server(worker, timeout)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        if worker is not None:
            worker.close(timeout=0.2)


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
        # Start anyway: a client that sees only "Connection closed" cannot tell why, so
        # each call answers the explanation instead.
        sys.stderr.write(f"sightline-mcp: {NO_ADDRESS}\n")
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
    # The client has gone. A call may still be stuck in Neovim (busy, or at a prompt): its
    # deadline keeps it from acting, and the process must not linger until it returns, so
    # leave without waiting for the worker thread.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
