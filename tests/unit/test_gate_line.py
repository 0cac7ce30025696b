"""The gate's line of questions: a question whose showing fails still leaves the line, so
the ones behind it are shown and answered (nothing waits forever)."""

from __future__ import annotations

import threading

import pytest

from sightline.gate.decisions import Gate, Pending


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
