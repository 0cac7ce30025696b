"""The core's conversations by pane (core.py's registry): every request may name its pane,
each pane's conversation is its own (status, history file, lock), a bad pane is refused
and changes nothing, and the first pane's path stays exactly as it was."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sightline.core import Core
from sightline.entry import rpc
from tests.effective_config import effective
from tests.fake_editor import FakeEditor


@pytest.fixture
def core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Core]:
    for name in ("DATA", "CONFIG", "STATE", "CACHE"):
        d = tmp_path / "xdg" / name.lower()
        d.mkdir(parents=True)
        monkeypatch.setenv(f"XDG_{name}_HOME", str(d))
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    c = Core(FakeEditor())
    c.configure(effective(provider={"name": "echo"}), str(ws))
    yield c
    for session in c.sessions.values():
        session.stop()


def call(core: Core, method: str, **params: Any) -> dict[str, Any]:
    return rpc.dispatch(core, method, [params])


def idle(core: Core, pane: int) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status = call(core, "agent.status", pane=pane)["status"]
        if status["state"] == "idle" and status["conversation"]:
            return dict(status)
        time.sleep(0.01)
    raise AssertionError(f"pane {pane} did not become idle")


def test_each_pane_has_its_own_conversation_and_the_first_one_is_named_by_none(
    core: Core,
) -> None:
    assert call(core, "agent.send", text="for the first")["ok"] is True
    assert call(core, "agent.send", text="for the second", pane=2)["ok"] is True
    one, two = idle(core, 1), idle(core, 2)
    assert "pane" not in one and two["pane"] == 2
    assert one["conversation_path"] != two["conversation_path"]
    assert not one["read_only"] and not two["read_only"]  # each holds its own lock
    first = core.sessions[1].transcript.full()["lines"]
    second = core.sessions[2].transcript.full()["lines"]
    assert any("for the first" in line for line in first)
    assert not any("for the second" in line for line in first)
    assert any("for the second" in line for line in second)
    chats = call(core, "chats.list")["chats"]
    assert [(c["pane"], c["state"], c["title"], c["turns"]) for c in chats] == [
        (1, "idle", "for the first", 1),
        (2, "idle", "for the second", 1),
    ]


@pytest.mark.parametrize("bad", [0, -1, "2", True, 1.5, 1 << 21, None])
def test_a_bad_pane_is_refused_and_changes_nothing(core: Core, bad: Any) -> None:
    answer = call(core, "agent.send", text="hello", pane=bad)
    assert answer == {
        "ok": False,
        "error": "agent.send: pane: expected a pane number (a positive integer)",
    }
    assert list(core.sessions) == [1] and core.session.turn is None


def test_a_conversation_open_in_one_pane_is_refused_in_another(core: Core) -> None:
    call(core, "agent.send", text="held here")
    path = idle(core, 1)["conversation_path"]
    answer = call(core, "history.open", path=path, pane=3)
    assert answer["ok"] is False
    assert "open in another tab's pane (1): :Sightline chats switches to it" in answer["error"]
    assert core.sessions[3].conversation is None


def test_a_reset_in_one_pane_leaves_the_other_conversation(core: Core) -> None:
    call(core, "agent.send", text="first")
    call(core, "agent.send", text="second", pane=2)
    idle(core, 1)
    idle(core, 2)
    assert call(core, "agent.reset", pane=2)["ok"] is True
    assert core.sessions[2].conversation is None
    assert core.sessions[1].conversation is not None
