"""The Gemini API fake rejects what the real API rejects, and streams what the real one
streams; the pieces of the real-agent test that need no agent (the pin, sightline's own MCP
tools in permission requests)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sightline.providers.acp import MCP_MAIN, mcp_running
from sightline.providers.acp.client import MCP_SERVER, OWN_TOOLS, own_tool
from sightline.tools import view
from tests.conftest import ROOT, wait_for
from tests.fakegemini import FakeGemini, call, reply, sign, text, validation_error
from tests.gemini_cli import VERSION

pytestmark = pytest.mark.timeout(30)
KEY = "k-123"


def user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def model(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": list(parts)}


FC = {"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}
FR = {"functionResponse": {"name": "read_file", "response": {"output": "x"}}}


def test_a_tool_round_trip_is_valid() -> None:
    body = {"contents": [user({"text": "hi"}), model({"text": "look"}, FC), user(FR)]}
    assert validation_error(body) is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"contents": [user({"text": "hi"})], "stream": True}, 'Unknown name "stream"'),
        ({"contents": [user({"text": "hi", "cache": 1})]}, "at 'contents[0].parts[0]'"),
        ({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]}, "valid role"),
        ({"contents": [{"role": "system", "parts": [{"text": "x"}]}]}, "valid role"),
        ({"contents": [user(FR)]}, "immediately after a function call turn"),
        ({"contents": [user({"text": "a"}), model({"text": "b"}), user(FR)]}, "immediately"),
        ({"contents": [user({"text": "a"}), model(FC), user(FR, FR)]}, "number of function"),
        (
            {"contents": [user({"text": "a"}), model(FC), user({"text": "x", "inlineData": {}})]},
            "one data field",
        ),
        ({"contents": [user(FC)]}, "comes from the model"),
        ({"contents": []}, "contents is not specified"),
        ({"contents": [user()]}, "must not be empty"),
        (
            {"contents": [user({"text": "a"})], "generationConfig": {"thinking": {}}},
            "at 'generation_config'",
        ),
    ],
)
def test_what_the_real_api_rejects_is_rejected(body: dict[str, Any], message: str) -> None:
    why = validation_error(body)
    assert why is not None and message in why


@pytest.fixture
def api() -> Iterator[FakeGemini]:
    with FakeGemini(KEY) as server:
        yield server
        assert not server.errors


def post(api: FakeGemini, path: str, body: Any, key: str = KEY) -> tuple[int, bytes]:
    req = urllib.request.Request(
        api.base_url + path,
        data=json.dumps(body).encode(),
        headers={"x-goog-api-key": key, "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def test_a_scripted_reply_streams_as_sse_with_usage_at_the_end(api: FakeGemini) -> None:
    api.script(reply(text("hello world", chunks=2), call("read_file", {"file_path": "a"})))
    code, raw = post(api, STREAM, {"contents": [user({"text": "hi"})]})
    assert code == 200
    events = [
        json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")
    ]
    parts = [p for e in events for p in e["candidates"][0]["content"]["parts"]]
    assert "".join(p.get("text", "") for p in parts) == "hello world"
    fc = {"functionCall": {"name": "read_file", "args": {"file_path": "a"}}}
    assert parts[-1] == {**fc, "thoughtSignature": sign(fc)}  # the first call is signed
    assert "usageMetadata" in events[-1] and "usageMetadata" not in events[0]
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"
    assert api.pending == 0 and len(api.streamed()) == 1


def test_bad_requests_get_the_real_error_shapes_and_keep_the_script(api: FakeGemini) -> None:
    api.script(reply(text("kept")))
    code, raw = post(api, STREAM, {"contents": [user({"text": "hi"})]}, key="wrong")
    assert code == 400 and json.loads(raw)["error"]["status"] == "INVALID_ARGUMENT"
    assert "API_KEY_INVALID" in raw.decode()
    code, raw = post(api, STREAM, {"contents": [user(FR)]})
    assert code == 400 and "function call turn" in json.loads(raw)["error"]["message"]
    code, _ = post(api, "/v1/chat/completions", {})
    assert code == 404
    assert api.pending == 1 and [r.rejected is not None for r in api.requests] == [True] * 3


def test_the_pin_is_the_same_in_the_makefile_and_the_tests() -> None:
    found = re.search(r"^GEMINI_CLI := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert found and found.group(1) == VERSION


# -- sightline's own MCP tools in a permission request -----------------------------------


def test_the_acp_client_knows_our_mcp_tools_by_the_kinds_tools_view_gives_them() -> None:
    # providers/acp may not import tools (tests/unit/test_package_layers.py), so it keeps the
    # names and kinds as data; this holds them to the definitions the MCP server serves.
    served = {t.name: t.kind for t in (view.REVEAL, view.ATTACHMENT, view.GO_TO)}
    assert served == OWN_TOOLS


@pytest.mark.parametrize("name", sorted(OWN_TOOLS))
def test_the_titles_agents_give_our_tools_are_known(name: str) -> None:
    assert own_tool(f"{name} ({MCP_SERVER} MCP Server)") == name  # Gemini CLI
    assert own_tool(f"mcp__{MCP_SERVER}__{name}") == name  # Claude Code


@given(st.text(max_size=80))
def test_any_other_title_goes_to_the_gate(title: str) -> None:
    exact = {f"{n} ({MCP_SERVER} MCP Server)" for n in OWN_TOOLS}
    exact |= {f"mcp__{MCP_SERVER}__{n}" for n in OWN_TOOLS}
    assert (own_tool(title) is not None) == (title in exact)


@given(st.sampled_from(sorted(OWN_TOOLS)), st.text(min_size=1, max_size=20))
def test_a_lookalike_of_our_tool_goes_to_the_gate(name: str, noise: str) -> None:
    for title in (
        f"{name} ({noise} MCP Server)",
        f"{name}{noise} ({MCP_SERVER} MCP Server)",
        f"mcp__{noise}__{name}",
        f"{noise}{name} ({MCP_SERVER} MCP Server)",
    ):
        if noise != MCP_SERVER:
            assert own_tool(title) is None, title


def test_the_mcp_server_is_found_in_the_agents_process_group_only() -> None:
    # A stand-in "agent" in a session of its own, with a child whose command line is the
    # server's start-up; another group with the same command line does not count.
    child = f"import time; time.sleep(30)  # {MCP_MAIN}"
    agent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])",
        ],
        start_new_session=True,
    )
    other = subprocess.Popen([sys.executable, "-c", child], start_new_session=True)
    # An agent that started no server: neither its group nor its descendants run one.
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True
    )
    try:
        wait_for(lambda: mcp_running(agent.pid), 10, "the server in the agent's group")
        assert mcp_running(other.pid - 10**6) is False  # no such group
        assert mcp_running(bystander.pid) is False
    finally:
        for proc in (agent, other, bystander):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
