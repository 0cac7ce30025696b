"""One rule for what an ACP agent asks (issue 20 item 1): however its permission requests and
file writes interleave, and whatever the user answers meanwhile (accept, reject, accept
`always`, stop), every request gets exactly one answer, the gate shows them one at a time in
the order they came, and nothing is left waiting when the turn ends.

The client (providers/acp/client.py) runs on its own event loop as in the provider, each
request a task as the SDK makes it; the gate is the real one, the editor the in-memory fake.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from acp.schema import PermissionOption, ToolCallUpdate
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain.config import CoreConfig
from sightline.domain.errors import Refused
from sightline.gate.approvals import Approvals
from sightline.gate.decisions import Gate
from sightline.providers.acp.client import SightlineClient, TurnContext
from sightline.providers.acp.runtime import LoopThread
from sightline.ui.transcript import Transcript
from tests.fake_editor import FakeEditor

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


class _Ui:
    def schedule(self) -> None:
        pass

    def event(self, name: str, data: dict[str, Any]) -> None:
        pass


# Each session's kept approvals apart (removed when the tests end).
_KEPT = tempfile.TemporaryDirectory(prefix="sightline-approvals-")
_SESSIONS = itertools.count()


class _Session:
    mode = "normal"
    autoaccept = False
    conversation = None
    pane = 1  # the single pane (core.py keeps one conversation per pane)

    def __init__(self, workspace: str, shown: list[str]) -> None:
        self.workspace = workspace
        self.editor = FakeEditor()
        self.transcript = Transcript()
        self.ui = _Ui()
        self.plan: list[dict[str, Any]] = []
        self.cfg = CoreConfig.before_init()
        self.approvals = Approvals(Path(_KEPT.name) / str(next(_SESSIONS)))
        # Every question as the user sees it, when it shows.
        self.gate = Gate(lambda: shown.append(self.gate.summary() or ""))

    def record(self, record: dict[str, Any]) -> None:
        pass


class _Turn:
    id = 1
    scope = None

    def __init__(self, session: _Session) -> None:
        self.session = session
        self.lock = threading.Lock()
        self.partial = ""
        self._cancelled = threading.Event()

    @property
    def editor(self) -> FakeEditor:
        return self.session.editor

    @property
    def gate(self) -> Gate:
        return self.session.gate

    @property
    def workspace(self) -> str:
        return self.session.workspace

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def on_cancel(self, callback: Any) -> None:
        pass


REQUESTS = st.lists(
    st.one_of(
        st.sampled_from(["Run make", "Run tests", "Run make"]).map(lambda t: ("permission", t)),
        st.sampled_from(["a.py", "b.py"]).map(lambda p: ("write", p)),
    ),
    min_size=1,
    max_size=8,
)
ACTIONS = st.lists(st.sampled_from(["accept", "reject", "always", "stop"]), max_size=8)


def _request(client: SightlineClient, n: int, what: tuple[str, str]) -> Any:
    kind, arg = what
    if kind == "permission":
        call = ToolCallUpdate(tool_call_id=f"t{n}", title=arg, kind="execute")
        return client.request_permission(session_id="s", tool_call=call, options=OPTIONS)
    return client.write_text_file(session_id="s", path=arg, content=f"written by {n}\n")


async def _answer(coro: Any) -> str:
    try:
        res = await coro
    except Exception as err:  # a refused write: an error answer, still an answer
        return f"error: {err}"
    outcome = getattr(res, "outcome", None)
    if outcome is None:
        return "written"
    return str(getattr(outcome, "option_id", None) or outcome.outcome)


@settings(max_examples=60, deadline=None)
@given(REQUESTS, ACTIONS)
def test_every_request_is_answered_exactly_once(
    requests: list[tuple[str, str]], actions: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as ws:
        for name in ("a.py", "b.py"):
            Path(ws, name).write_text("old\n")
        shown: list[str] = []
        session = _Session(ws, shown)
        turn = _Turn(session)
        client = SightlineClient()
        ctx = TurnContext(turn, True)  # type: ignore[arg-type]
        client.ctx = ctx
        loop = LoopThread("test-acp")
        try:
            answers = [loop.submit(_answer(_request(client, n, r))) for n, r in enumerate(requests)]
            # The user answers what shows, one action at a time; out of actions, stops.
            for action in [*actions, "stop"]:
                if all(a.done() for a in answers):
                    break
                wait_until(lambda: session.gate.pending or all(a.done() for a in answers))
                if action == "stop" or session.gate.pending is None:
                    turn._cancelled.set()
                    session.gate.reject_all("stopped by the user")
                    break
                decision = "reject" if action == "reject" else "accept"
                # Decided meanwhile by a covering "always": then nothing waits.
                with contextlib.suppress(Refused):
                    session.gate.decide(decision, "always" if action == "always" else "")
            client.ctx = None
            ctx.finish("the agent ended its turn")
            _, left = concurrent.futures.wait(answers, timeout=20)
            assert not left, f"{len(left)} of {len(requests)} requests never answered"
            got = [a.result() for a in answers]
        finally:
            loop.stop()
        assert len(got) == len(requests)
        assert session.gate.pending is None and session.gate.summary() is None
        for (kind, _), answer in zip(requests, got, strict=True):
            if kind == "permission":
                assert answer in {"yes", "always", "no", "cancelled"}, answer
            else:
                assert answer == "written" or answer.startswith("error: "), answer
        # One at a time: the bar never counts more than were asked.
        counts = [int(s.split(" of ")[1].split(":")[0]) for s in shown if s.startswith("1 of ")]
        assert all(c <= len(requests) for c in counts)


def wait_until(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "nothing showed in the gate"
        time.sleep(0.002)


def test_ten_at_once_are_all_answered_in_the_order_they_came() -> None:
    shown: list[str] = []
    with tempfile.TemporaryDirectory() as ws:
        session = _Session(ws, shown)
        turn = _Turn(session)
        client = SightlineClient()
        client.ctx = TurnContext(turn, True)  # type: ignore[arg-type]
        loop = LoopThread("test-acp")
        try:
            titles = [f"Run step {i}" for i in range(10)]

            async def all_at_once() -> list[str]:
                return list(
                    await asyncio.gather(
                        *(
                            _answer(_request(client, i, ("permission", t)))
                            for i, t in enumerate(titles)
                        )
                    )
                )

            answers = loop.submit(all_at_once())
            wait_until(lambda: session.gate.summary() == "1 of 10: allow Run step 0")
            seen = []
            for _ in titles:
                wait_until(lambda: session.gate.pending is not None)
                item = session.gate.pending
                assert item is not None
                seen.append(item.summary)
                session.gate.decide("accept")
                wait_until(lambda item=item: session.gate.pending is not item)
            assert answers.result(20) == ["yes"] * 10
        finally:
            loop.stop()
        assert seen == [f"allow {t}" for t in titles]
