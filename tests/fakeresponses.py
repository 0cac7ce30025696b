"""A loopback fake of the OpenAI Responses API (POST /v1/responses, streamed as SSE), for the
Codex adapter's end-to-end test (codex-acp speaks only this API). Written from the API's
reference of streaming events and held to the openai SDK's own Responses stream parser
(tests/unit/test_fakeresponses.py), as the Chat Completions fake (tests/fakeopenai.py) is.

Each POST consumes one scripted reply; when the script is empty the reply is the text "ok".
A reply is a list of output items: `text(...)` (an assistant message), `call(name, args)` (a
function call, JSON arguments) or `custom(name, input)` (a custom tool call with free-form
input: Codex's `apply_patch`). `hold(of)` streams the first text delta of its reply, then
waits for `release()` (or the client hanging up). A request without a Bearer key equal to
the fake's is answered 401, as the API does.

The stream of one reply: response.created, response.in_progress, then per item
output_item.added, its deltas (output_text with content_part.added/done around them,
function_call_arguments or custom_tool_call_input), the matching .done, output_item.done;
last response.completed with the whole response and its usage.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, TypeAlias

JSON: TypeAlias = dict[str, Any]
RESPONSES_PATH = "/v1/responses"
_ids = itertools.count(1)


@dataclass
class Item:
    kind: str  # "message" | "function_call" | "custom_tool_call"
    text: str = ""  # the message's text, the call's arguments or input
    name: str = ""
    chunks: int = 3


@dataclass
class Reply:
    items: list[Item]
    hold: bool = False  # pause after the first delta until release()


def text(content: str, chunks: int = 3) -> Item:
    return Item("message", content, chunks=chunks)


def call(name: str, args: Any, chunks: int = 2) -> Item:
    return Item("function_call", json.dumps(args), name, chunks)


def custom(name: str, tool_input: str, chunks: int = 2) -> Item:
    return Item("custom_tool_call", tool_input, name, chunks)


def reply(*items: Item) -> Reply:
    return Reply(list(items))


def hold(*items: Item) -> Reply:
    return Reply(list(items) or [text("a long answer")], hold=True)


def _split(s: str, parts: int) -> list[str]:
    if not s:
        return [""]
    size = -(-len(s) // max(1, parts))
    return [s[i : i + size] for i in range(0, len(s), size)]


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def _done_item(item: Item, item_id: str, call_id: str) -> JSON:
    if item.kind == "message":
        part = {"type": "output_text", "text": item.text, "annotations": [], "logprobs": []}
        return {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }
    if item.kind == "function_call":
        return {
            "id": item_id,
            "type": "function_call",
            "status": "completed",
            "call_id": call_id,
            "name": item.name,
            "arguments": item.text,
        }
    return {
        "id": item_id,
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": call_id,
        "name": item.name,
        "input": item.text,
    }


def _added_item(done: JSON) -> JSON:
    """The item as output_item.added shows it: in progress, nothing streamed yet."""
    added = {**done, "status": "in_progress"}
    if done["type"] == "message":
        added["content"] = []
    elif done["type"] == "function_call":
        added["arguments"] = ""
    else:
        added["input"] = ""
    return added


def response_json(
    resp_id: str, model: str, output: list[JSON], usage: JSON | None, status: str
) -> JSON:
    return {
        "id": resp_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }


def stream_events(rep: Reply, request: JSON) -> Iterator[JSON]:
    """The events of one reply (without sequence numbers: the server adds them)."""
    resp_id = f"resp_fake_{next(_ids):04d}"
    model = str(request.get("model") or "gpt-fake")
    yield {
        "type": "response.created",
        "response": response_json(resp_id, model, [], None, "in_progress"),
    }
    yield {
        "type": "response.in_progress",
        "response": response_json(resp_id, model, [], None, "in_progress"),
    }
    output: list[JSON] = []
    for index, item in enumerate(rep.items):
        n = next(_ids)
        done = _done_item(item, f"item_{n}", f"call_{n}")
        item_id = done["id"]
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": _added_item(done),
        }
        where = {"item_id": item_id, "output_index": index}
        if item.kind == "message":
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            yield {"type": "response.content_part.added", **where, "content_index": 0, "part": part}
            for delta in _split(item.text, item.chunks):
                yield {
                    "type": "response.output_text.delta",
                    **where,
                    "content_index": 0,
                    "delta": delta,
                    "logprobs": [],
                }
            yield {
                "type": "response.output_text.done",
                **where,
                "content_index": 0,
                "text": item.text,
                "logprobs": [],
            }
            yield {
                "type": "response.content_part.done",
                **where,
                "content_index": 0,
                "part": done["content"][0],
            }
        elif item.kind == "function_call":
            for delta in _split(item.text, item.chunks):
                yield {"type": "response.function_call_arguments.delta", **where, "delta": delta}
            yield {
                "type": "response.function_call_arguments.done",
                **where,
                "name": item.name,
                "arguments": item.text,
            }
        else:
            for delta in _split(item.text, item.chunks):
                yield {"type": "response.custom_tool_call_input.delta", **where, "delta": delta}
            yield {"type": "response.custom_tool_call_input.done", **where, "input": item.text}
        yield {"type": "response.output_item.done", "output_index": index, "item": done}
        output.append(done)
    used_in, used_out = _tokens(request.get("input")), sum(_tokens(o) for o in output)
    usage = {
        "input_tokens": used_in,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": used_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": used_in + used_out,
    }
    yield {
        "type": "response.completed",
        "response": response_json(resp_id, model, output, usage, "completed"),
    }


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeResponses:
    """The server; `with FakeResponses(key) as api:` starts it on a free loopback port."""

    key: str
    requests: list[Recorded] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._script: list[Reply] = []
        self._lock = threading.Condition()
        self.holding = threading.Event()
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def release(self) -> None:
        self._released.set()

    def responses(self) -> list[Recorded]:
        """The model requests received (each the whole input so far)."""
        with self._lock:
            return [r for r in self.requests if r.path == RESPONSES_PATH and r.body]

    def wait_for_requests(self, n: int, timeout: float = 30) -> list[Recorded]:
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.responses_unlocked()) >= n, timeout):
                raise AssertionError(f"{n} Responses requests not received in {timeout} s")
            return self.responses_unlocked()

    def responses_unlocked(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == RESPONSES_PATH and r.body]

    def _next(self) -> Reply:
        with self._lock:
            return self._script.pop(0) if self._script else reply(text("ok"))

    def __enter__(self) -> FakeResponses:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # models list, websockets: not offered
                fake._record(self, None)
                self._json(
                    404, {"error": {"message": "not found", "type": "invalid_request_error"}}
                )

            def do_POST(self) -> None:
                try:
                    size = int(self.headers.get("content-length") or 0)
                    raw = self.rfile.read(size)
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                fake._record(self, body)
                if self.path.split("?")[0] != RESPONSES_PATH:
                    self._json(
                        404, {"error": {"message": "not found", "type": "invalid_request_error"}}
                    )
                    return
                if self.headers.get("authorization") != f"Bearer {fake.key}":
                    self._json(
                        401,
                        {
                            "error": {
                                "message": "Incorrect API key provided",
                                "type": "invalid_request_error",
                                "code": "invalid_api_key",
                            }
                        },
                    )
                    return
                if not isinstance(body, dict) or "model" not in body or "input" not in body:
                    self._json(
                        400,
                        {
                            "error": {
                                "message": "missing model or input",
                                "type": "invalid_request_error",
                            }
                        },
                    )
                    return
                try:
                    fake._stream(self, fake._next(), body)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                except Exception:
                    import traceback

                    fake.errors.append(traceback.format_exc())

            def _json(self, status: int, payload: JSON) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(
                Recorded(
                    handler.path.split("?")[0],
                    {k.lower(): v for k, v in handler.headers.items()},
                    body,
                )
            )
            self._lock.notify_all()

    def _stream(self, handler: BaseHTTPRequestHandler, rep: Reply, body: JSON) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("connection", "close")
        handler.end_headers()
        held = False
        for seq, event in enumerate(stream_events(rep, body)):
            event = {**event, "sequence_number": seq}
            handler.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
            if rep.hold and not held and event["type"] == "response.output_text.delta":
                held = True
                self.holding.set()
                self._released.wait(60)
                self.holding.clear()
        handler.close_connection = True
