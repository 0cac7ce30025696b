"""ACP `authenticate`: which of the agent's advertised methods sightline can use itself.

An agent that needs a login answers `session/new` with the protocol's auth_required error
(codex-acp does until it is told which key to use). sightline then picks an `env_var` method
whose variables the agent's process has (the preset's keys, given back from the core's saved
copy, or the user's `agent.env`) and sends `authenticate` with it. A `terminal` method (or an
agent's own login, such as "Login with ChatGPT") needs the user at a terminal: sightline never
runs it, it says which command to run.

Data and pure functions; the values of the variables are never looked at beyond "set".
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# JSON-RPC error code of the protocol's "authentication required".
AUTH_REQUIRED = -32000


@dataclass(frozen=True)
class Method:
    id: str
    name: str
    type: str  # "env_var" | "terminal" | "agent"
    vars: tuple[str, ...] = ()  # env_var: the variables it reads
    args: tuple[str, ...] = ()  # terminal: the arguments to the agent's own command


def methods_of(raw: Sequence[object] | None) -> list[Method]:
    """The SDK's auth method models as plain data (any that cannot be read is left out)."""
    out = []
    for m in raw or []:
        mid, name = getattr(m, "id", None), getattr(m, "name", None)
        if not isinstance(mid, str) or not isinstance(name, str):
            continue
        kind = getattr(m, "type", None) or "agent"
        names = tuple(v.name for v in getattr(m, "vars", None) or [] if isinstance(v.name, str))
        args = tuple(a for a in getattr(m, "args", None) or [] if isinstance(a, str))
        out.append(Method(mid, name, str(kind), names, args))
    return out


def usable(methods: Sequence[Method], env: Mapping[str, str]) -> Method | None:
    """The first env_var method whose variables are all set (non-empty) in the agent's env."""
    for m in methods:
        if m.type == "env_var" and m.vars and all(env.get(v) for v in m.vars):
            return m
    return None


def needed_words(agent: str, cmd: Sequence[str], methods: Sequence[Method]) -> str:
    """Why the agent cannot start a session, and each way the user can log it in."""
    ways = []
    keys = sorted({v for m in methods if m.type == "env_var" for v in m.vars})
    if keys:
        ways.append(
            f"set {' or '.join(keys)} in the environment Neovim starts with "
            "(or in provider.agent.env)"
        )
    for m in methods:
        if m.type == "terminal":
            ways.append(f"log in once in a terminal: `{shlex.join([*cmd, *m.args])}` ({m.name})")
        elif m.type == "agent":
            ways.append(f"log in once with the agent's own command line ({m.name})")
    how = "; or ".join(ways) if ways else "it advertises no way to log in"
    return f"the ACP agent {agent!r} needs you to log in: {how}"
