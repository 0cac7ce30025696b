"""The core's MCP servers: which exist for a workspace, their state, their tools for a turn.

A server starts when first needed — the first turn whose tool list may hold one of its tools
(a plan or scoped turn never starts a server whose tools can only be exec), or the `@` of a
mention (in the background). A server that fails to start or dies is reported once in the
pane and stays failed, its tools gone from the next request, until `:Sightline mcp restart`
(or enable, or a new configuration). Everything that waits on a server waits on a turn's
worker thread, with a deadline.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.domain import narrator, sandbox
from sightline.domain.mcp_config import (
    ServerConfig,
    ServerConfigError,
    changed_since_enabled,
    changed_text,
    is_enabled,
    load_enable_state,
    read_mcp_json,
    set_enabled,
)
from sightline.gate.policy import Kind
from sightline.mcp_client import client as mcp
from sightline.mcp_client.tools import Listed, as_tool, could_offer, hints_text, listed_tools
from sightline.tools.base import Tool

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

log = logging.getLogger(__name__)

Notify = Callable[[narrator.Note], None]


@dataclass
class Server:
    cfg: ServerConfig
    workspace: str = ""  # where it started: a sandboxed server may write there only
    state: str = "stopped"  # stopped | starting | running | failed
    error: str | None = None
    conn: mcp.Connection | None = None
    started: concurrent.futures.Future[mcp.Listing] | None = None
    tools: list[Listed] = field(default_factory=list)
    resources: list[Any] = field(default_factory=list)
    prompts: list[Any] = field(default_factory=list)


class Manager:
    def __init__(self, notify: Notify):
        self._notify = notify
        self._lock = threading.RLock()
        self._configs: tuple[ServerConfig, ...] = ()
        self._servers: dict[str, Server] = {}
        self._said_changed: set[ServerConfig] = set()
        self.start_timeout_s = 30.0
        self.call_timeout_s = 120.0
        self.sandbox = sandbox.SandboxConfig()

    # -- configuration -----------------------------------------------------------------

    def configure(
        self,
        servers: tuple[ServerConfig, ...],
        start_timeout_ms: int,
        call_timeout_ms: int,
        box: sandbox.SandboxConfig | None = None,
    ) -> None:
        with self._lock:
            self._configs = servers
            self.sandbox = box or sandbox.SandboxConfig()
            self.start_timeout_s = start_timeout_ms / 1000
            self.call_timeout_s = call_timeout_ms / 1000

    def entries(self, workspace: Path | str) -> list[ServerConfig]:
        """setup()'s servers, then the workspace's (a name setup() uses shadows it)."""
        with self._lock:
            configs = list(self._configs)
        names = {c.name for c in configs}
        carried = read_mcp_json(workspace)
        configs += [c for c in carried.servers if c.name not in names]
        return configs

    def _server(self, cfg: ServerConfig, workspace: Path | str) -> Server:
        """The server of this name; a changed configuration replaces (and stops) it."""
        with self._lock:
            found = self._servers.get(cfg.name)
            if found is not None and found.cfg == cfg:
                return found
            if found is not None:
                self._stop(found)
            server = Server(cfg, str(workspace))
            self._servers[cfg.name] = server
            return server

    def enabled(self, workspace: Path | str) -> list[Server]:
        state = load_enable_state()
        entries = self.entries(workspace)
        wanted = [c for c in entries if is_enabled(c, workspace, state)]
        for cfg in entries:
            if cfg not in wanted and (parts := changed_since_enabled(cfg, workspace)):
                self._say_changed(cfg, parts)
        servers = [self._server(c, workspace) for c in wanted]
        names = {s.cfg.name for s in servers}
        with self._lock:
            for name, server in list(self._servers.items()):
                if name not in names:  # disabled, or not of this workspace any more
                    self._stop(server)
                    del self._servers[name]
        return servers

    def _say_changed(self, cfg: ServerConfig, parts: list[str]) -> None:
        """Once per changed definition: the server the user enabled is not the one it was."""
        with self._lock:
            if cfg in self._said_changed:
                return
            self._said_changed.add(cfg)
        self._notify(narrator.mcp_definition_changed(cfg.name, changed_text(cfg, parts)))

    # -- starting ----------------------------------------------------------------------

    def _begin(self, server: Server) -> concurrent.futures.Future[mcp.Listing] | None:
        """Start `server` unless it runs, starts or failed; returns what to wait for."""
        with self._lock:
            if server.state == "running" or server.state == "failed":
                return None
            if server.state == "starting":
                return server.started
            server.state, server.error = "starting", None
            conn, started = mcp.start(server.cfg, self._died, self._sandboxed(server))
            server.conn, server.started = conn, started
        started.add_done_callback(lambda f: self._started(server, conn, f))
        return started

    def _started(
        self, server: Server, conn: mcp.Connection, fut: concurrent.futures.Future[mcp.Listing]
    ) -> None:
        with self._lock:
            if server.conn is not conn or server.state != "starting":
                return
            notes: list[narrator.Note] = []
            why: str | None
            if fut.cancelled():
                why = "it did not start in time"
            else:
                err = fut.exception()
                why = None if err is None else str(err)
            if why is None:
                listing = fut.result()
                server.tools = listed_tools(server.cfg, listing.tools)
                server.resources = listing.resources
                server.prompts = listing.prompts
                server.state = "running"
                notes = [
                    narrator.mcp_tool_not_offered(server.cfg.name, t.name, t.refused)
                    for t in server.tools
                    if t.refused
                ]
        if why is not None:
            self._fail(server, conn, f"did not start: {why}")
        for note in notes:
            self._notify(note)

    def _fail(self, server: Server, conn: mcp.Connection | None, why: str) -> None:
        with self._lock:
            if server.conn is not conn or server.state == "failed":
                return
            server.state, server.error = "failed", why
            server.tools, server.resources, server.prompts = [], [], []
        if conn is not None:
            conn.stop_soon()
        self._notify(narrator.mcp_server_failed(server.cfg.name, server.cfg.source, why))

    def _died(self, conn: mcp.Connection, how: str) -> None:
        with self._lock:
            found = [s for s in self._servers.values() if s.conn is conn]
        for server in found:
            self._fail(server, conn, f"stopped: {how}")

    def _sandboxed(self, server: Server) -> Callable[[list[str]], list[str]] | None:
        """The sandbox of a stdio server that opted in (mcp.servers.{name}.sandbox)."""
        cfg = server.cfg
        if not cfg.sandbox or cfg.command is None:
            return None
        box = self.sandbox
        status = sandbox.probe(box)
        if not status.sandboxed and box.required:

            def refuse(argv: list[str]) -> list[str]:
                raise RuntimeError(f"no sandbox here ({status.why}; tools.sandbox.required)")

            return refuse
        if not status.sandboxed:
            self._notify(narrator.mcp_unsandboxed(cfg.name, status.why))
            return None
        return lambda argv: sandbox.wrap(argv, server.workspace or os.getcwd(), box, status)

    def ensure_started(self, servers: list[Server], deadline_s: float) -> None:
        """Start what is not running and wait (on a worker thread) until each is up or
        failed, at most deadline_s."""
        waits = [(s, f) for s in servers if (f := self._begin(s)) is not None]
        end = time.monotonic() + deadline_s
        for server, fut in waits:
            try:
                fut.result(max(0.0, end - time.monotonic()))
            except concurrent.futures.TimeoutError:
                timeout = f"{self.start_timeout_s:g} s (mcp.start_timeout_ms)"
                self._fail(server, server.conn, f"did not start within {timeout}")
            except (concurrent.futures.CancelledError, Exception):
                pass  # reported by _started

    def start_in_background(self, workspace: Path | str) -> None:
        """For `@` completion: never waits (it runs on pynvim's thread)."""
        for server in self.enabled(workspace):
            self._begin(server)

    # -- a turn's tools ----------------------------------------------------------------

    def turn_tools(self, workspace: Path | str, kinds: frozenset[Kind]) -> list[Tool]:
        servers = [s for s in self.enabled(workspace) if could_offer(s.cfg, kinds)]
        if not servers:
            return []
        self.ensure_started(servers, self.start_timeout_s)
        self._check_alive([s for s in servers if s.state == "running"])
        tools: list[Tool] = []
        names: set[str] = set()
        for server in servers:
            with self._lock:
                if server.state != "running":
                    continue
                offered = [t for t in server.tools if t.refused is None and t.kind in kinds]
            for listed in offered:
                # Names are unique by construction (tools.tool_name); a hash collision, were
                # one ever met, must still not list a name twice: the API refuses the turn.
                if listed.api_name in names:
                    log.warning("MCP tool name %s taken twice; left out", listed.api_name)
                    continue
                names.add(listed.api_name)
                tools.append(as_tool(server.cfg, listed, self._caller(server)))
        return tools

    def _check_alive(self, servers: list[Server]) -> None:
        """A server that died since the last turn is noticed here, before its tools go out."""
        pings = []
        for server in servers:
            conn = server.conn
            if conn is not None and not conn.dead:
                pings.append(mcp.event_loop().submit(conn.ping()))
        for fut in pings:
            try:
                fut.result(mcp.PING_TIMEOUT_S + 1)
            except Exception as err:
                log.debug("ping failed: %r", err)

    def _caller(self, server: Server) -> Callable[[Turn, str, dict[str, Any]], Any]:
        def call(turn: Turn, name: str, args: dict[str, Any]) -> Any:
            conn = server.conn
            if conn is None or server.state != "running":
                raise mcp.McpFailure(f"the server is {server.state}")
            fut = mcp.event_loop().submit(conn.call_tool(name, args, self.call_timeout_s))
            return mcp.wait(fut, self.call_timeout_s + 5, turn.on_cancel)

        return call

    # -- resources ---------------------------------------------------------------------

    def running(self, workspace: Path | str) -> dict[str, Server]:
        """The enabled servers that run now (no start, no wait: any thread)."""
        return {s.cfg.name: s for s in self.enabled(workspace) if s.state == "running"}

    def starting(self, workspace: Path | str) -> list[str]:
        """The names of the enabled servers starting now (no start, no wait: any thread)."""
        return [s.cfg.name for s in self.enabled(workspace) if s.state == "starting"]

    def for_mentions(self, workspace: Path | str, names: set[str]) -> dict[str, Server]:
        """The enabled servers of these names, started if need be (on a worker thread)."""
        wanted = [s for s in self.enabled(workspace) if s.cfg.name in names]
        self.ensure_started(wanted, self.start_timeout_s)
        return {s.cfg.name: s for s in wanted if s.state == "running"}

    def read_resource(self, server: Server, uri: str, timeout_s: float) -> Any:
        conn = server.conn
        if conn is None:
            raise mcp.McpFailure("not running")
        fut = mcp.event_loop().submit(conn.read_resource(uri, timeout_s))
        return mcp.wait(fut, timeout_s + 2)

    def get_prompt(self, server: Server, name: str, args: dict[str, str], timeout_s: float) -> Any:
        """A prompt of a running server, its arguments filled (waits: never on Neovim's
        thread)."""
        conn = server.conn
        if conn is None:
            raise mcp.McpFailure("not running")
        fut = mcp.event_loop().submit(conn.get_prompt(name, args, timeout_s))
        return mcp.wait(fut, timeout_s + 2)

    # -- commands ----------------------------------------------------------------------

    def _find(self, name: str, workspace: Path | str) -> ServerConfig:
        for cfg in self.entries(workspace):
            if cfg.name == name:
                return cfg
        known = ", ".join(c.name for c in self.entries(workspace)) or "none configured"
        raise ServerConfigError(f"no MCP server named {name!r} (known: {known})")

    def set_enabled(self, name: str, enabled: bool, workspace: Path | str) -> str:
        cfg = self._find(name, workspace)
        if cfg.error is not None:
            raise ServerConfigError(f"{name} cannot be enabled: {cfg.error}")
        set_enabled(cfg, enabled, workspace)
        self.enabled(workspace)  # stops it when disabled
        where = " for this workspace" if cfg.source == "workspace" else ""
        if enabled:
            with self._lock:
                server = self._servers.get(name)
                if server is not None and server.state == "failed":
                    server.state = "stopped"
            return f"MCP server {name} enabled{where}; it starts when a turn needs it"
        return f"MCP server {name} disabled{where}"

    def restart(self, name: str, workspace: Path | str) -> str:
        cfg = self._find(name, workspace)
        if not is_enabled(cfg, workspace):
            raise ServerConfigError(f"MCP server {name} is disabled (:Sightline mcp enable {name})")
        with self._lock:
            server = self._servers.get(name)
            if server is not None:
                self._stop(server)
                server.state, server.error = "stopped", None
        self.start_in_background(workspace)
        return f"MCP server {name} restarting"

    def _stop(self, server: Server) -> None:
        with self._lock:
            conn, server.conn = server.conn, None
            if server.state != "failed":
                server.state = "stopped"
            server.tools, server.resources, server.prompts = [], [], []
        if conn is not None:
            conn.stop_soon()

    def stop_all(self) -> None:
        with self._lock:
            conns = [s.conn for s in self._servers.values() if s.conn is not None]
            for server in self._servers.values():
                server.conn, server.state = None, "stopped"
        mcp.stop_all(conns)

    # -- listing -----------------------------------------------------------------------

    def status(self, workspace: Path | str) -> list[dict[str, Any]]:
        state = load_enable_state()
        out = []
        carried = read_mcp_json(workspace)
        for cfg in self.entries(workspace):
            enabled = is_enabled(cfg, workspace, state)
            with self._lock:
                server = self._servers.get(cfg.name)
                live = server is not None and server.cfg == cfg
                run_state = server.state if live and server is not None else "stopped"
                error = server.error if live and server is not None else None
                tools = list(server.tools) if live and server is not None else []
                resources = len(server.resources) if live and server is not None else 0
            changed = None if enabled else changed_since_enabled(cfg, workspace)
            if cfg.error is not None:
                run_state, error = "invalid", cfg.error
            elif changed:
                run_state, error = "changed", changed_text(cfg, changed)
            elif not enabled:
                run_state = "disabled"
            out.append(
                {
                    "name": cfg.name,
                    "source": cfg.source,
                    "transport": cfg.transport,
                    "enabled": enabled,
                    "state": run_state,
                    "error": error,
                    "resources": resources,
                    "tools": [
                        {
                            "name": t.name,
                            "api_name": t.api_name,
                            "kind": str(t.kind),
                            "annotations": hints_text(t.hints),
                            "refused": t.refused,
                        }
                        for t in tools
                    ],
                }
            )
        if carried.error:
            out.append(
                {
                    "name": ".mcp.json",
                    "source": "workspace",
                    "transport": "",
                    "enabled": False,
                    "state": "invalid",
                    "error": carried.error,
                    "resources": 0,
                    "tools": [],
                }
            )
        return out
