"""Pushes are paced by Neovim (python/sightline/ui/push.py): an update goes out at once when
no push is being applied, and what arrives while one is coalesces into the one push sent
when Neovim has applied it. No fixed batching delays the text a user waits for; only a push
following the last one within PACE_S waits for the rest of it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.editor.port import Editor
from sightline.ui import push
from sightline.ui.transcript import Transcript
from tests.loop_editor import LoopEditor


def _ui(editor: LoopEditor, transcript: Transcript) -> push.Ui:
    return push.Ui(cast(Editor, editor), transcript, lambda: {"state": "working"})


@pytest.fixture
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neovim's answers alone pace the pushes (the tests of coalescing)."""
    monkeypatch.setattr(push, "PACE_S", 0.0)


def test_the_first_text_goes_out_at_once_when_nothing_is_being_applied() -> None:
    editor, transcript = LoopEditor(), Transcript()
    ui = _ui(editor, transcript)
    transcript.append_text("hello")
    ui.schedule()
    # Queued before schedule() returned: no timer stands between the text and Neovim.
    assert editor.queued.qsize() == 1
    editor.run_one()
    assert editor.sent[-1]["transcript"]["lines"][-1] == "hello"


@pytest.mark.usefixtures("unpaced")
def test_text_arriving_while_a_push_is_applied_goes_out_in_one_push_after_it() -> None:
    editor, transcript = LoopEditor(), Transcript()
    ui = _ui(editor, transcript)
    transcript.append_text("one")
    ui.schedule()
    apply_first = editor.run_one(apply=False)  # sent, Neovim still applying it
    for word in (" two", " three", " four"):
        transcript.append_text(word)
        ui.schedule()
    ui.event("SightlineProposal", {"id": 1})
    assert editor.queued.empty()  # nothing more is sent while the first is unapplied
    assert apply_first is not None
    apply_first()
    assert editor.queued.qsize() == 1  # what waited: one push, sent at once
    editor.run_one()
    assert editor.sent[-1]["transcript"]["lines"][-1] == "one two three four"
    assert editor.sent[-1]["events"] == [{"name": "SightlineProposal", "data": {"id": 1}}]
    assert editor.queued.empty()  # applied with nothing new: no further push


def test_a_push_neovim_never_applies_holds_the_stream_but_not_a_direct_flush() -> None:
    editor, transcript = LoopEditor(), Transcript()
    ui = _ui(editor, transcript)
    transcript.append_text("a")
    ui.schedule()
    editor.run_one(apply=False)  # Neovim is busy (a prompt): the answer does not come
    transcript.append_text("b")
    ui.schedule()
    assert editor.queued.empty()
    ui.event("SightlineTurnEnd", {"status": "done"})
    ui.flush()  # a turn's end is sent whatever is in flight, in order
    editor.run_one()
    assert editor.sent[-1]["transcript"]["lines"][-1] == "ab"
    assert [e["name"] for e in editor.sent[-1]["events"]] == ["SightlineTurnEnd"]


def test_a_push_soon_after_the_last_waits_for_the_pace_then_goes_out_alone() -> None:
    editor, transcript = LoopEditor(), Transcript()
    ui = _ui(editor, transcript)
    transcript.append_text("one")
    ui.schedule()
    sent = time.monotonic()
    editor.run_one()  # applied at once: only the pace holds the next one
    transcript.append_text(" two")
    ui.schedule()
    transcript.append_text(" three")
    ui.schedule()
    editor.run_one()  # waits for the queued push (the timer's), not for a batch
    assert time.monotonic() - sent >= push.PACE_S
    assert editor.sent[-1]["transcript"]["lines"][-1] == "one two three"
    assert editor.queued.empty()


@pytest.mark.usefixtures("unpaced")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["text", "apply", "event"]), max_size=40))
def test_every_change_reaches_neovim_and_never_more_than_one_stream_push_waits(
    steps: list[str],
) -> None:
    """Any order of arriving text, events and Neovim's answers: at most one push is
    unapplied from streaming alone, and once Neovim applies everything, what it holds is
    all the text and every event, each once, in order."""
    editor, transcript = LoopEditor(), Transcript()
    ui = _ui(editor, transcript)
    unapplied: list[Callable[[], None]] = []

    def send_queued() -> None:
        while not editor.queued.empty():
            apply = editor.run_one(apply=False)
            if apply is not None:
                unapplied.append(apply)

    text, names = "", []
    for i, step in enumerate(steps):
        if step == "text":
            transcript.append_text(f"w{i} ")
            text += f"w{i} "
            ui.schedule()
        elif step == "event":
            names.append(f"E{i}")
            ui.event(names[-1])
        elif unapplied:
            unapplied.pop(0)()
        send_queued()
        assert len(unapplied) <= 1
    while unapplied:
        unapplied.pop(0)()
        send_queued()
    sent_events = [e["name"] for p in editor.sent for e in p.get("events", [])]
    assert sent_events == names
    if text:
        shown = [p["transcript"] for p in editor.sent if "transcript" in p][-1]
        assert shown["lines"][-1] == text
