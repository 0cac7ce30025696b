"""The fake Messages API, driven by the real anthropic SDK (and raw sockets for wire details)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam

from tests.fakeapi import (
    FakeAnthropic,
    cut,
    error_event,
    fake_api,
    hold,
    http_error,
    reply,
    stall,
    text,
    tool_use,
    truncated,
)

pytestmark = pytest.mark.timeout(30)

__all__ = ["fake_api"]  # re-exported fixture: pytest finds it through this module's globals

MODEL = "claude-test-1"
HELLO: list[MessageParam] = [{"role": "user", "content": "hi"}]


# --------------------------------------------------------------------------- helpers


def client_for(server: FakeAnthropic, timeout: float | httpx2.Timeout = 5.0) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test-key", base_url=server.base_url, max_retries=0, timeout=timeout
    )


def stream_raw(
    client: anthropic.Anthropic, messages: list[MessageParam] | None = None
) -> Iterator[Any]:
    """Raw stream events from messages.create(stream=True)."""
    return iter(
        client.messages.create(model=MODEL, max_tokens=100, messages=messages or HELLO, stream=True)
    )


def consume(events: Iterator[Any], seen: list[Any]) -> None:
    """Append events to `seen` as they arrive, so a test can inspect them after an exception."""
    for event in events:
        seen.append(event)


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def until(predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll a condition (the SDK offers nothing to await); fail with the last value."""
    deadline = time.monotonic() + timeout
    while (value := predicate()) is None or value is False:
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)
    return value


def raw_request(
    server: FakeAnthropic,
    body: Any,
    headers: dict[str, str] | None = None,
    path: str = "/v1/messages",
) -> tuple[int, dict[str, str], list[bytes]]:
    """POST over a bare socket: (status, lower-cased headers, body chunks as sent)."""
    payload = json.dumps(body).encode()
    sent = {
        "host": "127.0.0.1",
        "content-type": "application/json",
        "content-length": str(len(payload)),
        "connection": "close",  # so the response ends at EOF
        **(headers or {}),
    }
    head = "".join(f"{k}: {v}\r\n" for k, v in sent.items())
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + payload)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    raw_head, _, rest = data.partition(b"\r\n\r\n")
    lines = raw_head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    got = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if got.get("transfer-encoding") != "chunked":
        return status, got, [rest]
    return status, got, _dechunk(rest)


def _dechunk(data: bytes) -> list[bytes]:
    chunks: list[bytes] = []
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return chunks
        chunks.append(data[:size])
        assert data[size : size + 2] == b"\r\n"
        data = data[size + 2 :]


AUTH = {"authorization": "Bearer test-key", "anthropic-version": "2023-06-01"}
VALID = {"model": MODEL, "max_tokens": 10, "messages": HELLO}


# --------------------------------------------------------------------------- streaming replies


def test_text_streams_in_chunks_and_assembles(fake_api: FakeAnthropic) -> None:
    fake_api.script(text("hello world", chunks=3))
    events = list(stream_raw(client_for(fake_api)))

    assert types(events) == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    deltas = [e.delta.text for e in events if e.type == "content_block_delta"]
    assert "".join(deltas) == "hello world"
    assert events[-2].delta.stop_reason == "end_turn"


def test_message_start_looks_real(fake_api: FakeAnthropic) -> None:
    start = next(stream_raw(client_for(fake_api)))

    msg = start.message
    assert msg.id.startswith("msg_")
    assert (msg.model, msg.role, msg.content, msg.stop_reason) == (MODEL, "assistant", [], None)
    assert msg.usage.input_tokens > 0
    assert msg.usage.cache_creation_input_tokens == 0
    assert msg.usage.cache_read_input_tokens == 0


def test_tool_use_input_assembles_to_dict(fake_api: FakeAnthropic) -> None:
    args = {"path": "a.py", "range": [1, 20], "note": "ünïcode"}
    fake_api.script(tool_use("read_file", args, id="toolu_1", chunks=4))
    events = list(stream_raw(client_for(fake_api)))

    start = events[1].content_block
    assert (start.type, start.id, start.name) == ("tool_use", "toolu_1", "read_file")
    pieces = [e.delta.partial_json for e in events if e.type == "content_block_delta"]
    assert len([p for p in pieces if p]) == 4
    assert json.loads("".join(pieces)) == args
    assert events[-2].delta.stop_reason == "tool_use"


def test_stream_helper_assembles_text_then_tool_use(fake_api: FakeAnthropic) -> None:
    fake_api.script(
        reply(text("Let me look."), tool_use("read_file", {"path": "a.py"}, id="toolu_9"))
    )
    client = client_for(fake_api)
    with client.messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()

    assert streamed == "Let me look."
    assert final.stop_reason == "tool_use"
    assert [b.type for b in final.content] == ["text", "tool_use"]
    block = final.content[1]
    assert block.type == "tool_use"
    assert (block.id, block.name, block.input) == ("toolu_9", "read_file", {"path": "a.py"})


def test_reply_stop_reason_and_usage_override(fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("cut sho"), stop_reason="max_tokens", usage={"output_tokens": 42}))
    events = list(stream_raw(client_for(fake_api)))

    assert events[-2].delta.stop_reason == "max_tokens"
    assert events[-2].usage.output_tokens == 42


def test_script_is_consumed_in_order_then_defaults_to_ok(fake_api: FakeAnthropic) -> None:
    fake_api.script(text("one"), text("two"))
    client = client_for(fake_api)

    def say() -> str:
        got = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)
        block = got.content[0]
        assert block.type == "text"
        return block.text

    assert fake_api.pending == 2
    assert [say(), say(), say()] == ["one", "two", "ok"]
    assert fake_api.pending == 0


def test_non_streaming_returns_whole_message(fake_api: FakeAnthropic) -> None:
    fake_api.script(reply(text("hi"), tool_use("grep", {"q": "x"}, id="toolu_2")))
    msg = client_for(fake_api).messages.create(model=MODEL, max_tokens=10, messages=HELLO)

    assert msg.model == MODEL
    assert msg.stop_reason == "tool_use"
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[1].type == "tool_use" and msg.content[1].input == {"q": "x"}


def test_wire_format_is_chunked_sse_with_event_lines(fake_api: FakeAnthropic) -> None:
    status, headers, chunks = raw_request(fake_api, {**VALID, "stream": True}, AUTH)

    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    assert headers["request-id"].startswith("req_")
    names = []
    for chunk in chunks:  # exactly one SSE event per HTTP chunk
        lines = chunk.decode().split("\n")
        assert lines[0].startswith("event: ") and lines[1].startswith("data: ")
        assert lines[2:] == ["", ""]
        name = lines[0].removeprefix("event: ")
        assert json.loads(lines[1].removeprefix("data: "))["type"] == name
        names.append(name)
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]


# --------------------------------------------------------------------------- HTTP errors


@pytest.mark.parametrize(
    ("status", "exc_class", "err_type"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
    ],
)
def test_http_error_raises_typed_sdk_error(
    fake_api: FakeAnthropic, status: int, exc_class: type[Exception], err_type: str
) -> None:
    fake_api.script(http_error(status, message="nope"))

    with pytest.raises(exc_class) as info:
        stream_raw(client_for(fake_api))

    err = info.value
    assert isinstance(err, anthropic.APIStatusError)
    assert (err.status_code, err.type, err.api_message) == (status, err_type, "nope")
    assert isinstance(err.body, dict)
    assert err.body["type"] == "error"
    assert err.request_id == err.body["request_id"]


def test_rate_limit_carries_retry_after(fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(429, retry_after=3, headers={"x-should-retry": "true"}))

    with pytest.raises(anthropic.RateLimitError) as info:
        client_for(fake_api).messages.create(model=MODEL, max_tokens=10, messages=HELLO)

    assert info.value.response.headers["retry-after"] == "3"
    assert info.value.response.headers["x-should-retry"] == "true"


def test_sdk_retries_consume_one_step_per_attempt(fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(429, retry_after=0.01), http_error(529), text("finally"))
    client = anthropic.Anthropic(
        api_key="test-key", base_url=fake_api.base_url, max_retries=2, timeout=5.0
    )

    got = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)

    assert got.content[0].type == "text" and got.content[0].text == "finally"
    retries = [r.headers["x-stainless-retry-count"] for r in fake_api.wait_for_requests(3)]
    assert retries == ["0", "1", "2"]


def test_http_error_is_raised_entering_stream_helper(fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(529))

    with (
        pytest.raises(anthropic.OverloadedError),
        client_for(fake_api).messages.stream(model=MODEL, max_tokens=10, messages=HELLO),
    ):
        pass


# --------------------------------------------------------------------------- stream faults


def test_error_event_raises_plain_api_status_error(fake_api: FakeAnthropic) -> None:
    fake_api.script(error_event("overloaded_error", "Overloaded", after_events=4))
    seen: list[Any] = []

    with pytest.raises(anthropic.APIStatusError) as info:
        consume(stream_raw(client_for(fake_api)), seen)

    err = info.value
    assert type(err) is anthropic.APIStatusError  # not OverloadedError: the HTTP status was 200
    assert (err.status_code, err.type, err.api_message) == (200, "overloaded_error", "Overloaded")
    # 4 events sent, but the SDK swallows the ping.
    assert types(seen) == ["message_start", "content_block_start", "content_block_delta"]


def test_cut_raises_httpx2_remote_protocol_error(fake_api: FakeAnthropic) -> None:
    fake_api.script(cut(after_events=5))
    seen: list[Any] = []

    with pytest.raises(httpx2.RemoteProtocolError):
        consume(stream_raw(client_for(fake_api)), seen)

    expected = ["message_start", "content_block_start", "content_block_delta"]
    assert types(seen) == [*expected, "content_block_delta"]


def test_cut_in_stream_helper_keeps_partial_text(fake_api: FakeAnthropic) -> None:
    fake_api.script(cut(after_events=4, of=text("abcdef", chunks=3)))
    got: list[str] = []

    with (
        pytest.raises(httpx2.RemoteProtocolError),
        client_for(fake_api).messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as s,
    ):
        got.extend(s.text_stream)

    assert got == ["ab"]


def test_stall_trips_the_read_timeout(fake_api: FakeAnthropic) -> None:
    fake_api.script(stall(after_events=4, seconds=1.5))
    client = client_for(fake_api, timeout=httpx2.Timeout(5.0, read=0.3))
    seen: list[Any] = []

    started = time.monotonic()
    with pytest.raises(httpx2.ReadTimeout):
        consume(stream_raw(client), seen)

    assert time.monotonic() - started < 1.2  # the timeout fired, not the end of the stall
    assert types(seen) == ["message_start", "content_block_start", "content_block_delta"]


def test_truncated_ends_quietly_without_message_stop(fake_api: FakeAnthropic) -> None:
    fake_api.script(truncated())

    events = list(stream_raw(client_for(fake_api)))

    assert "message_stop" not in types(events)
    assert "message_delta" not in types(events)
    assert types(events)[-1] == "content_block_stop"


def test_truncated_after_k_events(fake_api: FakeAnthropic) -> None:
    fake_api.script(truncated(after_events=2))

    events = list(stream_raw(client_for(fake_api)))

    assert types(events) == ["message_start", "content_block_start"]


def test_truncated_stream_helper_final_message_has_no_stop_reason(fake_api: FakeAnthropic) -> None:
    fake_api.script(truncated())

    with client_for(fake_api).messages.stream(model=MODEL, max_tokens=10, messages=HELLO) as s:
        text_out = "".join(s.text_stream)
        final = s.get_final_message()

    assert text_out == "hello world"
    assert final.stop_reason is None


# --------------------------------------------------------------------------- hold / release


def _stream_in_thread(server: FakeAnthropic) -> tuple[threading.Thread, list[Any], list[Any]]:
    seen: list[Any] = []
    failures: list[Any] = []

    def run() -> None:
        try:
            consume(stream_raw(client_for(server)), seen)
        except Exception as err:
            failures.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, seen, failures


def test_hold_pauses_until_release(fake_api: FakeAnthropic) -> None:
    fake_api.script(hold(after_events=4))
    thread, seen, failures = _stream_in_thread(fake_api)

    assert fake_api.holding.wait(5)
    until(lambda: len(seen) == 3)  # message_start, block start, first delta (ping is hidden)
    assert "message_stop" not in types(seen)

    fake_api.release()
    thread.join(5)

    assert not thread.is_alive() and not failures
    assert types(seen)[-1] == "message_stop"
    assert "".join(e.delta.text for e in seen if e.type == "content_block_delta") == "hello world"
    until(lambda: not fake_api.holding.is_set())


def test_hold_notices_client_hanging_up(fake_api: FakeAnthropic) -> None:
    fake_api.script(hold(after_events=3))
    client = client_for(fake_api)
    stream = client.messages.create(model=MODEL, max_tokens=10, messages=HELLO, stream=True)
    assert next(iter(stream)).type == "message_start"
    assert fake_api.holding.wait(5)

    stream.close()  # what a "stop" button does

    assert fake_api.disconnected.wait(5)
    until(lambda: not fake_api.holding.is_set())
    assert fake_api.errors == []


def test_close_ends_a_hold() -> None:
    server = FakeAnthropic()
    server.script(hold(after_events=3))
    thread, _seen, _failures = _stream_in_thread(server)
    assert server.holding.wait(5)

    server.close()

    thread.join(5)
    assert not thread.is_alive()  # the client got an ending (clean or not), not a hang
    assert server.errors == []


def test_non_streaming_faults() -> None:
    with FakeAnthropic() as server:
        client = client_for(server, timeout=httpx2.Timeout(5.0, read=0.3))
        server.script(error_event(), cut(), stall(seconds=1.5), truncated())

        def create() -> anthropic.types.Message:
            return client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)

        with pytest.raises(anthropic.OverloadedError):
            create()
        with pytest.raises(anthropic.APIConnectionError) as conn:
            create()
        assert type(conn.value) is anthropic.APIConnectionError
        with pytest.raises(anthropic.APITimeoutError):
            create()
        assert create().stop_reason == "end_turn"  # truncated() has no meaning without a stream


# --------------------------------------------------------------------------- validation


def _tool_turns(use_id: str = "toolu_1", result_id: str = "toolu_1") -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": use_id, "name": "read_file", "input": {"path": "a"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": result_id, "content": "data"}],
        },
    ]


def _cached(n: int) -> dict[str, Any]:
    """A request with `n` cache_control breakpoints spread over system, tools and messages."""
    mark = {"cache_control": {"type": "ephemeral"}}
    system = [{"type": "text", "text": "sys", **mark}]
    tools = [{"name": "t", "input_schema": {"type": "object"}, **mark}]
    blocks = [{"type": "text", "text": f"part {i}", **mark} for i in range(max(0, n - 2))]
    return {
        **VALID,
        "system": system,
        "tools": tools,
        "messages": [{"role": "user", "content": blocks}],
    }


INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("no model", {"max_tokens": 5, "messages": HELLO}, "model: Field required"),
    ("no max_tokens", {"model": MODEL, "messages": HELLO}, "max_tokens: Field required"),
    ("no messages", {"model": MODEL, "max_tokens": 5}, "messages: Field required"),
    ("no messages at all", {**VALID, "messages": []}, "at least one message"),
    (
        "assistant first",
        {**VALID, "messages": [{"role": "assistant", "content": "hi"}, *HELLO]},
        'first message must use the "user" role',
    ),
    (
        "two users in a row",
        {**VALID, "messages": [*HELLO, {"role": "user", "content": "again"}]},
        'multiple "user" roles in a row',
    ),
    (
        "two assistants in a row",
        {
            **VALID,
            "messages": [
                *HELLO,
                {"role": "assistant", "content": "a"},
                {"role": "assistant", "content": "b"},
            ],
        },
        'multiple "assistant" roles in a row',
    ),
    (
        "empty string content",
        {**VALID, "messages": [{"role": "user", "content": ""}]},
        "must have non-empty content",
    ),
    (
        "empty list content",
        {**VALID, "messages": [{"role": "user", "content": []}]},
        "must have non-empty content",
    ),
    (
        "empty text block",
        {**VALID, "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]},
        "text content blocks must contain non-whitespace text",
    ),
    (
        "empty assistant turn mid-conversation",
        {
            **VALID,
            "messages": [*HELLO, {"role": "assistant", "content": ""}, *HELLO],
        },
        "messages.1: all messages must have non-empty content",
    ),
    (
        "trailing whitespace in prefill",
        {**VALID, "messages": [*HELLO, {"role": "assistant", "content": "Sure "}]},
        "cannot end with trailing whitespace",
    ),
    (
        "tool_use answered by plain text",
        {**VALID, "messages": [*_tool_turns()[:2], {"role": "user", "content": "ok"}]},
        "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
    ),
    (
        "tool_use never answered",
        {**VALID, "messages": _tool_turns()[:2]},
        "without `tool_result` blocks immediately after: toolu_1",
    ),
    (
        "tool_result for another id",
        {**VALID, "messages": _tool_turns(result_id="toolu_other")},
        "without `tool_result` blocks immediately after: toolu_1",
    ),
    (
        "tool_result without any tool_use",
        {
            **VALID,
            "messages": [
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x"}]}
            ],
        },
        "unexpected `tool_use_id` found in `tool_result` blocks: toolu_x",
    ),
    ("five cache breakpoints", _cached(5), "A maximum of 4 blocks with cache_control"),
]


@pytest.mark.parametrize(("body", "reason"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_request_is_rejected_without_consuming_script(
    fake_api: FakeAnthropic, body: dict[str, Any], reason: str
) -> None:
    fake_api.script(text("kept"))
    client = client_for(fake_api)

    with pytest.raises(anthropic.BadRequestError) as info:
        client.post("/v1/messages", body=body, cast_to=object)

    assert info.value.type == "invalid_request_error"
    assert info.value.api_message is not None and reason in info.value.api_message
    assert fake_api.pending == 1
    assert fake_api.wait_for_requests(1)[0].body == body


@pytest.mark.parametrize(
    "messages",
    [
        _tool_turns(),
        [*HELLO, {"role": "assistant", "content": ""}],  # an empty prefill is allowed
        [*HELLO, {"role": "assistant", "content": "Sure,"}],
    ],
    ids=["tool round trip", "empty prefill", "prefill"],
)
def test_valid_conversations_are_accepted(fake_api: FakeAnthropic, messages: list[Any]) -> None:
    got = client_for(fake_api).messages.create(model=MODEL, max_tokens=10, messages=messages)
    assert got.stop_reason == "end_turn"


def test_four_cache_breakpoints_are_accepted(fake_api: FakeAnthropic) -> None:
    got = client_for(fake_api).post("/v1/messages", body=_cached(4), cast_to=object)
    assert isinstance(got, dict) and got["type"] == "message"


def test_missing_auth_is_401(fake_api: FakeAnthropic) -> None:
    fake_api.script(text("kept"))
    client = anthropic.Anthropic(
        api_key="unused",
        base_url=fake_api.base_url,
        max_retries=0,
        # The SDK's documented way to send no auth header; typed as str-valued.
        default_headers={"Authorization": cast(str, anthropic.omit)},
    )

    with pytest.raises(anthropic.AuthenticationError) as info:
        client.messages.create(model=MODEL, max_tokens=10, messages=HELLO)

    assert info.value.type == "authentication_error"
    assert fake_api.pending == 1
    assert "authorization" not in fake_api.wait_for_requests(1)[0].headers


def test_wrong_key_is_401_when_server_has_a_key() -> None:
    with FakeAnthropic(api_key="right") as server:
        with pytest.raises(anthropic.AuthenticationError):
            client_for(server).messages.create(model=MODEL, max_tokens=10, messages=HELLO)
        server.api_key = "test-key"
        assert client_for(server).messages.create(model=MODEL, max_tokens=10, messages=HELLO)


def test_x_api_key_header_is_accepted(fake_api: FakeAnthropic) -> None:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    status, _, body = raw_request(fake_api, VALID, headers)
    assert status == 200
    assert json.loads(body[0])["content"] == [{"type": "text", "text": "ok"}]


def test_missing_version_header_and_unknown_path(fake_api: FakeAnthropic) -> None:
    status, _, body = raw_request(fake_api, VALID, {"x-api-key": "k"})
    assert status == 400
    assert "anthropic-version" in json.loads(body[0])["error"]["message"]

    status, _, body = raw_request(fake_api, VALID, AUTH, path="/v1/complete")
    assert status == 404
    assert json.loads(body[0])["error"]["type"] == "not_found_error"


# --------------------------------------------------------------------------- recording, lifecycle


def test_requests_are_recorded_with_headers_and_body(fake_api: FakeAnthropic) -> None:
    fake_api.script(text("a"), text("b"))
    client = client_for(fake_api)
    list(stream_raw(client))
    client.messages.create(model=MODEL, max_tokens=7, messages=HELLO, system="be brief")

    first, second = fake_api.wait_for_requests(2)

    assert (first.method, first.path) == ("POST", "/v1/messages")
    assert first.headers["authorization"] == "Bearer test-key"
    assert first.headers["anthropic-version"]
    assert first.body == {"model": MODEL, "max_tokens": 100, "messages": HELLO, "stream": True}
    assert second.body["system"] == "be brief"
    assert "stream" not in second.body


def test_wait_for_requests_times_out_quickly(fake_api: FakeAnthropic) -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match="expected 1 request"):
        fake_api.wait_for_requests(1, timeout=0.05)
    assert time.monotonic() - started < 1


def test_close_is_idempotent_and_frees_the_port() -> None:
    with FakeAnthropic() as server:
        url = server.base_url
        assert url.startswith("http://127.0.0.1:")
    server.close()

    port = int(url.rsplit(":", 1)[1])
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_keep_alive_connection_serves_several_streams(fake_api: FakeAnthropic) -> None:
    fake_api.script(text("one"), tool_use("t", {}), text("three"))
    client = client_for(fake_api)
    for _ in range(3):
        assert types(list(stream_raw(client)))[-1] == "message_stop"
    assert fake_api.pending == 0
