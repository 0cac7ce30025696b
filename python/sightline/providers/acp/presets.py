"""The ACP agents sightline knows by name: data only, one entry per preset.

`client_writes` says whether the agent's file edits come to the client as
`fs/write_text_file` (so the review gate and a selection scope can hold them) or go
straight to disk (so only `session/request_permission` can gate them, and Change with
Agent refuses to start). A custom `{cmd = ...}` agent is assumed to write directly unless
its config says `client_writes = true`: no guarantee is claimed that is not known.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

from sightline.domain import secrets
from sightline.domain.config import AgentConfig


@dataclass(frozen=True)
class Preset:
    cmd: tuple[str, ...]
    install: str  # how to get the command, shown when it is missing
    client_writes: bool
    label: str
    # The key variables it reads. The core takes every key out of its environment at start
    # (domain/secrets.py); each preset is given back only its own, from the saved copy.
    keys: tuple[str, ...] = ()


PRESETS: dict[str, Preset] = {
    # Gemini CLI routes write_file/replace through fs/write_text_file (gemini-cli #29108);
    # 0.61 names the flag --acp (--experimental-acp is deprecated).
    "gemini": Preset(
        ("gemini", "--acp"),
        "npm install -g @google/gemini-cli",
        client_writes=True,
        label="Gemini CLI",
        keys=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    # The Claude adapter writes to disk itself since v0.18 (claude-agent-acp #339).
    "claude": Preset(
        ("claude-agent-acp",),
        "npm install -g @agentclientprotocol/claude-agent-acp",
        client_writes=False,
        label="Claude (claude-agent-acp)",
        keys=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    ),
    # codex-acp applies its patches itself.
    "codex": Preset(
        ("codex-acp",),
        "npm install -g @zed-industries/codex-acp",
        client_writes=False,
        label="Codex (codex-acp)",
        keys=("OPENAI_API_KEY",),
    ),
}


@dataclass(frozen=True)
class AgentSpec:
    """A resolved agent: what to run, with which extra environment."""

    name: str
    cmd: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    client_writes: bool = False
    install: str = ""
    keys: tuple[str, ...] = ()  # key variables passed from the core's saved copy

    def environment(self) -> dict[str, str]:
        """What the agent's process gets on top of the core's (keyless) environment: its
        configured variables and its own keys, no other."""
        found = {name: value for name in self.keys if (value := secrets.env_secret(name))}
        return {**found, **self.env}

    def missing(self) -> str | None:
        """Why the command cannot be started (None when it can)."""
        exe = self.cmd[0]
        if os.sep in exe:
            if os.access(exe, os.X_OK) and os.path.isfile(exe):
                return None
        elif shutil.which(exe):
            return None
        how = f"; install it with `{self.install}`" if self.install else ""
        return (
            f"the ACP agent {self.name!r} needs the command {exe!r}, which is not on PATH{how} "
            "or set provider.agent = { cmd = {...} }"
        )


def resolve(agent: AgentConfig | None) -> AgentSpec:
    """The spec of a configured agent (already checked by config.py); gemini by default."""
    agent = agent or AgentConfig()
    if agent.cmd:
        env = dict(agent.env)
        return AgentSpec(os.path.basename(agent.cmd[0]), agent.cmd, env, agent.client_writes)
    name = agent.preset or "gemini"
    preset = PRESETS[name]
    return AgentSpec(name, preset.cmd, {}, preset.client_writes, preset.install, preset.keys)
