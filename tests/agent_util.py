"""Helpers for driving a real Neovim + core against the loopback Messages server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import status, wait_for, wait_idle
from tests.fakeapi import FakeAnthropic, validation_error

# The first turn of a core waits for the SDK import (~2 s of CPU); on a loaded machine with
# parallel workers that takes a while, so waits here are generous (they return at once).
TURN_TIMEOUT_S = 30.0
API_KEY = "sk-test-secret-4242"


def claude(nvim_factory: Any, server: FakeAnthropic, **cfg: Any) -> Any:
    """A child Neovim whose core talks to `server` with the real anthropic provider."""
    provider = {"name": "anthropic", "base_url": server.base_url, "retries": 0}
    return nvim_factory({"provider": provider, **cfg}, env={"ANTHROPIC_API_KEY": API_KEY})


def send(nv: Any, text: str = "go") -> None:
    assert nv.exec_lua("return {require('sightline').send(...)}", text) == [True]


def decide(nv: Any, decision: str, reason: str = "") -> None:
    res = nv.exec_lua("return {require('sightline').decide(...)}", decision, reason)
    assert res == [True], res


def idle(nv: Any) -> None:
    wait_idle(nv, TURN_TIMEOUT_S)


def wait_pending(nv: Any, timeout: float = TURN_TIMEOUT_S) -> dict[str, Any]:
    """Wait until something awaits a decision; returns the status."""
    return dict(
        wait_for(
            lambda: (st := status(nv))["state"] == "awaiting_decision" and st,
            timeout,
            "a pending decision",
        )
    )


def wait_core_pending(nv: Any, timeout: float = TURN_TIMEOUT_S) -> dict[str, Any]:
    """Wait until the core itself says a decision waits: after an answer, the Lua mirror of
    the status can still show the question just answered until the core's next push."""

    def core_status() -> dict[str, Any]:
        answer = nv.exec_lua("return require('sightline.host').request('agent.status')")
        return dict(answer["status"])

    return dict(
        wait_for(
            lambda: (st := core_status())["state"] == "awaiting_decision" and st,
            timeout,
            "a pending decision in the core",
        )
    )


def tool_results(server: FakeAnthropic, request: int) -> list[dict[str, Any]]:
    """The tool_result blocks the core sent in request number `request` (0-based)."""
    req = server.wait_for_requests(request + 1, TURN_TIMEOUT_S)[request]
    last = req.body["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def only_result(server: FakeAnthropic, request: int = 1) -> dict[str, Any]:
    (result,) = tool_results(server, request)
    return result


def tool_names(server: FakeAnthropic, request: int = 0) -> list[str]:
    req = server.wait_for_requests(request + 1, TURN_TIMEOUT_S)[request]
    return [t["name"] for t in req.body.get("tools", [])]


def edit(nv: Any, path: Path) -> int:
    """Open `path` in the current window; returns its buffer number."""
    nv.command(f"edit {path}")
    return int(nv.api.get_current_buf().number)


def lines(nv: Any, buf: int) -> list[str]:
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def accepted(server: FakeAnthropic, n: int) -> list[dict[str, Any]]:
    """The first `n` requests, each one the server (like the real API) accepted."""
    reqs = server.wait_for_requests(n, TURN_TIMEOUT_S)
    for req in reqs:
        assert validation_error(req.body) is None, validation_error(req.body)
    return [req.body for req in reqs]


def texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if b.get("type") == "text"]


def core_pid(nv: Any) -> int:
    return int(nv.exec_lua("return require('sightline.host').request('core.ping').pid"))


def core_status(nv: Any) -> dict[str, Any]:
    """The core's own status (starts the core if needed), not the Lua mirror."""
    return dict(nv.exec_lua("return require('sightline.host').request('agent.status').status"))
