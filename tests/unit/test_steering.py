"""The rule of steering: whatever a user does — send, edit an earlier message, regenerate,
fork, queue or steer a message while a turn runs, stop, or the core crashing at any point —
every branch of every history file is a valid conversation by the Messages API rules and by
the Chat Completions rules (the loopback fakes' validators), every request sent was one, and
nothing typed is lost (each queued message was sent, or given back to the composer).

A real Session with the in-memory editor and a scripted provider that can hold a reply
mid-stream (so that queue, steer, stop, regenerate and crash land while a turn runs). Then
the instances: the file's branch model, reopening, and old files."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.agent import steering
from sightline.agent.session import Session
from sightline.domain import branches, history
from sightline.domain.errors import Refused
from sightline.domain.wire import wire_messages
from sightline.providers.anthropic_api import AnthropicProvider
from sightline.providers.base import (
    Capabilities,
    ProviderBase,
    Reply,
    Request,
    StreamEvent,
    TextDelta,
)
from sightline.providers.openai_api import chat_request
from tests import fakeopenai as fo
from tests.effective_config import core_config, provider_config
from tests.fake_editor import FakeEditor
from tests.fakeapi import validation_error
from tests.history_strategies import PROMPT

WAIT_S = 10.0
ANTHROPIC = AnthropicProvider(provider_config(name="anthropic", model="claude-t"))
OPENAI = provider_config(name="openai", model="gpt-t")


def problems(messages: list[dict[str, Any]]) -> list[str]:
    """What the Messages API and the Chat Completions API would refuse in a request."""
    out = []
    sent = ANTHROPIC._params(Request("system", messages, [{"name": "t", "input_schema": {}}]))
    if why := validation_error(sent):
        out.append(f"messages: {why}")
    chat = chat_request(OPENAI, Request("system", messages, [{"name": "t", "input_schema": {}}]))
    if why := fo.validation_error({**chat, "stream": True}):
        out.append(f"chat: {why}")
    return out


class Scripted(ProviderBase):
    """Replies by turns: a call to a tool (answered as not available: a tool boundary),
    then text. With `hold` set, a reply waits mid-stream (after its first text) until
    released or the turn is stopped."""

    capabilities = Capabilities()

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []
        self.hold = False
        self.release = threading.Event()
        self.held = threading.Event()
        self.n = 0

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def model(self) -> str:
        return "claude-t"

    def prepare(self) -> None:
        pass

    def cancel(self) -> None:
        pass

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        self.requests.append(json.loads(json.dumps(request.messages)))
        self.n += 1
        yield TextDelta("a")
        if self.hold:
            self.held.set()
            while not self.release.wait(0.005):
                if cancelled():
                    return
        last = request.messages[-1]["content"]
        answered = any(b.get("type") == "tool_result" for b in last)
        if self.n % 2 and not answered:
            call = {"type": "tool_use", "id": f"toolu_{self.n}", "name": "peek", "input": {}}
            yield Reply([{"type": "text", "text": "a"}, call], "tool_use", 10, 2)
        else:
            yield Reply([{"type": "text", "text": "done"}], "end_turn", 10, 2)


def wait(cond: Callable[[], object], what: str) -> None:
    end = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.002)


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.editor = FakeEditor()
        self.provider = Scripted()
        self.typed: list[str] = []  # every message queued
        self.sessions: list[Session] = []
        self.session = self._new()

    def _new(self) -> Session:
        session = Session(self.editor, core_config(), str(self.root), [], self.root / "history")
        session._provider = self.provider
        self.sessions.append(session)
        return session

    def busy(self) -> bool:
        s = self.session
        return s.state() != "idle" or bool(s.conversation and s.conversation.tree.queued)

    def settle(self) -> None:
        self.provider.hold = False
        self.provider.release.set()
        wait(lambda: not self.busy(), "the turn (and those queued) to end")
        self.provider.release.clear()

    def do(self, op: tuple[Any, ...]) -> None:
        s, name = self.session, op[0]
        try:
            if name == "send":
                self.settle()
                s.send(f"q{len(self.provider.requests)}")
            elif name == "hold":
                self.settle()
                self.provider.hold = True
                self.provider.held.clear()
                s.send("held")
                wait(lambda: self.provider.held.is_set() or s.turn is None, "a held reply")
            elif name == "queue":
                text = f"typed {len(self.typed)}"
                if steering.queue(s, text, op[1]) is not None:
                    self.typed.append(text)
            elif name == "stop":
                s.stop()
            elif name == "regenerate":
                steering.regenerate(s)
                if not self.provider.hold:
                    self.settle()
            elif name == "edit":
                self.settle()
                conv = s.conversation
                prompts = (
                    []
                    if conv is None
                    else [i for i, r in enumerate(conv.records) if steering.is_prompt(r)]
                )
                if prompts:
                    s.send("edited", edit_at=prompts[op[1] % len(prompts)])
            elif name == "fork":
                self.settle()
                steering.fork(s, op[1] if op[1] is None else op[1] % 8)
            elif name == "crash":
                conv = s.conversation
                if conv is not None:
                    # The core dies: its file is left as it is, a new core reopens it.
                    s.turn = None
                    conv.close()
                    self.provider.release.set()
                    self.session = self._new()
                    self.session.open(conv.path)
                    self.provider.release.clear()
                    self.provider.hold = False
        except Refused:
            pass

    def composer(self) -> list[str]:
        return [t for u in self.editor.updates for t in u.get("composer", [])]


OPS = st.one_of(
    st.tuples(st.just("send")),
    st.tuples(st.just("hold")),
    st.tuples(st.just("queue"), st.booleans()),
    st.tuples(st.just("stop")),
    st.tuples(st.just("regenerate")),
    st.tuples(st.just("edit"), st.integers(0, 5)),
    st.tuples(st.just("fork"), st.none() | st.integers(0, 20)),
    st.tuples(st.just("crash")),
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(OPS, min_size=1, max_size=10))
def test_any_steering_leaves_every_branch_a_valid_conversation(
    tmp_path_factory: Any, ops: list[tuple[Any, ...]]
) -> None:
    world = World(tmp_path_factory.mktemp("ws"))
    world.editor.keep_updates = 10_000
    try:
        for op in ops:
            world.do(op)
        world.settle()
    finally:
        world.provider.release.set()
        for session in world.sessions:
            if session.conversation is not None:
                session.conversation.close()
    for messages in world.provider.requests:
        assert problems(messages) == [], messages
    files = sorted((world.root / "history").glob("*.jsonl"))
    for path in files:
        tree = branches.Tree.of(history.scan(path).records)
        for branch in tree.branches.values():
            messages = wire_messages([*branch.records, PROMPT])
            assert problems(messages) == [], (path.name, branch.id, messages)
        assert not tree.queued  # every queued message was sent or given back
    sent = [
        part
        for path in files
        for r in history.scan(path).records
        if r.get("type") == "message" and isinstance(r.get("visible"), str)
        for part in r["visible"].split("\n\n")  # steered together: one message
    ]
    for text in world.typed:
        assert text in sent or text in world.composer(), text


# -- the instances ---------------------------------------------------------------------------


def world_after(tmp_path: Path, *ops: tuple[Any, ...]) -> World:
    world = World(tmp_path)
    world.editor.keep_updates = 10_000
    for op in ops:
        world.do(op)
    world.settle()
    return world


def reopened(world: World) -> Session:
    conv = world.session.conversation
    assert conv is not None
    conv.close()
    session = world._new()
    session.open(conv.path)
    return session


def test_an_old_file_without_branches_reads_as_one_branch(tmp_path: Path) -> None:
    path = tmp_path / "20250101-000000-old.jsonl"
    records = [
        {"type": "meta", "id": "old", "workspace": "/ws", "created": 1.0},
        {**PROMPT, "visible": "first"},
        {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "a"}]},
        {"type": "event", "event": "done", "seconds": 1.5, "tokens": {"input": 3}, "cost": 0.0},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    conv = history.Conversation.load(path)
    try:
        assert conv.records == records and conv.branch == branches.ROOT
        assert list(conv.tree.branches) == [branches.ROOT]
    finally:
        conv.close()
    (listed,) = history.list_conversations(tmp_path, "/ws")
    assert (listed.title, listed.turns, listed.branches) == ("first", 1, [])


def test_an_edit_forks_and_the_next_request_holds_the_edit_not_the_old_branch(
    tmp_path: Path,
) -> None:
    world = world_after(tmp_path, ("send",), ("send",))
    first = world.session.transcript.lines.index("q0")
    row = world.session.transcript._row_of(first)
    found = steering.message_at(world.session, row)
    assert found["text"] == "q0"
    sent_before = len(world.provider.requests)
    world.session.send("q0 edited", edit_at=found["at"])
    world.settle()
    request = world.provider.requests[sent_before]
    texts = [b.get("text") for m in request for b in m["content"] if b.get("type") == "text"]
    assert texts == ["q0 edited"]
    lines = world.session.transcript.lines
    assert "edited — the earlier version is kept, :Sightline history shows it" in lines
    assert "q2" not in lines and "q0" not in lines  # the old branch is not shown
    conv = world.session.conversation
    assert conv is not None and conv.branch == "2"
    old = conv.tree.branches[branches.ROOT].prompts()
    assert old == ["q0", "q2"]  # kept in the file as it was sent


def test_a_regenerate_sends_the_same_messages_again(tmp_path: Path) -> None:
    world = world_after(tmp_path, ("send",))
    before = world.provider.requests[-1]
    first_of_turn = next(m for m in world.provider.requests if m[-1]["content"][0].get("text"))
    n = len(world.provider.requests)
    steering.regenerate(world.session)
    world.settle()
    assert world.provider.requests[n] == first_of_turn
    assert before != world.provider.requests[n] or len(world.provider.requests) > n
    lines = world.session.transcript.lines
    assert lines.count("q0") == 1
    assert "regenerated — the earlier answer is kept, :Sightline history shows it" in lines


def test_a_reopened_branch_shows_exactly_what_it_showed_live(tmp_path: Path) -> None:
    steering_note = "regenerated — the earlier answer is kept, :Sightline history shows it"
    world = world_after(tmp_path, ("send",), ("send",), ("regenerate",), ("send",))
    live = list(world.session.transcript.lines)
    footers = [line for line in live if line.startswith("─ ")]
    assert len(footers) == 3
    session = reopened(world)
    try:
        again = session.transcript.lines
        assert [ln for ln in again if ln.startswith("─ ")] == footers
        # What the user wrote and how the branch came to be, in the same order.
        shown = [ln for ln in live if ln.startswith(("q", "regenerated"))]
        assert shown == ["q0", "q2", steering_note, "q4"]
        assert [ln for ln in again if ln.startswith(("q", "regenerated"))] == shown
        conv = session.conversation
        assert conv is not None and conv.branch == "2"
    finally:
        if session.conversation is not None:
            session.conversation.close()


def test_a_queued_message_survives_a_crash_and_comes_back_into_the_composer(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    world.editor.keep_updates = 10_000
    world.do(("hold",))
    assert steering.queue(world.session, "also do X") is not None
    conv = world.session.conversation
    assert conv is not None
    assert [r["text"] for r in history.scan(conv.path).records if r["type"] == "queued"] == [
        "also do X"
    ]
    world.do(("crash",))
    world.settle()
    assert "also do X" in world.composer()
    assert world.session.queued() == []
