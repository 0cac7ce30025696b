"""A stream's first text is sent before the worker reads on (Ui.show_now): the worker waits
for the loop thread to build that update instead of competing with it for the GIL, and a
loop thread that never gets to it delays the worker by a bounded time only."""

from __future__ import annotations

import threading
import time
from typing import cast

from sightline.editor.port import Editor
from sightline.ui import push as ui
from sightline.ui.transcript import Transcript
from tests.loop_editor import LoopEditor


def _ui(editor: LoopEditor, transcript: Transcript) -> ui.Ui:
    return ui.Ui(cast(Editor, editor), transcript, lambda: {"state": "working"})


def test_show_now_returns_once_the_loop_built_the_first_text() -> None:
    editor, transcript = LoopEditor(), Transcript()
    show = _ui(editor, transcript)
    transcript.append_text("first words")
    loop = threading.Thread(target=editor.run_one)
    loop.start()
    show.show_now()
    loop.join(5)
    assert [p["transcript"]["lines"][-1] for p in editor.sent] == ["first words"]
    # What the worker streams after it is not in that update but in the next one.
    transcript.append_text(" and more")
    show.flush()
    editor.run_one()
    assert editor.sent[-1]["transcript"]["lines"][-1] == "first words and more"


def test_show_now_waits_a_bounded_time_for_a_busy_loop() -> None:
    editor, transcript = LoopEditor(), Transcript()
    show = _ui(editor, transcript)
    transcript.append_text("x")
    t0 = time.monotonic()
    show.show_now()  # nobody builds it
    waited = time.monotonic() - t0
    assert ui.SHOW_WAIT_S <= waited + 0.005 < ui.SHOW_WAIT_S + 1.0
    editor.run_one()  # still queued: sent when the loop gets to it
    assert editor.sent[0]["transcript"]["lines"][-1] == "x"


def test_show_now_sends_what_waited_with_the_first_text() -> None:
    editor, transcript = LoopEditor(), Transcript()
    show = _ui(editor, transcript)
    show.event("SightlineTurnStart", {"turn": 1})  # sent at once: nothing is being applied
    transcript.append_text("now")
    threading.Thread(target=editor.run_one).start()
    show.show_now()
    assert editor.sent[0]["events"] == [{"name": "SightlineTurnStart", "data": {"turn": 1}}]
    assert editor.sent[0]["transcript"]["lines"][-1] == "now"
