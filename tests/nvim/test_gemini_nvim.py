"""The gemini provider end to end: a child Neovim set up as the README says
(`provider = { name = 'gemini' }`, the key in $GEMINI_API_KEY), the real google-genai SDK
in the core, the loopback Gemini fake. A streamed reply with tokens and cost; a tool round
trip through the gate whose thought signatures go back as Gemini 3 requires."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fakegemini as fg
from tests.agent_util import TURN_TIMEOUT_S, decide, idle, lines, send, wait_pending
from tests.conftest import status, transcript
from tests.fakegemini import FakeGemini

KEY = "AIza-gemini-e2e-6262"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[FakeGemini]:
    with FakeGemini(KEY) as srv:
        yield srv
    assert not srv.errors, srv.errors


def gemini(nvim_factory: Any, server: FakeGemini, model: str = "gemini-3-pro-preview") -> Any:
    provider = {"name": "gemini", "base_url": server.base_url, "model": model, "retries": 0}
    return nvim_factory({"provider": provider}, env={"GEMINI_API_KEY": KEY})


def test_a_streamed_reply_shows_with_its_model_tokens_and_cost(
    nvim_factory: Any, server: FakeGemini
) -> None:
    nv = gemini(nvim_factory, server, model="gemini-2.5-flash")
    nv.command("set columns=200")
    nv.command("Sightline chat")
    server.script(fg.reply(fg.text("Hello from the fake Gemini.", chunks=4)))
    send(nv, "hello")
    idle(nv)
    assert any("Hello from the fake Gemini." in line for line in transcript(nv))
    st = status(nv)
    assert st["provider"] == "gemini" and st["model"] == "gemini-2.5-flash"
    assert st["tokens"]["input"] > 0 and st["tokens"]["output"] > 0
    assert st["cost"]["total"] > 0
    bar = nv.exec_lua(
        "return vim.wo[vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)].winbar"
    )
    assert "gemini gemini-2.5-flash" in bar and "$" in bar
    (req,) = server.streamed()
    assert req.headers["x-goog-api-key"] == KEY and KEY not in json.dumps(req.body)


def test_a_tool_call_goes_through_the_gate_and_its_signatures_come_back(
    nvim_factory: Any, server: FakeGemini, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x = 1\ny = 2\n")
    nv = gemini(nvim_factory, server)
    nv.command(f"edit {path}")
    buf = nv.api.get_current_buf().number
    edit = {"path": "app.py", "old_string": "y = 2", "new_string": "y = 3"}
    server.script(
        fg.reply(fg.text("Reading."), fg.call("read_file", {"path": "app.py"}, id="fc-read")),
        fg.reply(fg.call("propose_edit", edit)),
        fg.reply(fg.text("Done.")),
    )
    send(nv, "change y")
    wait_pending(nv)
    second = server.wait_for_requests(2, TURN_TIMEOUT_S)[1].body["contents"]
    (answer,) = second[-1]["parts"]
    assert answer["functionResponse"]["id"] == "fc-read"
    assert "x = 1" in answer["functionResponse"]["response"]["output"]
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["x = 1", "y = 3"]
    nv.command("undo")
    assert lines(nv, buf) == ["x = 1", "y = 2"]
    # The third request holds both steps of the turn, each with its call's signature (the
    # fake refuses a Gemini 3 request without them): the history kept them exactly.
    third = server.wait_for_requests(3, TURN_TIMEOUT_S)[2].body["contents"]
    steps = [c for c in third if c["role"] == "model"]
    assert [sum("thoughtSignature" in p for p in s["parts"]) for s in steps] == [1, 1]
    assert server.rejected() == []
    assert any("Done." in line for line in transcript(nv))
    assert not any(KEY in line for line in transcript(nv))


def test_checkhealth_says_the_package_the_key_variable_and_the_endpoint(
    nvim_factory: Any, server: FakeGemini
) -> None:
    nv = gemini(nvim_factory, server)
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "google-genai 3.6.1 (the gemini provider" in text
    assert "an API key is set in $GEMINI_API_KEY" in text
    assert f"endpoint {server.base_url} accepts connections" in text
    assert KEY not in text
