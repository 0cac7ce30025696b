"""MCP server configuration: `mcp.servers` from setup() and a workspace's `.mcp.json`.

Both end as ServerConfig. setup()'s entries were checked by lua/sightline/config.lua (one
check, at setup() time): here they are checked for shape only. A workspace's `.mcp.json`
never passed through Lua, so its entries are checked in full here (bounds, URL schemes).
What setup() declares is the user's: enabled unless they disable it,
and its `kind`, `tools` and `trust_annotations` decide how its tools are placed. What a
workspace carries (`.mcp.json`, Claude Code's `{"mcpServers": {...}}`) is disabled until the
user enables it for that workspace, and can never declare its own tools read-only: a cloned
repository must neither run commands by itself nor escape the review gate.

`${env:NAME}` in env and header values is resolved when a server starts (the variable may be
set later); every resolved env value and every header value is registered with the redactor.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from sightline.domain import paths, secrets
from sightline.domain.errors import key_path, kind_of
from sightline.domain.extensions import (
    EnableState,
    atomic_write_text,
    load_state,
    save_state,
    workspace_key,
)

Source = Literal["user", "workspace"]
KINDS = ("read", "exec")
TRANSPORTS = ("stdio", "http", "streamable-http")
MCP_JSON = ".mcp.json"
MAX_MCP_JSON_BYTES = 1 << 20
MAX_TEXT = 4096
MAX_NAME_CHARS = 64
MAX_ARGS = 256
MAX_MAP = 256
_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


class ServerConfigError(ValueError):
    """A server entry is wrong; the text names its path (`mcp.servers.fs.command: …`)."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    source: Source = "user"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    kind: str | None = None  # "read" or "exec" as declared; None: exec unless annotations say
    tools: tuple[tuple[str, str], ...] = ()  # tool name -> declared kind
    trust_annotations: bool = False
    sandbox: bool = False  # a stdio server run in the sandbox (domain/sandbox.py): opt-in
    enabled: bool = True  # setup()'s `enabled`; the enable state may override it
    error: str | None = None  # a workspace entry that could not be read: listed, never started

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def declared_kind(self, tool: str) -> str | None:
        return dict(self.tools).get(tool) or self.kind


def _fail(path: str, expected: str, value: object) -> ServerConfigError:
    return ServerConfigError(f"{path}: expected {expected}, got {kind_of(value)}")


def _text(value: object, path: str, full: bool = True) -> str:
    if not isinstance(value, str) or (full and (not value or len(value) > MAX_TEXT)):
        raise _fail(path, f"a non-empty string of at most {MAX_TEXT} characters", value)
    return value


def _map(
    value: object, path: str, what: str = "a table of names to strings", full: bool = True
) -> dict[str, str]:
    if value is None or (isinstance(value, list | tuple) and not value):
        return {}
    if not isinstance(value, Mapping) or (full and len(value) > MAX_MAP):
        raise _fail(path, what, value)
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or (full and (not key or len(key) > MAX_TEXT)):
            raise _fail(path, what, value)
        if not isinstance(item, str) or (full and len(item) > MAX_TEXT):
            raise _fail(key_path(path, key), "a string", item)
        out[key] = item
    return out


def parse_server(name: object, raw: object, path: str, source: Source) -> ServerConfig:
    """One entry of `mcp.servers` (source "user": its shape only) or of `.mcp.json` (source
    "workspace": in full)."""
    full = source == "workspace"
    if not isinstance(name, str) or (
        full and (not name or len(name) > MAX_NAME_CHARS or not name.isprintable())
    ):
        shown = repr(name) if isinstance(name, str) else kind_of(name)
        raise ServerConfigError(
            f"{path}: expected server names of 1 to {MAX_NAME_CHARS} printable characters, "
            f"got {shown[:80]}"
        )
    where = key_path(path, name)
    if not isinstance(raw, Mapping):
        raise _fail(where, "a table", raw)
    command = raw.get("command")
    url = raw.get("url")
    if (command is None) == (url is None):
        raise ServerConfigError(f"{where}: expected either command (stdio) or url (HTTP)")
    kind_type = raw.get("type")
    if kind_type is not None and kind_type not in TRANSPORTS:
        raise ServerConfigError(
            f"{where}.type: expected stdio, http or streamable-http (sse is not supported)"
        )
    args_raw = raw.get("args")
    if args_raw is None or (isinstance(args_raw, list | tuple) and not args_raw):
        args: tuple[str, ...] = ()
    elif (
        isinstance(args_raw, list | tuple)
        and (not full or len(args_raw) <= MAX_ARGS)
        and all(isinstance(a, str) and (not full or len(a) <= MAX_TEXT) for a in args_raw)
    ):
        args = tuple(args_raw)
    else:
        raise _fail(f"{where}.args", "a list of strings", args_raw)
    cfg = ServerConfig(
        name=name,
        source=source,
        command=None if command is None else _text(command, f"{where}.command", full),
        args=args,
        env=tuple(_map(raw.get("env"), f"{where}.env", full=full).items()),
        url=None if url is None else _url(url, f"{where}.url", full),
        headers=tuple(_map(raw.get("headers"), f"{where}.headers", full=full).items()),
    )
    if source == "workspace":
        return cfg  # a repository does not choose how its tools are placed
    kind = raw.get("kind")
    if kind is not None and kind not in KINDS:
        raise _fail(f"{where}.kind", "'read' or 'exec'", kind)
    tools = _map(
        raw.get("tools"), f"{where}.tools", "a table of tool names to 'read' or 'exec'", full
    )
    for tool, tool_kind in tools.items():
        if tool_kind not in KINDS:
            shown = tool if tool.isprintable() else repr(tool)
            raise ServerConfigError(
                f"{where}.tools.{shown}: expected 'read' or 'exec', got {tool_kind!r}"[:500]
            )
    trust = raw.get("trust_annotations", False)
    if not isinstance(trust, bool):
        raise _fail(f"{where}.trust_annotations", "true or false", trust)
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _fail(f"{where}.enabled", "true or false", enabled)
    boxed = raw.get("sandbox", False)
    if not isinstance(boxed, bool):
        raise _fail(f"{where}.sandbox", "true or false", boxed)
    return replace(
        cfg,
        kind=kind,
        tools=tuple(tools.items()),
        trust_annotations=trust,
        enabled=enabled,
        sandbox=boxed,
    )


def _url(value: object, path: str, full: bool = True) -> str:
    text = _text(value, path, full)
    if full and not re.match(r"https?://", text):
        raise _fail(path, "an http:// or https:// URL", value)
    return text


def parse_servers(raw: object, path: str = "mcp.servers") -> tuple[ServerConfig, ...]:
    """`mcp.servers` of the config: a table of user-chosen names to server tables."""
    if raw is None or (isinstance(raw, list | tuple) and not raw):
        return ()
    if not isinstance(raw, Mapping):
        raise _fail(path, "a table of named servers", raw)
    return tuple(parse_server(name, entry, path, "user") for name, entry in raw.items())


@dataclass(frozen=True)
class WorkspaceServers:
    servers: tuple[ServerConfig, ...] = ()
    error: str | None = None  # the file itself could not be read


def read_mcp_json(workspace: Path | str) -> WorkspaceServers:
    """The servers of `<workspace>/.mcp.json`; a bad entry is kept with its error (listed,
    never started), a bad file is one error."""
    path = Path(workspace) / MCP_JSON
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_MCP_JSON_BYTES + 1)
    except FileNotFoundError:
        return WorkspaceServers()
    except OSError as err:
        return WorkspaceServers(error=f"{MCP_JSON}: {err.strerror or err}")
    if len(data) > MAX_MCP_JSON_BYTES:
        return WorkspaceServers(error=f"{MCP_JSON}: larger than {MAX_MCP_JSON_BYTES} bytes")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        return WorkspaceServers(error=f"{MCP_JSON}: not valid JSON ({err})")
    table = parsed.get("mcpServers") if isinstance(parsed, dict) else None
    if table is None:
        return WorkspaceServers()
    if not isinstance(table, dict):
        return WorkspaceServers(error=f"{MCP_JSON}: mcpServers: expected an object")
    out = []
    for name, entry in table.items():
        try:
            out.append(parse_server(name, entry, "mcpServers", "workspace"))
        except ServerConfigError as err:
            shown = name if isinstance(name, str) and name else "?"
            shown = shown[:MAX_NAME_CHARS]
            out.append(ServerConfig(name=shown, source="workspace", error=str(err)))
    return WorkspaceServers(tuple(out))


def resolve(value: str, where: str) -> tuple[str, bool]:
    """`${env:NAME}` replaced by the variable's value; returns (text, used_env).

    Raises ServerConfigError naming the variable when it is not set."""
    used = False

    def sub(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        name = match.group(1)
        found = os.environ.get(name)
        if found is None:
            raise ServerConfigError(f"{where}: ${{env:{name}}}: {name} is not set")
        return found

    return _ENV_REF.sub(sub, value), used


def resolved_env(cfg: ServerConfig) -> dict[str, str]:
    """The env a stdio server gets on top of the SDK's safe defaults; values taken from the
    environment are secrets (tokens usually are)."""
    out = {}
    for key, value in cfg.env:
        text, used = resolve(value, f"{cfg.name}.env.{key}")
        if used:
            secrets.register(text)
        out[key] = text
    return out


def resolved_headers(cfg: ServerConfig) -> dict[str, str]:
    """Headers for an HTTP server; every value is a secret (Authorization, API keys), and so
    is a bearer token alone."""
    out = {}
    for key, value in cfg.headers:
        text, _ = resolve(value, f"{cfg.name}.headers.{key}")
        secrets.register(text)
        _scheme, _, token = text.partition(" ")
        secrets.register(token)
        out[key] = text
    return out


# --- enable state: the extensions' mechanism, in a file of its own ------------------------


def state_file() -> Path:
    return paths.config_dir() / "mcp.json"


def load_enable_state(strict: bool = False) -> EnableState:
    return load_state(state_file(), strict=strict)


# A workspace server's enable holds for the definition that was enabled, not for its name: a
# `git pull` that changes its command must not run the new one unasked. Each part is kept as
# a hash (env and headers may hold secrets), enough to name what changed.
DEFINITION_PARTS = ("command", "args", "env", "url", "headers")


def definitions_file() -> Path:
    return paths.config_dir() / "mcp-definitions.json"


def fingerprint(cfg: ServerConfig) -> dict[str, str]:
    """A hash of each part of the server's definition that decides what runs."""
    out = {}
    for part in DEFINITION_PARTS:
        value = json.dumps(getattr(cfg, part), sort_keys=True, ensure_ascii=False)
        out[part] = hashlib.sha256(value.encode(errors="surrogatepass")).hexdigest()[:16]
    return out


def _load_definitions() -> dict[str, dict[str, dict[str, str]]]:
    try:
        data = json.loads(definitions_file().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(ws): {
            str(name): {str(k): str(v) for k, v in parts.items()}
            for name, parts in servers.items()
            if isinstance(parts, dict)
        }
        for ws, servers in data.items()
        if isinstance(servers, dict)
    }


def changed_since_enabled(cfg: ServerConfig, workspace: Path | str) -> list[str] | None:
    """For an enabled workspace server, the parts of its definition changed since it was
    enabled (every part when the enable predates this record); None when it was not."""
    if cfg.source != "workspace":
        return None
    if not load_enable_state().enabled(cfg.name, cfg.source, workspace_key(workspace)):
        return None
    known = _load_definitions().get(workspace_key(workspace), {}).get(cfg.name, {})
    now = fingerprint(cfg)
    return [part for part in DEFINITION_PARTS if known.get(part) != now[part]]


def changed_text(cfg: ServerConfig, parts: list[str]) -> str:
    return (
        f"its {', '.join(parts)} changed since you enabled it; it stays off until you enable "
        f"it again (:Sightline mcp enable {cfg.name})"
    )


def is_enabled(cfg: ServerConfig, workspace: Path | str, state: EnableState | None = None) -> bool:
    if cfg.error is not None:
        return False
    state = state or load_enable_state()
    if cfg.source == "user" and not cfg.enabled:
        per_ws = state.workspaces.get(workspace_key(workspace), {})
        return per_ws.get(cfg.name, state.user.get(cfg.name, False))
    if not state.enabled(cfg.name, cfg.source, workspace_key(workspace)):
        return False
    return cfg.source != "workspace" or not changed_since_enabled(cfg, workspace)


def set_enabled(cfg: ServerConfig, enabled: bool, workspace: Path | str) -> None:
    """A workspace's server is switched for that workspace only; a setup() server for the
    user everywhere (as `:Sightline extension enable` without --workspace)."""
    from sightline.domain.extensions import ExtensionError

    try:
        state = load_enable_state(strict=True)
    except ExtensionError as err:
        raise ServerConfigError(str(err)) from None
    if cfg.source == "workspace":
        state.workspaces.setdefault(workspace_key(workspace), {})[cfg.name] = enabled
        known = _load_definitions()
        per_ws = known.setdefault(workspace_key(workspace), {})
        if enabled:
            per_ws[cfg.name] = fingerprint(cfg)
        else:
            per_ws.pop(cfg.name, None)
        atomic_write_text(definitions_file(), json.dumps(known, indent=2, sort_keys=True) + "\n")
    else:
        state.user[cfg.name] = enabled
    save_state(state_file(), state)
