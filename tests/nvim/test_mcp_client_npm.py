"""A published MCP server (the reference "everything" server from npm) driven end to end:
listed, a tool called after approval, placed by kind in a plan turn, a resource mentioned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import (
    TURN_TIMEOUT_S,
    claude,
    decide,
    idle,
    only_result,
    send,
    tool_names,
    wait_pending,
)
from tests.conftest import transcript
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.mcp_servers.npm import everything_server

__all__ = ["fake_api"]

DOC = "demo://resource/static/document/architecture.md"


def everything(**extra: Any) -> dict[str, Any]:
    command, *args = everything_server()
    return {"servers": {"every": {"command": command, "args": args, **extra}}}


def test_the_everything_server_end_to_end(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api, mcp=everything())
    fake_api.script(tool_use("mcp__every__echo", {"message": "hi there"}), text("done"))
    send(nv, f"use it, and see @mcp:every:{DOC}")
    st = wait_pending(nv)
    assert st["pending"] == "MCP every/echo"
    # The server's own claims are shown, and change nothing (no trust_annotations).
    assert any("server's annotations: readOnlyHint=true" in ln for ln in transcript(nv))
    decide(nv, "accept")
    idle(nv)
    assert "hi there" in only_result(fake_api)["content"]
    names = tool_names(fake_api, 0)
    assert {"mcp__every__echo", "mcp__every__get-sum", "mcp__every__get-tiny-image"} <= set(names)
    first = fake_api.wait_for_requests(1, TURN_TIMEOUT_S)[0].body["messages"][0]["content"]
    parts = [b["text"] for b in first if "mcp_resource" in b.get("text", "")]
    assert len(parts) == 1 and parts[0].startswith(f'<mcp_resource uri="every:{DOC}">')
    assert len(parts[0]) > 200  # the document's text, not a placeholder


def test_the_everything_server_in_a_plan_turn(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api, mcp=everything(trust_annotations=True))
    nv.command("Sightline plan on")
    fake_api.script(tool_use("mcp__every__get-sum", {"a": 2, "b": 3}), text("5"))
    send(nv)
    idle(nv)
    names = [n for n in tool_names(fake_api, 0) if n.startswith("mcp__")]
    # Trusted readOnlyHint: the reading tools only, run without asking.
    assert "mcp__every__get-sum" in names and "mcp__every__echo" in names
    assert "mcp__every__toggle-simulated-logging" not in names
    assert "mcp__every__gzip-file-as-resource" not in names
    assert "5" in only_result(fake_api)["content"]
