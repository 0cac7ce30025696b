"""The key never reaches the model, a command, the transcript or the history (issue 10 §4).

Rules: every Request is redacted when it is built (one choke point for every byte sent);
every transcript line is redacted on its way to Lua; the core holds the key only in memory,
not in its environment (os.environ, the C environ, /proc/<core>/environ)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from sightline.domain import secrets
from tests.agent_util import API_KEY, claude, decide, idle, send, tool_results, wait_pending
from tests.conftest import transcript
from tests.fakeapi import FakeAnthropic, fake_api, reply, text, tool_use

__all__ = ["fake_api"]


def test_a_file_holding_the_key_reaches_the_model_redacted_by_every_read_path(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "creds.txt").write_text(f"token = {API_KEY}\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        reply(
            tool_use("read_file", {"path": "creds.txt"}),
            tool_use("grep", {"pattern": "token"}),
        ),
        text(f"I see {API_KEY} in there"),  # the model echoes it: the transcript must not
    )
    send(nv, "what is in @creds.txt")
    idle(nv)
    read_result, grep_result = tool_results(fake_api, 1)
    assert read_result["content"].endswith(f"token = {secrets.REDACTED}")
    assert grep_result["content"] == f"creds.txt:1: token = {secrets.REDACTED}"
    mention = fake_api.requests[0].body["messages"][0]["content"][1]["text"]
    assert f"token = {secrets.REDACTED}" in mention
    for request in fake_api.requests:
        assert API_KEY not in json.dumps(request.body)
    lines = transcript(nv)
    assert f"I see {secrets.REDACTED} in there" in lines
    assert API_KEY not in "\n".join(lines)
    history = list((isolated_env.parent / "xdg").rglob("*.jsonl"))
    assert history and all(API_KEY not in p.read_text() for p in history)


def test_an_approved_command_cannot_read_the_key_from_the_cores_environment(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # base64: the redactor would hide the key in plain output; this proves it is not there.
    command = "base64 /proc/$PPID/environ; echo --; env | base64"
    nv = claude(nvim_factory, fake_api)
    fake_api.script(tool_use("run_command", {"command": command}), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    (result,) = tool_results(fake_api, 1)
    status, output = result["content"].split("\n", 1)
    assert status == "exit code 0"
    core_environ, own_env = output.split("\n--\n")
    core_block, command_env = base64.b64decode(core_environ), base64.b64decode(own_env)
    assert b"SIGHTLINE_ROOT=" in core_block  # it is the core's environment that was read
    assert API_KEY.encode() not in core_block and API_KEY.encode() not in command_env
