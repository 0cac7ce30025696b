"""The anthropic provider through the real SDK against the loopback Messages server."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import capture_notify, status, transcript, wait_for, wait_idle
from tests.fakeapi import (
    FakeAnthropic,
    cut,
    error_event,
    fake_api,
    hold,
    http_error,
    stall,
    text,
    truncated,
)

__all__ = ["fake_api"]

KEY = "sk-ant-test-SECRET-0123456789"


def claude(nvim_factory: Any, server: FakeAnthropic, **provider: Any) -> Any:
    cfg = {"name": "anthropic", "base_url": server.base_url, "retries": 0, **provider}
    return nvim_factory({"provider": cfg}, env={"ANTHROPIC_API_KEY": KEY})


def send(nv: Any, msg: str) -> None:
    assert nv.exec_lua("return {require('sightline').send(...)}", msg) == [True]


def test_reply_streams_into_transcript_and_request_is_cache_marked(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("Hello from the model.\nSecond line.", chunks=5))
    nv.command("Sightline chat")
    send(nv, "hi there")
    wait_idle(nv)
    lines = transcript(nv)
    assert "Hello from the model." in lines and "Second line." in lines
    (req,) = fake_api.requests
    body = req.body
    assert body["model"] == "claude-sonnet-5-5" and body["stream"] is True
    assert body["max_tokens"] == 8192
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    # The third breakpoint sits on the last turn (after the tools' and the system prompt's).
    last = {"type": "text", "text": "hi there", "cache_control": {"type": "ephemeral"}}
    assert body["messages"] == [{"role": "user", "content": [last]}]
    assert req.headers["authorization"] == f"Bearer {KEY}"
    st = status(nv)
    assert st["provider"] == "anthropic" and st["model"] == "claude-sonnet-5-5"


def test_second_turn_carries_the_conversation(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("first answer"), text("second answer"))
    send(nv, "one")
    wait_idle(nv)
    send(nv, "two")
    wait_idle(nv)
    second = fake_api.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == [{"type": "text", "text": "first answer"}]


FAULTS = [
    (http_error(401), "Authentication failed (401)"),
    (http_error(429), "Rate limited (429)"),
    (http_error(500), "internal error (500)"),
    (http_error(529), "overloaded (529)"),
    (error_event("overloaded_error", "Overloaded"), "error mid-reply (overloaded_error)"),
    (cut(after_events=4), "connection to the API was lost"),
    (stall(after_events=4, seconds=3.0), "No data from the API for 0.5 s"),
    (truncated(), "ended before it was complete"),
]


@pytest.mark.parametrize(("fault", "expected"), FAULTS, ids=lambda v: getattr(v, "kind", None))
def test_each_fault_ends_the_turn_with_one_clear_line(
    nvim_factory: Any, fake_api: FakeAnthropic, fault: Any, expected: str
) -> None:
    nv = claude(nvim_factory, fake_api, timeout_ms=500)
    fake_api.script(fault, text("recovered fine"))
    send(nv, "please")
    wait_idle(nv)
    lines = transcript(nv)
    errors = [line for line in lines if line.startswith("✗")]
    assert len(errors) == 1 and expected in errors[0], lines
    assert "Traceback" not in "\n".join(lines) and KEY not in "\n".join(lines)
    send(nv, "again")
    wait_for(lambda: "recovered fine" in transcript(nv), what="the next message to work")
    wait_idle(nv)
    # The failed turn's question travels with the next one; the request is valid.
    last = fake_api.requests[-1].body["messages"]
    assert [m["role"] for m in last] in (["user"], ["user", "assistant", "user"])


def test_retry_is_shown_in_the_pane(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api, retries=2)
    fake_api.script(http_error(529, retry_after=0), text("after retry"))
    send(nv, "x")
    wait_idle(nv)
    lines = transcript(nv)
    assert any(line.startswith("↻") and "retry 1/2" in line for line in lines), lines
    assert "after retry" in lines


def test_a_refused_connection_is_said_once_naming_where_the_address_came_from(
    nvim_factory: Any, screen_factory: Any
) -> None:
    """Retried twice, then failed: one line that the retries rewrite, then the failure in
    its place, blaming $ANTHROPIC_BASE_URL (which the user set), not provider.base_url."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}
    nv = nvim_factory({"provider": {"name": "anthropic", "retries": 2}}, env=env)
    screen = screen_factory(nv, 160, 40)
    nv.command("Sightline chat")
    send(nv, "x")
    wait_idle(nv)
    lines = transcript(nv)
    said = [line for line in lines if "connection refused" in line]
    assert len(said) == 1 and not any(line.startswith("↻") for line in lines), lines
    assert said[0].startswith(f"✗ Could not connect to 127.0.0.1:{port}: connection refused")
    assert "address from $ANTHROPIC_BASE_URL" in said[0] and "provider.base_url" not in said[0]
    screen.wait_for(lambda s: "ANTHROPIC_BASE_URL" in "".join(s.text().split()), what="shown")
    assert "".join(screen.text().split()).count("Couldnotconnect") == 1


def test_stop_mid_stream_closes_it_and_applies_nothing_more(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(hold(after_events=4, of=text("partial answer and the rest", chunks=2)))
    send(nv, "long question")
    fake_api.holding.wait(10)
    wait_for(lambda: any("partial answer" in line for line in transcript(nv)))
    nv.command("Sightline stop")
    assert status(nv)["state"] == "idle"
    assert fake_api.disconnected.wait(5), "the stream should be closed"
    fake_api.release()
    before = wait_for(lambda: "■ Stopped." in (t := transcript(nv)) and t, what="the stop note")
    send(nv, "next")
    wait_idle(nv)
    after = transcript(nv)
    assert "and the rest" not in "\n".join(after)
    assert after[: len(before)] == before
    # The partial reply was recorded; the next request is valid and carries it.
    msgs = fake_api.requests[-1].body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]


def test_core_killed_mid_turn_then_next_send_works(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    fake_api.script(hold(after_events=4))
    send(nv, "doomed")
    fake_api.holding.wait(10)
    pid = nv.exec_lua("return require('sightline.host').request('core.ping').pid")
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: status(nv)["state"] == "stopped", what="the crash to be noticed")
    wait_for(notes)
    assert len(notes()) == 1 and "during a turn" in notes()[0]["msg"]
    fake_api.release()
    fake_api.script(text("alive again"))
    send(nv, "hello?")
    wait_for(lambda: "alive again" in transcript(nv))


def test_api_key_cmd_supplies_the_key_and_it_never_reaches_history_or_log(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    script = tmp_path / "key.sh"
    script.write_text(f"#!/bin/sh\necho {KEY}\n")
    script.chmod(0o755)
    cfg = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": {**cfg, "api_key_cmd": str(script)}})
    fake_api.script(text(f"your key is {KEY}"))
    send(nv, f"echo {KEY} back")
    wait_idle(nv)
    assert fake_api.requests[0].headers["authorization"] == f"Bearer {KEY}"
    for path in (tmp_path / "xdg").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
