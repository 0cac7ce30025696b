"""Driving the acp provider against the scripted agent (tests/acp_agent.py) in a child Neovim."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, wait_for

AGENT = ROOT / "tests" / "acp_agent.py"


class AgentLog:
    """What the scripted agent received and answered, one JSON object a line."""

    def __init__(self, path: Path):
        self.path = path

    def entries(self, kind: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text().splitlines() if line]
        return [r for r in rows if kind is None or r["kind"] == kind]

    def wait(self, kind: str, count: int = 1, timeout: float = 30.0) -> list[dict[str, Any]]:
        return list(
            wait_for(
                lambda: (got := self.entries(kind)) and len(got) >= count and got,
                timeout,
                f"{count} {kind} entries in the agent log",
            )
        )


def agent_cmd(
    tmp_path: Path, turns: list[list[dict[str, Any]]], caps: dict[str, Any] | None = None
) -> tuple[list[str], AgentLog]:
    script = tmp_path / "script.json"
    log = tmp_path / "agent.log"
    script.write_text(json.dumps({"caps": caps or {}, "turns": turns}))
    cmd = [sys.executable, str(AGENT), "--script", str(script), "--log", str(log)]
    return cmd, AgentLog(log)


def acp_nvim(
    nvim_factory: Any,
    tmp_path: Path,
    turns: list[list[dict[str, Any]]],
    caps: dict[str, Any] | None = None,
    client_writes: bool = True,
    **cfg: Any,
) -> tuple[Any, AgentLog]:
    cmd, log = agent_cmd(tmp_path, turns, caps)
    agent = {"cmd": cmd, "client_writes": client_writes}
    provider = {"name": "acp", "agent": agent, **cfg.pop("provider", {})}
    nv = nvim_factory({"provider": provider, **cfg})
    return nv, log
