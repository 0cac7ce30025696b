"""Long conversations: `:Sightline compact` and the automatic trigger summarise the older
turns by a model request; the history keeps the originals and a compaction record; the next
request (from the summary and what follows) is valid; a reopened conversation goes on from
the summary. Against the Messages fake (real anthropic SDK) and the Chat Completions fake
(real openai SDK), in a child Neovim."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sightline.agent import compaction
from sightline.domain.wire import SUMMARY_INTRO
from tests import fakeapi as fa
from tests import fakeopenai as fo
from tests.agent_util import TURN_TIMEOUT_S, claude, idle, send, texts
from tests.conftest import capture_notify, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, validation_error

__all__ = ["fake_api"]

OPENAI_KEY = "sk-openai-compact-77"


def history_records(isolated_env: Path) -> list[dict[str, Any]]:
    """The conversation's records but the turns' footers (`done` events)."""
    (path,) = (isolated_env.parent / "xdg" / "data" / "sightline" / "history").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in records if r.get("event") != "done"]


# -- pure -----------------------------------------------------------------------------------


# -- anthropic, end to end -------------------------------------------------------------------


def test_sightline_compact_typed_then_the_next_request_and_a_reopen_use_the_summary(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, isolated_env: Path
) -> None:
    fake_api.script(
        fa.text("Paris is the capital."),
        fa.text("It has 2 million people."),
        fa.text("User asked about Paris: capital of France, 2M people."),
        fa.text("Yes."),
        fa.text("Still yes."),
    )
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 120, 40)
    nv.command("Sightline chat")
    send(nv, "what is Paris?")
    idle(nv)
    send(nv, "how big?")
    idle(nv)
    nv.input("<Esc>")  # leave the composer's Insert mode; typed from the editor window
    nv.command("wincmd p")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n")
    editor = nv.api.get_current_buf()
    tick = editor.api.get_var("changedtick")
    nv.input(":Sightline compact<CR>")
    screen.wait_text("Conversation compacted: 4 earlier messages", TURN_TIMEOUT_S)
    idle(nv)
    assert editor.api.get_var("changedtick") == tick  # nothing typed into the buffer
    reqs = fake_api.wait_for_requests(3)
    summarising = reqs[2].body
    assert summarising["system"][0]["text"] == compaction.SYSTEM
    assert "tools" not in summarising
    asked = summarising["messages"][0]["content"][0]["text"]
    assert "what is Paris?" in asked and "It has 2 million people." in asked
    records = history_records(isolated_env)
    assert [r["type"] for r in records].count("message") == 4  # the originals stay
    assert records[-1]["type"] == "compaction" and records[-1]["keep"] == 0
    send(nv, "is it in France?")
    idle(nv)
    body = fake_api.wait_for_requests(4)[3].body
    assert validation_error(body) is None
    assert len(body["messages"]) == 1
    summary = SUMMARY_INTRO + "User asked about Paris: capital of France, 2M people."
    assert texts(body["messages"][0]) == [summary, "is it in France?"]
    # Cache breakpoints: the tools, the system prompt and the last turn, no more.
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][-1]["cache_control"] and body["tools"][-1]["cache_control"]
    # Reopened from history: the note is shown and the conversation goes on from the summary.
    (path,) = (isolated_env.parent / "xdg" / "data" / "sightline" / "history").glob("*.jsonl")
    nv.command("Sightline reset")
    assert nv.exec_lua("return {require('sightline').open_conversation(...)}", str(path)) == [True]
    # The reopened transcript arrives as a pushed update: wait for it.
    shown = wait_for(
        lambda: (text := "\n".join(transcript(nv))) and "Conversation compacted" in text and text,
        what="the reopened transcript",
    )
    assert "what is Paris?" in shown
    send(nv, "sure?")
    idle(nv)
    body = fake_api.wait_for_requests(5)[4].body
    assert validation_error(body) is None
    assert texts(body["messages"][0])[0] == summary
    assert "what is Paris?" not in json.dumps(body["messages"])


def test_compact_with_nothing_to_compact_is_refused_and_changes_nothing(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    nv.command("Sightline compact")
    assert fake_api.requests == []
    assert any("nothing to compact" in n["msg"] for n in notes()), notes()


def test_the_conversation_is_compacted_when_it_nears_the_context_window(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    fake_api.script(
        fa.reply(fa.text("a long answer"), usage={"input_tokens": 700, "output_tokens": 200}),
        fa.text("Summary: a long answer was given."),
        fa.text("short now"),
    )
    provider = {
        "name": "anthropic",
        "base_url": fake_api.base_url,
        "retries": 0,
        "context_window": 1024,
    }
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": "sk-test-1"})
    send(nv, "first")
    idle(nv)
    send(nv, "second")
    idle(nv)
    reqs = fake_api.wait_for_requests(3)
    assert reqs[1].body["system"][0]["text"] == compaction.SYSTEM
    body = reqs[2].body
    assert validation_error(body) is None
    assert texts(body["messages"][0]) == [
        SUMMARY_INTRO + "Summary: a long answer was given.",
        "second",
    ]
    assert "Conversation compacted: 2 earlier messages" in "\n".join(transcript(nv))
    records = history_records(isolated_env)
    kinds = [r.get("role") or r["type"] for r in records]
    # The prompt of the turn stays; the compaction comes after it and keeps it.
    assert kinds[-3:] == ["user", "compaction", "assistant"]
    assert records[-2]["keep"] == 1


# -- openai, end to end ----------------------------------------------------------------------


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[fo.FakeOpenAI]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with fo.FakeOpenAI(api_key=OPENAI_KEY) as srv:
        yield srv
    assert not srv.errors, srv.errors


def test_compaction_through_the_openai_provider_makes_a_valid_request(
    nvim_factory: Any, openai_server: fo.FakeOpenAI
) -> None:
    openai_server.script(fo.text("one"), fo.text("Summary of one."), fo.text("two"))
    provider = {
        "name": "openai",
        "base_url": openai_server.base_url,
        "model": "gpt-4.1-mini",
        "retries": 0,
    }
    nv = nvim_factory({"provider": provider}, env={"OPENAI_API_KEY": OPENAI_KEY})
    send(nv, "first")
    idle(nv)
    nv.command("Sightline compact")
    wait_for(lambda: "Conversation compacted" in "\n".join(transcript(nv)), TURN_TIMEOUT_S)
    idle(nv)
    send(nv, "second")
    idle(nv)
    reqs = openai_server.wait_for_requests(3, TURN_TIMEOUT_S)
    assert reqs[1].body["messages"][0] == {"role": "system", "content": compaction.SYSTEM}
    assert "tools" not in reqs[1].body
    last = reqs[2].body
    assert fo.validation_error(last) is None
    assert last["messages"][1] == {
        "role": "user",
        "content": SUMMARY_INTRO + "Summary of one.\n\nsecond",
    }


def test_stop_during_compact_records_nothing_and_the_conversation_goes_on(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    fake_api.script(fa.text("one"), fa.hold(of=fa.text("a summary never finished")), fa.text("two"))
    nv = claude(nvim_factory, fake_api)
    send(nv, "first")
    idle(nv)
    nv.command("Sightline compact")
    assert fake_api.holding.wait(TURN_TIMEOUT_S)
    assert nv.exec_lua("return require('sightline').status().state") == "working"
    assert nv.exec_lua("return {require('sightline').stop()}")[0] is True
    idle(nv)
    assert not any(r["type"] == "compaction" for r in history_records(isolated_env))
    send(nv, "second")
    idle(nv)
    body = fake_api.wait_for_requests(3)[2].body
    assert validation_error(body) is None
    assert texts(body["messages"][0]) == ["first"]  # not compacted
    assert "two" in "\n".join(transcript(nv))
