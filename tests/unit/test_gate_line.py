"""The gate's line of questions: a question whose showing fails still leaves the line, so
the ones behind it are shown and answered (nothing waits forever); an edit's hunks can be
decided one by one from the moment they are drawn."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from sightline.domain.errors import Refused
from sightline.gate.decisions import Gate, Pending
from tests.conftest import wait_for


def test_a_question_whose_showing_fails_leaves_the_line_and_the_next_is_shown() -> None:
    gate = Gate(lambda: None)
    second_shown = threading.Event()
    first_failed = threading.Event()
    second: dict[str, Pending] = {}

    def broken(item: Pending) -> None:
        raise RuntimeError("the editor could not draw it")

    def ask_first() -> None:
        with pytest.raises(RuntimeError):
            gate.ask("edit", "edit a.py", {}, shown=broken)
        first_failed.set()

    def ask_second() -> None:
        second["item"] = gate.ask("edit", "edit b.py", {}, shown=lambda _: second_shown.set())

    one = threading.Thread(target=ask_first)
    one.start()
    one.join(5)
    assert first_failed.is_set()
    two = threading.Thread(target=ask_second)
    two.start()
    assert second_shown.wait(5)
    assert gate.summary() == "edit b.py"  # the broken one is not in the way
    gate.decide("accept")
    two.join(5)
    assert second["item"].decision == "accept"
    assert gate.pending is None


def _ask_in_thread(gate: Gate, shown: Any) -> tuple[threading.Thread, dict[str, Pending]]:
    out: dict[str, Pending] = {}
    data = {"proposal": SimpleNamespace(id=7)}
    worker = threading.Thread(
        target=lambda: out.setdefault("item", gate.ask("edit", "edit a.py", data, shown=shown))
    )
    worker.start()
    return worker, out


def test_a_hunk_decided_while_its_drawing_is_on_its_way_is_taken() -> None:
    # The key typed as soon as the hunks show reaches the gate before the editor's answer to
    # the drawing does: it was refused as "decided as a whole" (seen under load in CI).
    gate = Gate(lambda: None)
    decided: list[list[str]] = []

    def draw() -> bool:
        decided.append(gate.decide_hunk(7, 0, "accept"))
        return True

    worker, out = _ask_in_thread(gate, lambda item: gate.show_hunks(item, 2, draw))
    wait_for(lambda: decided, what="the hunk decided as it was drawn")
    assert decided == [["accept", ""]]
    assert gate.decide_hunk(7, 1, "reject", "keep it") == ["accept", "reject"]
    worker.join(5)
    assert out["item"].by_hunk and out["item"].decision == "accept"
    assert out["item"].hunks == {0: ("accept", ""), 1: ("reject", "keep it")}


def test_hunks_not_drawn_are_decided_as_a_whole() -> None:
    gate = Gate(lambda: None)
    worker, out = _ask_in_thread(gate, lambda item: gate.show_hunks(item, 2, lambda: False))
    wait_for(lambda: gate.pending is not None, what="the question")
    with pytest.raises(Refused, match="decided as a whole"):
        gate.decide_hunk(7, 0, "accept")
    gate.decide("accept")
    worker.join(5)
    assert out["item"].decision == "accept" and not out["item"].by_hunk
