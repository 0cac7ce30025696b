"""A turn stopped while `provider.api_key_cmd` runs sends nothing, and the history records the
turn's message before the stop (issue 10 §8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sightline.domain.wire import NO_REPLY
from tests.agent_util import API_KEY, TURN_TIMEOUT_S, idle, send
from tests.conftest import status, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text
from tests.processes import processes_with

__all__ = ["fake_api"]


def test_stop_while_the_key_is_fetched_sends_no_request(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    fetched = isolated_env.parent / "key-fetched"
    key_cmd = ["sh", "-c", f"sleep 1; touch {fetched}; echo {API_KEY}"]
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": {**provider, "api_key_cmd": key_cmd}})
    send(nv, "first question")
    wait_for(lambda: processes_with(str(fetched)), TURN_TIMEOUT_S, "api_key_cmd to run")
    nv.command("Sightline stop")
    assert status(nv)["state"] == "idle"
    # The key arrives after the stop: the stopped turn must not go on to send its request.
    wait_for(lambda: fetched.exists() and not processes_with(str(fetched)), 10, "the key")
    fake_api.script(text("answer"))
    send(nv, "second question")
    idle(nv)
    assert len(fake_api.requests) == 1, [r.body["messages"] for r in fake_api.requests]
    # The stopped prompt got no reply: the model is told so, and answers the second alone.
    first, stopped, second = fake_api.requests[0].body["messages"]
    assert [b["text"] for b in first["content"]] == ["first question"]
    assert [b["text"] for b in stopped["content"]] == [NO_REPLY["stopped"]]
    assert [b["text"] for b in second["content"]] == ["second question"]
    (history,) = (isolated_env.parent / "xdg").rglob("*.jsonl")
    records = [json.loads(line) for line in history.read_text().splitlines() if line.strip()]
    order = [r.get("visible") or r.get("event") or r.get("role") for r in records[1:]]
    assert order == ["first question", "stopped", "second question", "assistant", "done"]
