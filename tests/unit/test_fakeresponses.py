"""The Responses fake (tests/fakeresponses.py) against the openai SDK's own Responses parser:
every event it streams validates as the SDK's ResponseStreamEvent, and the SDK's stream
accumulator builds the final response from them (text, function call, custom tool call)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import openai
import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from tests.fakeresponses import FakeResponses, call, custom, reply, text

KEY = "sk-fake-responses-1"
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def _client(api: FakeResponses, key: str = KEY) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=api.base_url, max_retries=0)


def test_each_event_is_a_valid_sdk_event_and_the_stream_accumulates() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n"
    with FakeResponses(KEY) as api:
        api.script(
            reply(
                text("Hello there."),
                call("exec_command", {"cmd": "ls"}),
                custom("apply_patch", patch),
            )
        )
        with _client(api).responses.stream(model="gpt-fake", input="hi") as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
        # The same reply's events as sent, each validated by the SDK's model (the stream
        # above constructs them without validation).
        api.script(
            reply(
                text("Hello there."),
                call("exec_command", {"cmd": "ls"}),
                custom("apply_patch", patch),
            )
        )
        for event in raw_events(api):
            EVENTS.validate_python(event)
        assert not api.errors, api.errors
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output_text == "Hello there."
    fn, ct = final.output[1], final.output[2]
    assert fn.type == "function_call" and json.loads(fn.arguments) == {"cmd": "ls"}
    assert ct.type == "custom_tool_call" and ct.input == patch
    assert final.usage is not None and final.usage.total_tokens > 0


def raw_events(api: FakeResponses) -> list[dict[str, Any]]:
    req = urllib.request.Request(
        f"{api.base_url}/responses",
        data=json.dumps({"model": "m", "input": "x", "stream": True}).encode(),
        headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as got:
        body = got.read().decode()
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


def test_sequence_numbers_count_up_and_deltas_add_up_to_the_text() -> None:
    with FakeResponses(KEY) as api:
        api.script(reply(text("one two three four", chunks=4)))
        events = raw_events(api)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == "one two three four"


def test_a_wrong_key_is_refused_as_the_api_does() -> None:
    with FakeResponses(KEY) as api, pytest.raises(openai.AuthenticationError):
        _client(api, "sk-wrong").responses.create(model="m", input="x", stream=True)
