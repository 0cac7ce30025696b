"""The rule: the request built from any history the core can write is a valid Messages API
conversation (the loopback server's validator, which rejects what the real API rejects), and
a history file of any shape is read without breaking the listing, the reopen or the request.

Property tests over random record sequences (malformed records, duplicate ids, non-object
inputs, surrogate escapes, a crash at every point), then the named instances."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.agent.replay import render_records
from sightline.domain import history, images
from sightline.domain.wire import (
    ABANDONED,
    NO_REPLY,
    SUMMARY_INTRO,
    cut_off,
    unanswered,
    wire_messages,
)
from sightline.providers.anthropic_api import AnthropicProvider
from sightline.providers.base import Request
from sightline.ui.transcript import Transcript
from tests.effective_config import provider_config
from tests.fakeapi import fake_api, validation_error
from tests.history_strategies import (
    PROMPT,
    RECORD,
    turns,
)

__all__ = ["fake_api"]


def body(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 64, "messages": messages}


THINKING_ON = AnthropicProvider(provider_config(name="anthropic", model="claude-t", thinking=2048))


def assert_valid(records: list[Any]) -> list[dict[str, Any]]:
    """What the next send does: the user's record, then the request from the history, as
    sent with thinking off and with it on (then the provider adds budget and breakpoints)."""
    messages = images.inline(wire_messages([*records, PROMPT]))
    problem = validation_error(body(messages))
    assert problem is None, (problem, messages)
    sent = THINKING_ON._params(Request("system", messages, [{"name": "t", "input_schema": {}}]))
    problem = validation_error(sent)
    assert problem is None, (problem, sent)
    # Safe on the wire: encodable as the SDK encodes it (no lone surrogates).
    json.dumps(body(messages), ensure_ascii=False).encode("utf-8")
    return messages


# -- strategies ----------------------------------------------------------------------------------


# -- the rule ------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.lists(RECORD, max_size=12))
def test_any_records_make_a_valid_request(records: list[Any]) -> None:
    assert_valid(records)


@settings(max_examples=300, deadline=None)
@given(turns())
def test_sessions_cut_anywhere_make_a_valid_request(records: list[dict[str, Any]]) -> None:
    assert_valid(records)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(RECORD, max_size=10))
def test_any_history_file_lists_reopens_renders_and_continues(
    tmp_path: Path, records: list[Any]
) -> None:
    path = tmp_path / "20250101-000000-fuzz.jsonl"
    meta = {"type": "meta", "id": "fuzz", "workspace": "/ws", "created": 1.0}
    lines = [json.dumps(meta)] + [json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    listed = history.list_conversations(tmp_path, "/ws")  # never raises
    assert len(listed) <= 1
    conv = history.Conversation.load(path)
    try:
        render_records(Transcript(), conv.records)  # never raises
        assert_valid(conv.records)
        assert all(history.check_record(r) is None for r in conv.records)
    finally:
        conv.close()


def assert_asked_alone(messages: list[dict[str, Any]]) -> None:
    """The next prompt is the only prompt of the message the model answers: before it there
    stand only the answers to the calls of the reply before (or a compaction's summary)."""
    last = messages[-1]["content"]
    assert last[-1]["type"] == "text" and last[-1]["text"] == "next prompt", last
    for block in last[:-1]:
        summary = block["type"] == "text" and block["text"].startswith(SUMMARY_INTRO)
        assert block["type"] == "tool_result" or summary, messages


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD, max_size=12))
def test_any_records_never_ask_an_earlier_prompt_again(records: list[Any]) -> None:
    assert_asked_alone(assert_valid(records))


@settings(max_examples=300, deadline=None)
@given(turns())
def test_sessions_cut_anywhere_never_ask_an_earlier_prompt_again(
    records: list[dict[str, Any]],
) -> None:
    assert_asked_alone(assert_valid(records))


# -- the instances -------------------------------------------------------------------------------


def test_a_prompt_cut_off_by_quitting_is_interrupted_and_asked_apart() -> None:
    old = {**PROMPT, "content": [{"type": "text", "text": "long story please"}], "visible": "q"}
    assert cut_off([old]) and not cut_off([old, reply({"type": "text", "text": "a"})])
    assert not cut_off([old, {"type": "event", "event": "stopped"}])
    assert not cut_off([PROMPT, reply(call("t1")), answer("t1"), {"type": "event"}])
    assert cut_off([PROMPT, reply(call("t1")), answer("t1")])  # the reply after results
    messages = assert_valid([old, {"type": "event", "event": "interrupted"}])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": NO_REPLY["interrupted"]}]
    t = Transcript()
    render_records(t, [old, {"type": "event", "event": "interrupted"}])
    assert t.lines[-1] == "✗ interrupted: the session ended before the reply"


def test_a_recorded_footer_is_shown_again_and_a_damaged_one_left_out() -> None:
    done = {
        "type": "event",
        "event": "done",
        "seconds": 1.25,
        "tokens": {"input": 12, "output": 3, "cache_read": 0, "cache_write": 0},
        "cost": 0.0012,
    }
    t = Transcript()
    render_records(t, [PROMPT, reply({"type": "text", "text": "a"}), done])
    assert t.lines[-1] == "─ 1.2 s · 12 in · 3 out · $0.0012"
    for bad in ({"seconds": "1"}, {"tokens": [1]}, {"cost": "free"}, {"tokens": {"input": -1}}):
        t = Transcript()
        render_records(t, [PROMPT, reply({"type": "text", "text": "a"}), {**done, **bad}])
        assert t.lines[-1] == "a"


def test_a_compaction_replaces_what_came_before_it_but_the_kept_records() -> None:
    old = {**PROMPT, "content": [{"type": "text", "text": "old question"}], "visible": "old"}
    summary = {"type": "compaction", "summary": "They asked about x.", "keep": 1}
    messages = assert_valid(
        [old, reply({"type": "text", "text": "old answer"}), PROMPT, summary, reply(call("t1"))]
    )
    texts = [b.get("text") for m in messages for b in m["content"]]
    assert "old question" not in texts and "old answer" not in texts
    assert messages[0]["content"][0]["text"] == SUMMARY_INTRO + "They asked about x."
    assert messages[0]["content"][1]["text"] == "next prompt"  # the kept prompt, merged
    assert messages[1]["content"][0]["id"] == "t1"
    # The last compaction counts; one with no summary is not one.
    later = {"type": "compaction", "summary": "Later.", "keep": 0}
    broken = {"type": "compaction", "summary": " ", "keep": 0}
    messages = assert_valid([old, summary, PROMPT, later, broken])
    assert messages[0]["content"][0]["text"] == SUMMARY_INTRO + "Later."
    assert len(messages) == 1  # the summary and the next prompt, merged


def reply(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": list(blocks)}


def call(cid: str, args: Any = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": cid,
        "name": "read_file",
        "input": {} if args is None else args,
    }


def answer(*cids: str) -> dict[str, Any]:
    blocks = [{"type": "tool_result", "tool_use_id": c, "content": "ok"} for c in cids]
    return {"type": "message", "role": "user", "content": blocks}


def test_an_unanswered_call_is_answered_as_not_completed_before_the_next_prompt() -> None:
    messages = assert_valid([PROMPT, reply({"type": "text", "text": "let me"}, call("toolu_1"))])
    last = messages[-1]["content"]
    assert last[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": ABANDONED,
        "is_error": True,
    }
    assert last[1] == {"type": "text", "text": "next prompt"}


def test_duplicate_ids_in_one_reply_get_unique_ids_and_their_own_results() -> None:
    first = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "one"}
    second = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "two", "is_error": True}
    messages = assert_valid(
        [
            PROMPT,
            reply(call("toolu_1"), call("toolu_1")),
            {"type": "message", "role": "user", "content": [first, second]},
        ]
    )
    ids = [b["id"] for b in messages[1]["content"]]
    assert ids[0] == "toolu_1" and ids[1] != "toolu_1"
    results = messages[2]["content"][:2]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [(ids[0], "one"), (ids[1], "two")]


def test_non_object_inputs_go_out_as_objects() -> None:
    for bad in ([1, 2], "hello", 5, None, True):
        messages = assert_valid([PROMPT, reply(call("toolu_1", bad)), answer("toolu_1")])
        assert messages[1]["content"][0]["input"] == {}


def test_surrogates_become_replacement_characters_on_the_wire_only() -> None:
    text = "fix caf\udce9 \udcff"
    record: dict[str, Any] = {
        "type": "message",
        "role": "user",
        "content": [{"type": "text", "text": text}],
    }
    messages = wire_messages([record])
    assert messages[0]["content"][0]["text"] == "fix caf\ufffd \ufffd"
    assert record["content"][0]["text"] == text  # history keeps the original


def test_unanswered_lists_only_calls_after_the_last_user_message() -> None:
    assert unanswered([PROMPT, reply(call("a")), answer("a"), reply(call("b"), call("c"))]) == [
        call("b"),
        call("c"),
    ]
    assert unanswered([PROMPT, reply(call("a")), PROMPT]) == []


def test_validator_rejects_what_the_api_rejects() -> None:
    def problem(*messages: dict[str, Any]) -> str | None:
        return validation_error(body(list(messages)))

    user = {"role": "user", "content": "hi"}
    use: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "n", "input": {}}],
    }
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    assert problem(user, use, {"role": "user", "content": [result]}) is None
    twice = {"role": "assistant", "content": use["content"] * 2}
    assert "unique" in str(problem(user, twice, {"role": "user", "content": [result, result]}))
    listed = {"role": "assistant", "content": [{**use["content"][0], "input": [1, 2]}]}
    assert "dictionary" in str(problem(user, listed, {"role": "user", "content": [result]}))
    late = {"role": "user", "content": [{"type": "text", "text": "x"}, result]}
    assert "first" in str(problem(user, use, late))
    assert "only one" in str(problem(user, use, {"role": "user", "content": [result, result]}))
    assert "without `tool_result`" in str(problem(user, use, user))
    assert "unexpected" in str(problem({"role": "user", "content": [result]}))
    assert "non-empty" in str(problem(user, {"role": "assistant", "content": []}, user))
    assert "alternate" in str(problem(user, user))


# -- end to end: the real SDK against the loopback server ----------------------------------------
