"""The openai provider through the real openai SDK against the loopback Chat Completions fake:
streaming, tool calls split across chunks, usage, faults, tools refused, Stop; the mapping
from any history is a request the API accepts."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain import secrets
from sightline.domain.wire import wire_messages
from sightline.providers import make_provider
from sightline.providers.base import (
    Notice,
    ProviderError,
    Reply,
    Request,
    Retrying,
    TextDelta,
    Usage,
)
from sightline.providers.openai_api import OpenAIProvider, chat_request
from tests import fakeopenai as fo
from tests.effective_config import provider_config
from tests.fakeopenai import FakeOpenAI, fake_openai, validation_error
from tests.history_strategies import PROMPT, RECORD, turns

__all__ = ["fake_openai"]

KEY = "sk-openai-secret-7777"
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def provider(server: FakeOpenAI, **kw: Any) -> Any:
    cfg = provider_config(name=kw.pop("name", "openai"), base_url=server.base_url, **kw)
    return make_provider(cfg)


def ask(text: str = "hi") -> Request:
    return Request(
        "system text", [{"role": "user", "content": [{"type": "text", "text": text}]}], TOOLS
    )


def run(p: Any, request: Request | None = None) -> list[Any]:
    return list(p.stream(request or ask(), lambda: False))


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_a_chat_streams_text_then_one_reply_with_usage(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(fo.text("hello there, world", chunks=3))
    events = run(provider(fake_openai, model="gpt-4.1-mini"))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["hello ", "there,", " world"]
    usage = [e for e in events if isinstance(e, Usage)]
    reply = events[-1]
    assert isinstance(reply, Reply) and reply.stop_reason == "end_turn"
    assert reply.content == [{"type": "text", "text": "hello there, world"}]
    assert usage and reply.input_tokens == usage[-1].input > 0 and reply.output_tokens > 0
    (req,) = fake_openai.completions()
    body = req.body
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "gpt-4.1-mini" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "system text"}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": TOOLS[0]["input_schema"],
            },
        }
    ]
    assert body["max_completion_tokens"] == 8192


def test_tool_call_deltas_split_across_chunks_become_one_tool_use(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        fo.reply(
            fo.text("Let me look."),
            fo.tool_call("read_file", {"path": "src/app.py"}, id="call_1", chunks=5),
            fo.tool_call("read_file", {"path": "b.py"}, id="call_2", chunks=2),
        )
    )
    reply = run(provider(fake_openai))[-1]
    assert reply.stop_reason == "tool_use"
    assert reply.content == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "src/app.py"}},
        {"type": "tool_use", "id": "call_2", "name": "read_file", "input": {"path": "b.py"}},
    ]


def test_a_tool_round_trip_maps_results_to_tool_messages(fake_openai: FakeOpenAI) -> None:
    records = [
        PROMPT,
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_9", "name": "read_file", "input": {"path": "a"}}
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_9",
                    "content": "x = 1",
                    "is_error": False,
                }
            ],
        },
    ]
    request = Request("sys", wire_messages(records), TOOLS)
    run(provider(fake_openai), request)
    msgs = fake_openai.completions()[0].body["messages"]
    assert msgs[1:] == [
        {"role": "user", "content": "next prompt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "x = 1"},
    ]


def body_for(records: list[Any], tools_on: bool) -> dict[str, Any]:
    request = Request("sys", wire_messages([*records, PROMPT]), TOOLS)
    return chat_request(provider_config(name="openai", model="m"), request, tools_on)


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD, max_size=12) | turns(), st.booleans())
def test_any_history_maps_to_a_request_the_api_accepts(records: list[Any], tools_on: bool) -> None:
    """The rule: whatever the history holds, the Chat Completions request is valid — with
    tools or, for a model that refused them, without."""
    body = body_for(records, tools_on)
    assert validation_error(body) is None, body
    if not tools_on:
        assert "tools" not in body and all(m["role"] != "tool" for m in body["messages"])


@pytest.mark.parametrize(
    "messages, why",
    [
        (
            [
                {"role": "user", "content": "a"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ],
            "preceeding",
        ),
        (
            [
                {"role": "user", "content": "a"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "user", "content": "b"},
            ],
            "did not have response",
        ),
        ([{"role": "robot", "content": "a"}], "Supported values"),
    ],
)
def test_the_fake_rejects_what_the_api_rejects(messages: list[Any], why: str) -> None:
    assert why in (validation_error({"model": "m", "messages": messages}) or "")


def test_401_is_one_line_naming_the_variable_and_never_the_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(fo.http_error(401, f"Incorrect API key provided: {KEY}"))
    with pytest.raises(ProviderError) as err:
        run(provider(fake_openai))
    assert "401" in err.value.message and "$OPENAI_API_KEY" in err.value.message
    assert KEY not in err.value.message and "\n" not in err.value.message
    assert secrets.redact(KEY) == "[REDACTED]"


def test_429_honours_retry_after_and_each_retry_is_shown(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(fo.http_error(429, retry_after=0.2), fo.text("after the wait"))
    started = time.monotonic()
    events = run(provider(fake_openai, retries=1))
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.delay_s == pytest.approx(0.2) and "429" in retry.reason
    assert time.monotonic() - started >= 0.2
    assert events[-1].content == [{"type": "text", "text": "after the wait"}]


def test_retry_after_is_capped_at_30_s(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(fo.http_error(429, retry_after=600))
    p = provider(fake_openai, retries=1)
    gen = p.stream(ask(), lambda: False)
    retry = next(gen)
    assert isinstance(retry, Retrying) and retry.delay_s == 30
    p.cancel()  # the wait ends at once
    assert list(gen) == []


@pytest.mark.parametrize(
    "step, words",
    [
        (fo.http_error(500), "internal error (500)"),
        (fo.cut(after_chunks=2), "connection to the API was lost"),
        (fo.truncated(after_chunks=2), "ended before it was complete"),
        (fo.error_chunk(after_chunks=2), "error mid-reply"),
    ],
)
def test_every_fault_ends_with_one_clear_line(
    fake_openai: FakeOpenAI, step: Any, words: str
) -> None:
    fake_openai.script(step)
    with pytest.raises(ProviderError) as err:
        run(provider(fake_openai, retries=0))
    assert words in err.value.message and "\n" not in err.value.message


def test_connection_refused_names_the_server() -> None:
    with FakeOpenAI() as server:
        url = server.base_url
    p = make_provider(provider_config(name="ollama", base_url=url, retries=0))
    with pytest.raises(ProviderError) as err:
        run(p)
    assert f"Could not connect to {url}" in err.value.message


def test_a_model_without_tools_chats_and_says_so_once(fake_openai: FakeOpenAI) -> None:
    fake_openai.no_tools("tiny")
    fake_openai.script(fo.text("no tools here"), fo.text("still none"))
    p = provider(fake_openai, name="ollama", model="tiny")
    first = run(p)
    second = run(p)
    notices = [e for e in first + second if isinstance(e, Notice)]
    assert len(notices) == 1 and "tiny does not support tools" in notices[0].text
    assert first[-1].content == [{"type": "text", "text": "no tools here"}]
    bodies = [r.body for r in fake_openai.completions()]
    assert ["tools" in b for b in bodies] == [True, False, False]


def test_ollama_needs_no_key_and_openai_says_which_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI(require_key=False) as server:
        reply = run(make_provider(provider_config(name="ollama", base_url=server.base_url)))[-1]
        assert reply.content == [{"type": "text", "text": "ok"}]
        assert server.completions()[0].body["model"] == "llama3.1"  # the preset's default
        with pytest.raises(ProviderError, match=r"set \$OPENAI_API_KEY or provider.api_key_cmd"):
            run(provider(server))


def test_api_key_cmd_is_used_and_redacted(
    monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    run(provider(fake_openai, name="openrouter", api_key_cmd=["echo", "sk-from-cmd-1234"]))
    assert fake_openai.completions()[0].headers["authorization"] == "Bearer sk-from-cmd-1234"
    assert "sk-from-cmd-1234" not in secrets.redact("key sk-from-cmd-1234")


def test_stop_closes_the_stream_at_once(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(fo.hold(after_chunks=2))
    p = provider(fake_openai)
    events: list[Any] = []
    worker = threading.Thread(target=lambda: events.extend(p.stream(ask(), lambda: False)))
    worker.start()
    assert fake_openai.holding.wait(10)
    started = time.monotonic()
    p.cancel()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - started < 1.0
    assert fake_openai.disconnected.wait(5)
    assert not any(isinstance(e, Reply) for e in events)


def test_models_are_listed(fake_openai: FakeOpenAI) -> None:
    p = provider(fake_openai)
    assert isinstance(p, OpenAIProvider)
    assert p.models() == ["gpt-4.1", "gpt-4.1-mini", "llama3.1"]


def test_cached_tokens_are_not_counted_twice(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(
        fo.reply(
            fo.text("hi"),
            usage={
                "prompt_tokens": 1000,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 800},
            },
        )
    )
    reply = run(provider(fake_openai))[-1]
    assert (reply.input_tokens, reply.cache_read_tokens, reply.output_tokens) == (200, 800, 5)


@pytest.mark.parametrize("module", ["anthropic_api", "openai_api"])
def test_api_key_cmd_runs_without_stdin_or_the_other_keys(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One runner for every provider: the core's stdin is its RPC channel to Neovim, and the
    # command must not see the keys the core holds.
    import importlib

    resolve = importlib.import_module(f"sightline.providers.{module}").resolve_api_key
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-other-key-5678")
    script = 'test -z "$OPENROUTER_API_KEY" && test -z "$(cat)" && echo sk-from-cmd-4321'
    cfg = provider_config(
        name="openai" if module == "openai_api" else "anthropic",
        api_key_cmd=["sh", "-c", script],
    )
    assert resolve(cfg) == "sk-from-cmd-4321"
