"""A turn stopped while `provider.api_key_cmd` runs sends nothing, and the history records the
turn's message before the stop (issue 10 §8)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from sightline.domain.wire import NO_REPLY
from tests.agent_util import API_KEY, TURN_TIMEOUT_S, core_pid, idle, send
from tests.conftest import status, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text
from tests.processes import gone, processes_with

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


def test_a_message_sent_while_the_key_is_fetched_survives_quitting_neovim(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # The key command never finishes here (a password manager waiting for its passphrase):
    # Neovim quits with the message not yet recorded as sent.
    waiting = isolated_env.parent / "key-waiting"
    key_cmd = ["sh", "-c", f"touch {waiting}; while :; do sleep 0.05; done"]
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": {**provider, "api_key_cmd": key_cmd}})
    nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input("please keep this question<C-s>")
    wait_for(waiting.exists, TURN_TIMEOUT_S, "api_key_cmd to run")
    pid = core_pid(nv)
    with contextlib.suppress(Exception):  # the session ends with Neovim
        nv.command("qa!")
    wait_for(lambda: gone(pid), TURN_TIMEOUT_S, "the core to exit with Neovim")

    again = nvim_factory({"provider": {**provider, "api_key_cmd": ["echo", API_KEY]}})
    again.exec_lua("vim.ui.select = function(items, _, cb) cb(items[1]) end")
    again.command("Sightline history")

    def composer() -> list[str]:
        buf = again.exec_lua("return require('sightline.ui.pane').buffers().composer")
        return list(again.api.buf_get_lines(buf, 0, -1, False))

    wait_for(
        lambda: composer() == ["please keep this question"],
        TURN_TIMEOUT_S,
        "the unsent message back in the composer",
    )
    assert fake_api.requests == []  # it was never sent, and reopening sends nothing
