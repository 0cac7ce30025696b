"""The gemini provider through the real google-genai SDK against the loopback Gemini fake:
streaming, thoughts, function calls with ids and thought signatures round-tripped, thinking
levels and budgets, usage, faults in the user's words, Stop; the mapping from any history
is a request the API accepts, and the SDK's own types parse it unchanged."""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain import secrets
from sightline.domain.wire import wire_messages
from sightline.providers import make_provider
from sightline.providers.base import ProviderError, Reply, Request, Retrying, TextDelta, Usage
from sightline.providers.base import ThinkingDelta as Thinking
from sightline.providers.gemini_api import EXTRA_MISSING, GeminiProvider, gemini_body
from tests import fakegemini as fg
from tests.effective_config import provider_config
from tests.fakegemini import FakeGemini, validation_error
from tests.history_strategies import PROMPT, RECORD, turns

KEY = "AIza-gemini-secret-5555"
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {"name": "grep", "description": "Search", "input_schema": {"type": "object"}},
]


@pytest.fixture
def api() -> Iterator[FakeGemini]:
    with FakeGemini(KEY) as server:
        yield server
    assert not server.errors, "fake Gemini crashed:\n" + "\n".join(server.errors)


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


def provider(server: FakeGemini, **kw: Any) -> Any:
    kw.setdefault("model", "gemini-3-pro-preview")
    return make_provider(provider_config(name="gemini", base_url=server.base_url, **kw))


def run(p: Any, records: list[Any]) -> list[Any]:
    request = Request("system text", wire_messages(records, signatures=True), TOOLS)
    return list(p.stream(request, lambda: False))


def prompt(text: str = "hi") -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "text", "text": text}]}


def turn_of(records: list[Any], reply: Reply, output: str = "x = 1") -> list[Any]:
    """records + the reply + one result per call, as the session records them."""
    calls = [b for b in reply.content if b["type"] == "tool_use"]
    results = [{"type": "tool_result", "tool_use_id": c["id"], "content": output} for c in calls]
    return [
        *records,
        {"type": "message", "role": "assistant", "content": reply.content},
        {"type": "message", "role": "user", "content": results},
    ]


def test_a_reply_streams_its_text_then_one_reply_with_usage(api: FakeGemini) -> None:
    api.script(fg.reply(fg.text("hello there, world", chunks=3)))
    events = run(provider(api, model="gemini-2.5-flash"), [prompt()])
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["hello ", "there,", " world"]
    reply = events[-1]
    assert isinstance(reply, Reply) and reply.stop_reason == "end_turn"
    assert [b["text"] for b in reply.content] == ["hello there, world"]
    assert reply.input_tokens > 0 and reply.output_tokens > 0
    assert any(isinstance(e, Usage) for e in events)
    (req,) = api.streamed()
    assert req.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert req.headers["x-goog-api-key"] == KEY
    body = req.body
    assert body["systemInstruction"] == {"parts": [{"text": "system text"}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert body["generationConfig"] == {"maxOutputTokens": 8192}
    decls = body["tools"][0]["functionDeclarations"]
    assert decls[0] == {
        "name": "read_file",
        "description": "Read a file",
        "parametersJsonSchema": TOOLS[0]["input_schema"],
    }


def test_function_calls_keep_their_ids_and_signatures_round_trip(api: FakeGemini) -> None:
    """The rule of Gemini 3: every step of the turn sends its first call's signature back,
    in that part. Two steps, then the answer; the fake rejects any request without them."""
    api.script(
        fg.reply(
            fg.text("Let me look."),
            fg.call("read_file", {"path": "a.py"}, id="fc-1"),
            fg.call("grep", {"q": "x"}, id="fc-2"),
        ),
        fg.reply(fg.call("read_file", {"path": "b.py"})),  # no id: one is made
        fg.reply(fg.text("done")),
    )
    p = provider(api)
    records: list[Any] = [prompt("look at a.py")]
    first = run(p, records)[-1]
    assert first.stop_reason == "tool_use"
    text, call1, call2 = first.content
    assert text == {"type": "text", "text": "Let me look."}
    assert (call1["id"], call1["name"], call1["input"]) == ("fc-1", "read_file", {"path": "a.py"})
    assert call2["id"] == "fc-2" and "signature" not in call2  # only the first is signed
    assert base64.b64decode(call1["signature"]) == base64.b64decode(
        fg.sign({"functionCall": {"name": "read_file", "args": {"path": "a.py"}}})
    )
    records = turn_of(records, first)
    second = run(p, records)[-1]
    made_id = second.content[0]["id"]
    assert made_id and made_id not in ("fc-1", "fc-2") and "signature" in second.content[0]
    records = turn_of(records, second)
    third = run(p, records)[-1]
    assert third.content[0]["text"] == "done"
    assert api.rejected() == []
    sent = api.streamed()[2].body["contents"]
    model_steps = [c for c in sent if c["role"] == "model"]
    assert [p.get("thoughtSignature") is not None for p in model_steps[0]["parts"]] == [
        False,
        True,
        False,
    ]
    answers = sent[2]["parts"]
    assert [a["functionResponse"]["id"] for a in answers] == ["fc-1", "fc-2"]
    assert answers[0]["functionResponse"] == {
        "id": "fc-1",
        "name": "read_file",
        "response": {"output": "x = 1"},
    }


def test_the_fake_refuses_the_turn_when_a_signature_is_dropped_or_moved(api: FakeGemini) -> None:
    """What the real API answers, so the round trip above proves something: the same
    history sent without signatures (or with one on another call) is a 400."""
    api.script(fg.reply(fg.call("read_file", {"path": "a.py"}, id="fc-1")))
    p = provider(api)
    records = turn_of([prompt()], run(p, [prompt()])[-1])
    unsigned = gemini_body(p.cfg, Request("s", wire_messages(records), TOOLS))
    why = validation_error(unsigned, "gemini-3-pro-preview")
    # The provider itself never sends that: an unsigned step goes as text (next test).
    assert why is None
    body = gemini_body(p.cfg, Request("s", wire_messages(records, signatures=True), TOOLS))
    fc_part = body["contents"][1]["parts"][0]
    del fc_part["thoughtSignature"]
    why = validation_error(body, "gemini-3-pro-preview")
    assert why is not None and "missing a thought_signature" in why
    fc_part["thoughtSignature"] = fg.sign({"functionCall": {"name": "grep", "args": {}}})
    assert "Corrupted thought signature" in (validation_error(body, "gemini-3") or "")


def test_an_unsigned_step_of_the_current_turn_goes_as_text(api: FakeGemini) -> None:
    """Calls another provider made earlier in this turn have no signature to send back:
    Gemini 3 would refuse them as calls, so the model reads them as text."""
    records = [
        prompt("look"),
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"q": 1}}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "hit"}],
        },
    ]
    api.script(fg.reply(fg.text("fine")))
    assert run(provider(api), records)[-1].content[0]["text"] == "fine"
    contents = api.streamed()[0].body["contents"]
    assert contents[1] == {"role": "model", "parts": [{"text": '[called grep {"q": 1}]'}]}
    assert contents[2] == {"role": "user", "parts": [{"text": "[result of grep] hit"}]}
    # Gemini 2.x takes unsigned calls as calls.
    api.script(fg.reply(fg.text("fine")))
    run(provider(api, model="gemini-2.5-flash"), records)
    assert "functionCall" in api.streamed()[1].body["contents"][1]["parts"][0]


def test_a_conversation_gemini_signed_goes_on_with_another_provider(api: FakeGemini) -> None:
    """The signatures stay in the history, but only a provider that asks gets them: the
    same records are a valid Messages API request (Claude would refuse the extra key)."""
    from tests.fakeapi import validation_error as messages_error

    api.script(fg.reply(fg.text("Reading."), fg.call("read_file", {"path": "a.py"})))
    records = turn_of([prompt()], run(provider(api), [prompt()])[-1])
    assert any("signature" in b for r in records for b in r["content"])
    plain = wire_messages([*records, PROMPT])
    assert "signature" not in json.dumps(plain)
    assert messages_error({"model": "claude-t", "max_tokens": 64, "messages": plain}) is None


def body_for(records: list[Any], model: str, thinking: Any = None) -> dict[str, Any]:
    cfg = provider_config(name="gemini", model=model, thinking=thinking)
    request = Request("sys", wire_messages([*records, PROMPT], signatures=True), TOOLS)
    return gemini_body(cfg, request)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(RECORD, max_size=12) | turns(),
    st.sampled_from(["gemini-2.5-flash", "gemini-3-pro-preview"]),
    st.sampled_from([None, "low", "high", 2048]),
)
def test_any_history_maps_to_a_request_the_api_accepts(
    records: list[Any], model: str, thinking: Any
) -> None:
    """The rule every provider passes: whatever the history holds, the request is valid —
    and the SDK's own types read it back unchanged (what it sends is that JSON)."""
    from google.genai import types

    body = body_for(records, model, thinking)
    assert validation_error(body, model) is None, body
    for content in body["contents"]:
        parsed = types.Content.model_validate_json(json.dumps(content))
        again = parsed.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert fg.wire_names(again) == fg.wire_names(_urlsafe(content))


def _urlsafe(content: dict[str, Any]) -> dict[str, Any]:
    """The SDK writes bytes in URL-safe base64; the API reads either."""
    out: dict[str, Any] = json.loads(json.dumps(content))
    for part in out["parts"]:
        if "thoughtSignature" in part:
            raw = base64.b64decode(part["thoughtSignature"])
            part["thoughtSignature"] = base64.urlsafe_b64encode(raw).decode()
    return out


@pytest.mark.parametrize(
    ("model", "thinking", "expected"),
    [
        ("gemini-3-pro-preview", "high", {"thinkingLevel": "high", "includeThoughts": True}),
        ("gemini-2.5-flash", 4096, {"thinkingBudget": 4096, "includeThoughts": True}),
        ("gemini-2.5-pro", "low", {"thinkingBudget": 2048, "includeThoughts": True}),
        ("gemini-2.5-flash", None, None),
    ],
)
def test_thinking_is_a_level_for_gemini_3_and_a_budget_before(
    model: str, thinking: Any, expected: Any
) -> None:
    gen = body_for([], model, thinking)["generationConfig"]
    assert gen.get("thinkingConfig") == expected
    assert validation_error(body_for([], model, thinking), model) is None


def test_thoughts_are_shown_and_never_recorded(api: FakeGemini) -> None:
    api.script(
        fg.reply(
            fg.thought("weighing the options"),
            fg.text("answer"),
            usage={"thoughtsTokenCount": 40, "candidatesTokenCount": 2},
        )
    )
    events = run(provider(api, thinking="high"), [prompt()])
    assert "".join(e.text for e in events if isinstance(e, Thinking)) == "weighing the options"
    reply = events[-1]
    assert [b["type"] for b in reply.content] == ["text"] and reply.output_tokens == 42
    sent = api.streamed()[0].body["generationConfig"]["thinkingConfig"]
    assert sent == {"thinkingLevel": "HIGH", "includeThoughts": True}


def test_cached_tokens_are_not_counted_twice(api: FakeGemini) -> None:
    api.script(
        fg.reply(
            fg.text("hi"),
            usage={
                "promptTokenCount": 1000,
                "cachedContentTokenCount": 800,
                "candidatesTokenCount": 5,
            },
        )
    )
    reply = run(provider(api), [prompt()])[-1]
    assert (reply.input_tokens, reply.cache_read_tokens, reply.output_tokens) == (200, 800, 5)


@pytest.mark.parametrize(
    ("step", "words"),
    [
        (fg.http_error(400, reason="API_KEY_INVALID", message=f"bad key {KEY}"), "$GEMINI_API_KEY"),
        (fg.http_error(403), "Generative Language API"),
        (fg.http_error(404, message="models/nope is not found"), "provider.model"),
        (
            fg.http_error(400, "FAILED_PRECONDITION", "User location is not supported"),
            "not available here",
        ),
        (fg.http_error(500), "internal error (500)"),
        (fg.cut(after=1), "connection to the API was lost"),
        (fg.truncated(after=1), "ended before it was complete"),
    ],
)
def test_every_fault_is_one_line_in_the_users_words(api: FakeGemini, step: Any, words: str) -> None:
    api.script(step)
    with pytest.raises(ProviderError) as err:
        run(provider(api, retries=0), [prompt()])
    message = err.value.message
    assert words in message and "\n" not in message and KEY not in message


def test_429_waits_the_retry_delay_it_names_and_says_so(api: FakeGemini) -> None:
    api.script(fg.http_error(429, retry_delay=0.2), fg.reply(fg.text("after the wait")))
    started = time.monotonic()
    events = run(provider(api, retries=1), [prompt()])
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.delay_s == pytest.approx(0.2) and "Quota exceeded (429" in retry.reason
    assert time.monotonic() - started >= 0.2
    assert events[-1].content[0]["text"] == "after the wait"


def test_connection_refused_says_where_the_address_came_from() -> None:
    with FakeGemini(KEY) as server:
        url = server.base_url
    with pytest.raises(ProviderError) as err:
        run(make_provider(provider_config(name="gemini", base_url=url, retries=0)), [prompt()])
    assert "Could not connect to 127.0.0.1" in err.value.message
    assert "provider.base_url" in err.value.message


def test_stop_closes_the_stream_at_once(api: FakeGemini) -> None:
    api.script(fg.hold(after=1))
    p = provider(api)
    events: list[Any] = []
    worker = threading.Thread(target=lambda: events.extend(run(p, [prompt()])))
    worker.start()
    assert api.holding.wait(10)
    started = time.monotonic()
    p.cancel()
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - started < 1.0
    assert api.disconnected.wait(5)
    assert not any(isinstance(e, Reply) for e in events)


def test_the_key_comes_from_google_api_key_or_the_command_and_is_redacted(
    api: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    run(provider(api), [prompt()])
    monkeypatch.delenv("GOOGLE_API_KEY")
    with pytest.raises(ProviderError, match=r"set \$GEMINI_API_KEY .*provider.api_key_cmd"):
        run(provider(api), [prompt()])
    run(provider(api, api_key_cmd=["echo", KEY]), [prompt()])
    assert [r.headers["x-goog-api-key"] for r in api.streamed()] == [KEY, KEY]
    assert secrets.redact(f"key={KEY}") == "key=[REDACTED]"


def test_a_missing_sdk_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)  # import raises ImportError
    p = make_provider(provider_config(name="gemini"))
    assert isinstance(p, GeminiProvider)  # made without the SDK: nothing imported
    with pytest.raises(ProviderError) as err:
        p.prepare()
    assert err.value.message == EXTRA_MISSING and "sightline[gemini]" in EXTRA_MISSING


def test_models_lists_those_that_generate_content(api: FakeGemini) -> None:
    assert provider(api).models() == ["gemini-2.5-flash", "gemini-3-pro-preview"]
