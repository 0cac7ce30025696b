"""One rule for the ACP stream in the pane: whatever the agent streams (message and thought
chunks, tool calls and their status updates, plans, in any order), the conversation
reopened from history shows exactly what the pane showed live: the same lines, the same
highlights, the same folds and Markdown spans.

The live side is the client's update handler (providers/acp/client.py) on a stub session,
ended as run_turn ends a turn; the reopened side is render_records over what it recorded."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from acp import update_agent_message_text, update_agent_thought_text
from acp.helpers import plan_entry, start_tool_call, update_plan, update_tool_call
from acp.schema import ToolCallLocation
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.agent.replay import render_records
from sightline.providers.acp.client import SightlineClient, TurnContext
from sightline.ui.transcript import THINKING_HEADER, Transcript


class _Ui:
    def schedule(self) -> None:
        pass


class _Session:
    workspace = "/nonexistent-workspace"

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.ui = _Ui()
        self.records: list[dict[str, Any]] = []
        self.plan: list[dict[str, Any]] = []

    def record(self, record: dict[str, Any]) -> None:
        self.records.append(record)


class _Turn:
    def __init__(self, session: _Session) -> None:
        self.session = session
        self.lock = threading.RLock()
        self.partial = ""

    def cancelled(self) -> bool:
        return False


TEXT = st.text(alphabet="ab *`#-\n", max_size=10)
IDS = st.sampled_from(["t1", "t2", "t3"])
STATUS = st.sampled_from([None, "pending", "in_progress", "completed", "failed"])
LOCATIONS = st.lists(
    st.builds(ToolCallLocation, path=st.just("app.py"), line=st.just(3)), max_size=1
)

UPDATES = st.one_of(
    TEXT.map(update_agent_message_text),
    TEXT.map(update_agent_thought_text),
    st.builds(
        lambda i, s, loc: start_tool_call(i, f"call {i}", status=s, locations=loc or None),
        IDS,
        STATUS,
        LOCATIONS,
    ),
    st.builds(
        lambda i, s, loc: update_tool_call(i, status=s, locations=loc or None),
        IDS,
        STATUS,
        LOCATIONS,
    ),
    st.lists(
        st.builds(plan_entry, st.sampled_from(["look", "fix"]), status=st.just("pending")),
        min_size=1,
        max_size=2,
    ).map(update_plan),
)


def live(updates: list[Any]) -> tuple[Transcript, list[dict[str, Any]]]:
    session = _Session()
    session.transcript.add_user("go")
    session.records.append({"type": "message", "role": "user", "content": "go", "visible": "go"})
    client = SightlineClient()
    ctx = TurnContext(_Turn(session), True)  # type: ignore[arg-type]
    client.ctx = ctx

    async def stream() -> None:
        for update in updates:
            await client.session_update("s", update)

    asyncio.run(stream())
    client.ctx = None
    client.flush_thought(ctx)  # as run_turn ends a turn
    client.flush_text(ctx)
    return session.transcript, session.records


def shown(t: Transcript) -> dict[str, Any]:
    delta = t.full()
    return {k: delta[k] for k in ("lines", "hls", "folds", "md")}


@settings(max_examples=300, deadline=None)
@given(st.lists(UPDATES, max_size=14))
def test_a_reopened_acp_conversation_shows_what_the_pane_showed(updates: list[Any]) -> None:
    transcript, records = live(updates)
    reopened = Transcript()
    render_records(reopened, records)
    assert shown(reopened) == shown(transcript)


def test_thought_then_text_then_a_status_change_in_place() -> None:
    updates = [
        update_agent_thought_text("weigh it\n"),
        update_agent_thought_text("then act"),
        update_agent_message_text("Done **now**."),
        start_tool_call("t1", "Run tests", status="pending"),
        update_tool_call("t1", status="in_progress"),
        update_tool_call("t1", status="completed"),
    ]
    transcript, records = live(updates)
    lines = shown(transcript)["lines"]
    head = lines.index(THINKING_HEADER)
    assert lines[head : head + 3] == [THINKING_HEADER, "weigh it", "then act"]
    assert shown(transcript)["folds"] == [[head, head + 3]]
    assert [ln for ln in lines if "Run tests" in ln] == ["✔ Run tests (done)"]
    kinds = [(r["type"], r.get("event")) for r in records]
    assert kinds[1:] == [
        ("acp", "thought"),
        ("message", None),
        ("acp", "tool_call"),
        ("acp", "tool_status"),
        ("acp", "tool_status"),
    ]
    reopened = Transcript()
    render_records(reopened, records)
    assert shown(reopened) == shown(transcript)
