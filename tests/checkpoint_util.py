"""Three turns over four files through the gate, for the checkpoint, rewind and review tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import idle, send
from tests.fakeapi import FakeAnthropic, reply, text, tool_use

START = {
    "a.txt": "alpha\none\n",
    "b.txt": "beta\none\n",
    "c.txt": "gamma\none\n",
}


def propose(path: str, old: str, new: str) -> Any:
    return tool_use("propose_edit", {"path": path, "old_string": old, "new_string": new})


def create(path: str, content: str) -> Any:
    return tool_use("propose_create", {"path": path, "content": content})


def three_turns(nv: Any, api: FakeAnthropic) -> dict[str, dict[str, str | None]]:
    """Turn 1 edits a and b; turn 2 edits b and c and creates d; turn 3 edits a and c. The
    files' contents after each turn (None: absent)."""
    api.script(reply(propose("a.txt", "one", "a1"), propose("b.txt", "one", "b1")), text("ok"))
    send(nv, "first")
    idle(nv)
    api.script(
        reply(
            propose("b.txt", "b1", "b2"), propose("c.txt", "one", "c2"), create("d.txt", "new\n")
        ),
        text("ok"),
    )
    send(nv, "second")
    idle(nv)
    api.script(reply(propose("a.txt", "a1", "a3"), propose("c.txt", "c2", "c3")), text("ok"))
    send(nv, "third")
    idle(nv)
    return {
        "after1": {"a.txt": "alpha\na1\n", "b.txt": "beta\nb1\n", "c.txt": "gamma\none\n"},
        "after3": {
            "a.txt": "alpha\na3\n",
            "b.txt": "beta\nb2\n",
            "c.txt": "gamma\nc3\n",
            "d.txt": "new\n",
        },
    }


def files(ws: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(ws.glob("*.txt"))}


def setup_ws(ws: Path) -> None:
    for name, body in START.items():
        (ws / name).write_text(body)
