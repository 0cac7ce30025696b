"""The sandbox commands run in (Linux, bubblewrap): what a command can touch is what the user
allowed, not all the user can.

Inside: the whole file system read-only; the workspace writable; `$HOME` an empty, read-only
directory but for the paths `tools.sandbox.home` lists (read-only) and `writable` lists
(writable, anywhere); a private `/tmp`; its own `/proc` (no other process is seen) and
`/dev`; no network but an isolated loopback, unless `tools.sandbox.network`. bwrap drops
every capability, also for root. The command stays in its process group, so the watchdog of
domain/spawn.py still kills its whole tree with its owner (bwrap also dies with its parent).

`wrap()` is the one seam: run_command, ACP terminals and MCP stdio servers (opted in) pass
their argv through it. Where bwrap is missing or cannot make namespaces, `probe()` says why
and the command runs unsandboxed ('auto'), or is refused (`required = true`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MODES = ("auto", "off")
PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SandboxConfig:
    """tools.sandbox: 'auto' (sandboxed when bwrap works), 'off', or a table (auto, with
    these rules)."""

    mode: str = "auto"
    network: bool = False
    home: tuple[str, ...] = ()  # paths under $HOME shown read-only (`~/` allowed)
    writable: tuple[str, ...] = ()  # more writable paths, anywhere
    required: bool = False  # without a working sandbox, refuse to run rather than run bare

    @classmethod
    def from_value(cls, raw: object, path: str = "tools.sandbox") -> SandboxConfig:
        """The config value's shape (its rules are config.lua's); ValueError names the key."""
        if raw is None or raw == "auto":
            return cls()
        if raw == "off":
            return cls(mode="off")
        if isinstance(raw, list | tuple) and not raw:
            return cls()  # an empty Lua table
        if not isinstance(raw, Mapping):
            raise ValueError(f"{path}: expected 'auto', 'off' or a table")

        def paths(key: str) -> tuple[str, ...]:
            value = raw.get(key)
            if value is None or (isinstance(value, Mapping) and not value):
                return ()
            if not isinstance(value, list | tuple) or not all(isinstance(p, str) for p in value):
                raise ValueError(f"{path}.{key}: expected a list of paths")
            return tuple(value)

        def flag(key: str) -> bool:
            value = raw.get(key, False)
            if not isinstance(value, bool):
                raise ValueError(f"{path}.{key}: expected true or false")
            return value

        return cls("auto", flag("network"), paths("home"), paths("writable"), flag("required"))


@dataclass(frozen=True)
class Status:
    """Whether commands run sandboxed here, and in words why not."""

    sandboxed: bool
    why: str = ""  # when not: "tools.sandbox is 'off'", "bwrap was not found on $PATH", …
    bwrap: str = ""


def probe(cfg: SandboxConfig, env: Mapping[str, str] | None = None) -> Status:
    if cfg.mode == "off":
        return Status(False, "tools.sandbox is 'off'")
    found = shutil.which("bwrap", path=(env if env is not None else os.environ).get("PATH"))
    if found is None:
        return Status(False, "bubblewrap (bwrap) was not found on $PATH")
    why = _works(found)
    return Status(not why, why, found)


@functools.cache
def _works(bwrap: str) -> str:
    """ "" when bwrap can make the namespaces here (once per bwrap; user namespaces may be
    off for a user), else what it said."""
    try:
        done = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--", "/bin/true"],
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not run: {err}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return "bwrap cannot make a sandbox here: " + (
            said[-1] if said else f"exit {done.returncode}"
        )
    return ""


def _expand(path: str, home: str) -> str:
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return os.path.realpath(os.path.expandvars(path))


def wrap(
    argv: Sequence[str],
    workspace: str,
    cfg: SandboxConfig,
    status: Status,
    home: str | None = None,
) -> list[str]:
    """`argv` run inside the sandbox (status.sandboxed), or as it is."""
    if not status.sandboxed:
        return list(argv)
    home = os.path.realpath(home or os.environ.get("HOME") or "/root")
    ws = os.path.realpath(workspace)
    out = [status.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    out += ["--tmpfs", "/tmp"]
    # A workspace that holds $HOME (the home itself, `/`) shows it: the workspace is writable.
    hide_home = home != "/" and not (ws == home or home.startswith(ws.rstrip("/") + "/"))
    if hide_home:
        out += ["--tmpfs", home]
        for path in cfg.home:
            real = _expand(path, home)
            if os.path.exists(real):
                out += ["--ro-bind", real, real]
    for path in cfg.writable:
        real = _expand(path, home)
        if os.path.exists(real):
            out += ["--bind", real, real]
    out += ["--bind", ws, ws]
    if hide_home:
        out += ["--remount-ro", home]
    if not cfg.network:
        out += ["--unshare-net"]
    out += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", ws, "--"]
    return [*out, *argv]


def confine(argv: Sequence[str], workspace: str, cfg: SandboxConfig) -> tuple[list[str], Status]:
    """The seam for a command run for the agent (an ACP terminal): `argv` as it runs under
    `cfg` in `workspace`, and how (a caller refuses when `cfg.required` and not sandboxed)."""
    status = probe(cfg)
    return wrap(argv, workspace, cfg, status), status


def described(cfg: SandboxConfig, status: Status) -> str:
    """How a command will run, for the ask."""
    if not status.sandboxed:
        return f"runs unsandboxed: {status.why}"
    rules = ["the workspace writable", "the rest read-only", "$HOME hidden"]
    if cfg.home:
        rules[-1] += " but " + ", ".join(cfg.home)
    if cfg.writable:
        rules.append("also writable: " + ", ".join(cfg.writable))
    rules.append("network allowed" if cfg.network else "no network")
    return "runs in the sandbox: " + ", ".join(rules)


_READ_ONLY = re.compile(r"read-only file system", re.I)
_NO_NET = re.compile(
    r"network is unreachable|could not resolve|temporary failure in name resolution|"
    r"name or service not known|failed to resolve|getaddrinfo|no address associated|"
    # In its own network namespace even 127.0.0.1 is the sandbox's: nothing listens there.
    r"connection refused|cannot assign requested address",
    re.I,
)
_ROOT_RO = "only the workspace is writable in the sandbox (tools.sandbox.writable adds paths)"
_HOME_RO = (
    "$HOME is hidden and read-only in the sandbox (tools.sandbox.home shows paths of it, "
    "tools.sandbox.writable makes them writable)"
)
_HOME_HIDDEN = (
    "$HOME is hidden in the sandbox: a path of it shows only if tools.sandbox.home lists it"
)
_HOME_PATH = (
    "$HOME is hidden in the sandbox, with the tools $PATH finds there: list their folders "
    "in tools.sandbox.home"
)
_NOT_FOUND = re.compile(r"command not found|: not found|no such file or directory", re.I)
_NO_NETWORK = "the sandbox has no network (tools.sandbox.network = true allows it)"
_MISSING = re.compile(r"no such file or directory|permission denied|not found", re.I)


def refused_by(output: str, cfg: SandboxConfig, home: str | None = None) -> list[str]:
    """The sandbox's rules a failed command's output points at, as far as it tells: a write
    outside what is writable, the network, or a path of the hidden $HOME. Empty when the
    output names none (the command failed for reasons of its own, or said nothing)."""
    home = os.path.realpath(home or os.environ.get("HOME") or "/root")
    found: dict[str, None] = {}
    on_path = [os.path.realpath(p) for p in os.environ.get("PATH", "").split(":") if p]
    for line in output.splitlines():
        mine = home + "/" in line or "~/" in line
        if _READ_ONLY.search(line):
            found[_HOME_RO if mine else _ROOT_RO] = None
        elif mine and _MISSING.search(line):
            found[_HOME_HIDDEN] = None
        elif _NOT_FOUND.search(line) and any(p.startswith(home + "/") for p in on_path):
            found[_HOME_PATH] = None  # a tool of $PATH installed under the hidden $HOME
        elif not cfg.network and _NO_NET.search(line):
            found[_NO_NETWORK] = None
    return list(found)
