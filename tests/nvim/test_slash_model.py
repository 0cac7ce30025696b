"""A prompt file's `model`: that one turn runs on it (the request carries it, the bar names
it while the turn runs), the next turn is back on the configured model; a model the
provider does not offer is refused before anything is sent, naming the file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fakeopenai as fo
from tests.agent_util import TURN_TIMEOUT_S, idle
from tests.complete_util import bar_note, composer_text, open_composer, send_keys, type_each
from tests.conftest import status, transcript, wait_for
from tests.fakeopenai import FakeOpenAI
from tests.screen import Screen

KEY = "sk-openai-slash-7171"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, isolated_env: Path) -> None:
    for var in ("OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(isolated_env.parent / "home"))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as srv:  # offers gpt-4.1, gpt-4.1-mini, llama3.1
        yield srv
    assert not srv.errors, srv.errors


def gpt(nvim_factory: Any, server: FakeOpenAI) -> Any:
    provider = {
        "name": "openai",
        "base_url": server.base_url,
        "model": "gpt-4.1-mini",
        "retries": 0,
    }
    return nvim_factory({"provider": provider}, env={"OPENAI_API_KEY": KEY})


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def bar(nv: Any, screen: Screen) -> str:
    """The pane's top bar as drawn: the first row of the transcript window."""
    win = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    row, col = nv.call("win_screenpos", win)
    width = nv.api.win_get_width(win)
    return str(screen.lines()[row - 1][col - 1 : col - 1 + width])


def models_known(nv: Any) -> None:
    """The provider's model list fetched: the menu showing a prompt file with a model
    started that (a send before it is there is refused, to send again)."""
    ask = "return require('sightline.host').request('agent.models', {wait_ms = 0})"
    wait_for(lambda: not nv.exec_lua(ask)["loading"], 30, "the model list")


def test_a_prompt_files_model_runs_that_turn_only(
    nvim_factory: Any, screen_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    write(
        isolated_env / ".claude" / "commands" / "deep.md",
        "---\ndescription: Think hard\nmodel: gpt-4.1\n---\nThink hard about $ARGUMENTS\n",
    )
    nv = gpt(nvim_factory, server)
    screen = screen_factory(nv, 200, 30)
    open_composer(nv)
    server.script(fo.hold(after_chunks=1, of=fo.text("deep thoughts")), fo.text("plain"))
    type_each(nv, "/deep")  # the menu shows the file: its model is looked up
    models_known(nv)
    send_keys(nv, " caching")
    server.holding.wait(TURN_TIMEOUT_S)
    first = server.wait_for_requests(1, TURN_TIMEOUT_S)[0].body
    assert first["model"] == "gpt-4.1"
    assert first["messages"][-1]["content"] == "Think hard about caching"
    assert status(nv)["model"] == "gpt-4.1"  # while it runs, the bar names it
    wait_for(lambda: "gpt-4.1 " in bar(nv, screen) or bar(nv, screen).endswith("gpt-4.1"), 10)
    assert "gpt-4.1-mini" not in bar(nv, screen)
    server.release()
    idle(nv)
    wait_for(lambda: "gpt-4.1-mini" in bar(nv, screen), 10, "the configured model again")
    assert status(nv)["model"] == "gpt-4.1-mini"
    send_keys(nv, "and now?")
    idle(nv)
    assert server.wait_for_requests(2, TURN_TIMEOUT_S)[1].body["model"] == "gpt-4.1-mini"


def test_a_model_the_provider_does_not_offer_is_refused_naming_the_file(
    nvim_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    write(isolated_env / ".github" / "prompts" / "big.prompt.md", "---\nmodel: gpt-9\n---\nGo\n")
    nv = gpt(nvim_factory, server)
    open_composer(nv)
    type_each(nv, "/big")
    models_known(nv)
    send_keys(nv, "")
    want = (
        "/big (.github/prompts/big.prompt.md) asks for model gpt-9, which the openai"
        " provider does not offer (gpt-4.1, gpt-4.1-mini, llama3.1); nothing was sent"
    )
    wait_for(lambda: bar_note(nv), 10, "the refusal")
    assert bar_note(nv) == want
    assert composer_text(nv) == ["/big"]  # kept, to fix and send again
    assert not [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert "Go" not in transcript(nv)
    # Copilot's files name a model as its picker shows it: the one id that reads the same
    write(
        isolated_env / ".github" / "prompts" / "picked.prompt.md",
        "---\nmodel: GPT-4.1 (copilot)\n---\nPicked\n",
    )
    nv.input("<C-u>")
    send_keys(nv, "/picked")
    idle(nv)
    sent = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert [r.body["model"] for r in sent] == ["gpt-4.1"]
