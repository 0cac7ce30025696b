"""The editor port without Neovim: the names on both sides, and the tools and the review gate
run against the in-memory FakeEditor (tests/fake_editor.py)."""

from __future__ import annotations

import inspect
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from sightline.agent.session import Session, Turn
from sightline.domain.errors import Refused
from sightline.domain.scope import Selection
from sightline.editor import port as editor
from sightline.editor.port import NvimEditor
from sightline.gate.proposals import compare_view
from sightline.tools import selection, view, write
from tests.conftest import ROOT, wait_for
from tests.effective_config import core_config
from tests.fake_editor import FakeBuffer, FakeEditor

PORT_LUA = ROOT / "lua" / "sightline" / "port.lua"


def lua_port_functions() -> set[str]:
    names = set(re.findall(r"^function M\.([a-z_]+)\(", PORT_LUA.read_text(), re.M))
    return names - {"call"}  # the deadline wrapper every call goes through


def test_the_port_has_the_same_methods_on_both_sides() -> None:
    assert lua_port_functions() == set(editor.PORT_METHODS)
    for impl in (NvimEditor, FakeEditor):
        missing = [n for n in editor.PORT_METHODS if not callable(getattr(impl, n, None))]
        assert missing == [], impl


def test_no_lua_source_outside_the_port_module() -> None:
    """The core's only Lua text is editor/port.py's one chunk: no exec_lua or `require(`
    elsewhere."""
    offenders = []
    for path in (ROOT / "python" / "sightline").rglob("*.py"):
        if path == ROOT / "python" / "sightline" / "editor" / "port.py":
            continue
        text = path.read_text()
        if "exec_lua(" in text.replace("editor.PORT_CALL", "") and "PORT_CALL" not in text:
            offenders.append(path.name)
        if re.search(r"require\(['\"]sightline", text):
            offenders.append(path.name)
    assert offenders == []


def test_the_nvim_editor_makes_one_named_call_per_method() -> None:
    sent: list[tuple[str, tuple[Any, ...]]] = []

    class Recorder:
        def exec_lua(self, code: str, *args: Any, **kw: Any) -> Any:
            sent.append((code, args))
            return None

        def async_call(self, fn: Any) -> None:
            fn()

    ed = NvimEditor(Recorder())
    ed.read_lines("/x", 0, -1, 10)
    ed.close_compare(3)
    assert sent == [
        (editor.PORT_CALL, (None, "read_lines", "/x", 0, -1, 10)),
        (editor.PORT_CALL, (None, "close_compare", 3)),
    ]


def session_with(fake: FakeEditor, ws: Path, autoaccept: bool = True) -> Session:
    session = Session(fake, core_config(autoaccept=autoaccept), str(ws), [], ws / "history")
    return session


def proposing(
    fake: FakeEditor, ws: Path, lines: int, args: dict[str, Any]
) -> tuple[Session, threading.Thread, list[Any]]:
    """A session (review on) whose model proposes `args` on `a.py` of `lines` lines, in a
    worker thread as a turn does; the list receives the tool's result."""
    (ws / "a.py").write_text("".join(f"line {i}\n" for i in range(lines)))
    session = session_with(fake, ws, autoaccept=False)
    if isinstance(fake, KeyAsDrawn):
        fake.session = session
    turn = Turn(1, session)
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(write.propose_edit(turn, args)))
    worker.start()
    return session, worker, out


def test_propose_edit_accepted_against_the_fake_editor(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("".join(f"line {i}\n" for i in range(100)))
    fake = FakeEditor(buffers={})
    turn = Turn(1, session_with(fake, tmp_path))
    res = write.propose_edit(turn, {"path": "a.py", "old_string": "line 50\n", "new_string": "L\n"})
    assert res.content == "accepted: a.py was changed and saved."
    assert not res.is_error
    assert (tmp_path / "a.py").read_text().splitlines()[49:52] == ["line 49", "L", "line 51"]
    # Three port calls: find the unique occurrence (its lines only), the file's state for
    # the turn's checkpoint (no text crosses for a buffer without unsaved changes), apply.
    assert fake.calls == ["find_unique", "file_state", "apply_edit"]
    shown = turn.session.transcript.lines
    assert "@@ -49,5 +49,5 @@" in shown  # hunks numbered in the file, not the excerpt


@pytest.mark.parametrize(("old", "count"), [("line 1", 11), ("nowhere", 0), ("ine 7\nl", 1)])
def test_the_count_the_model_is_told_is_every_occurrence(
    tmp_path: Path, old: str, count: int
) -> None:
    (tmp_path / "a.py").write_text("".join(f"line {i}\n" for i in range(20)))
    turn = Turn(1, session_with(FakeEditor(buffers={}), tmp_path))
    args = {"path": "a.py", "old_string": old, "new_string": "x"}
    if count == 1:
        assert not write.propose_edit(turn, args).is_error
        return
    with pytest.raises(Refused, match=f"old_string occurs {count} times in a.py"):
        write.propose_edit(turn, args)


def test_the_compare_view_widens_an_excerpt_to_the_whole_buffer(tmp_path: Path) -> None:
    fake = FakeEditor(buffers={})
    args = {"path": "a.py", "old_string": "line 20\n", "new_string": "twenty\n"}
    session, worker, out = proposing(fake, tmp_path, 40, args)
    text = (tmp_path / "a.py").read_text()
    wait_for(lambda: session.gate.pending is not None)
    shown = compare_view(session)
    assert shown["before"] == text
    assert shown["after"] == text.replace("line 20\n", "twenty\n")
    # the user edits the after side, then accepts
    assert session.gate.pending is not None
    fake.after_side[shown["id"]] = shown["after"].replace("line 0\n", "zero\n").split("\n")[:-1]
    session.gate.decide("accept")
    worker.join(5)
    assert "edited your proposal in the compare view" in out[0].content
    lines = (tmp_path / "a.py").read_text().splitlines()
    assert (lines[0], lines[20]) == ("zero", "twenty")


def test_replace_selection_against_the_fake_editor(tmp_path: Path) -> None:
    lines = [f"row {i}" for i in range(50)]
    fake = FakeEditor(buffers={1: FakeBuffer(list(lines), str(tmp_path / "b.txt"))})
    (tmp_path / "b.txt").write_text("\n".join(lines) + "\n")
    sel = Selection(1, 30, 0, 30, 6, "row 30", "b.txt")
    turn = Turn(1, session_with(fake, tmp_path), scope=sel)
    res = selection.REPLACE_SELECTION.handler(turn, {"text": "THIRTY"})
    assert res.content == "accepted: b.txt was changed and saved."
    assert fake.buffers[1].lines[29:32] == ["row 29", "THIRTY", "row 31"]
    # file_state: the file as it was, for the turn's checkpoint (no text: not modified).
    assert fake.calls == ["reanchor_range", "file_state", "replace_range"]
    assert turn.scope is not None and (turn.scope.end_col, turn.scope.text) == (6, "THIRTY")


def test_replace_selection_tells_the_codes_in_words(tmp_path: Path) -> None:
    fake = FakeEditor(buffers={1: FakeBuffer(["same", "same"])})
    sel = Selection(1, 0, 0, 0, 4, "gone text", "b.txt")
    turn = Turn(1, session_with(fake, tmp_path), scope=sel)
    with pytest.raises(Refused, match="no longer in the buffer"):
        selection.REPLACE_SELECTION.handler(turn, {"text": "x"})


def test_a_python_member_is_resolved_by_the_caller(tmp_path: Path) -> None:
    src = "x = 1\n\n\nclass A:\n    def b(self):\n        return 1\n"
    fake = FakeEditor(buffers={1: FakeBuffer(src[:-1].split("\n"), "m.py")})
    turn = Turn(1, session_with(fake, tmp_path))

    def shown() -> dict[str, Any]:
        python = dict(fake.views[-1][1]["python"] or {})
        python.pop("version", None)
        return python

    res = view.REVEAL.handler(turn, {"file_path": "m.py", "member_key": "A.b"})
    assert (res.content, res.is_error) == ("OK", False)
    assert shown() == {"start_line": 5, "end_line": 6}
    assert fake.calls == ["python_source", "reveal"]
    # the same version of the file: one round trip, resolved from what was kept
    view.REVEAL.handler(turn, {"file_path": "m.py", "member_key": "nope"})
    assert "not found" in shown()["error"]
    assert fake.calls[2:] == ["reveal"]
    # the buffer changed: the reveal says stale, the source is read again
    fake.buffers[1].lines[0:0] = ["", ""]
    view.REVEAL.handler(turn, {"file_path": "m.py", "member_key": "A.b"})
    assert shown() == {"start_line": 7, "end_line": 8}
    assert fake.calls[3:] == ["reveal", "python_source", "reveal"]
    view.REVEAL.handler(turn, {"file_path": "a.txt", "member_key": "A.b"})
    assert fake.views[-1][1]["python"] is None


def test_every_protocol_method_is_typed() -> None:
    for name in editor.PORT_METHODS:
        sig = inspect.signature(getattr(editor.Editor, name))
        assert sig.return_annotation is not inspect.Signature.empty, name


def test_inline_hunks_of_an_excerpt_are_buffer_lines_and_a_partial_accept_is_one_edit(
    tmp_path: Path,
) -> None:
    """The hunks of an excerpt proposal are drawn at the buffer's lines (first_line), and
    accepting some of them applies exactly those, in one apply (one undo step)."""
    fake = FakeEditor(buffers={})
    args = {
        "path": "a.py",
        "old_string": "line 50\nline 51\nline 52\n",
        "new_string": "FIFTY\nline 51\nFIFTY-TWO\n",
    }
    session, worker, out = proposing(fake, tmp_path, 100, args)
    wait_for(lambda: session.gate.pending is not None and bool(fake.hunks))
    (spec,) = fake.hunks.values()
    assert [h["start"] for h in spec["hunks"]] == [50, 52]  # 0-based buffer rows
    session.gate.decide_hunk(spec["id"], 0, "accept")
    session.gate.decide_hunk(spec["id"], 1, "reject", "keep it")
    worker.join(5)
    lines = (tmp_path / "a.py").read_text().splitlines()
    assert lines[49:54] == ["line 49", "FIFTY", "line 51", "line 52", "line 53"]
    assert fake.calls.count("apply_edit") == 1 and not fake.hunks
    told = out[0].content
    assert "hunk 2 (line 53), the user's note: keep it" in told
    assert "    51\tFIFTY" in told and "    53\tline 52" in told


class KeyAsDrawn(FakeEditor):
    """An editor where the user's key decides the first hunk as soon as it is drawn, before
    the drawing's answer reaches the core (a loaded machine widens that moment)."""

    session: Session | None = None
    decided: list[str] | None = None

    def show_hunks(self, spec: editor.HunkSpec) -> bool:
        drawn = super().show_hunks(spec)
        assert self.session is not None
        self.decided = self.session.gate.decide_hunk(spec["id"], 0, "accept")
        return drawn


def test_a_hunk_decided_the_moment_it_is_drawn_is_taken(tmp_path: Path) -> None:
    fake = KeyAsDrawn(buffers={})
    args = {
        "path": "a.py",
        "old_string": "line 5\nline 6\nline 7\n",
        "new_string": "5\nline 6\n7\n",
    }
    session, worker, out = proposing(fake, tmp_path, 20, args)
    wait_for(lambda: fake.decided is not None, what="the key typed as the hunks showed")
    assert fake.decided == ["accept", ""]
    (spec,) = fake.hunks.values()
    session.gate.decide_hunk(spec["id"], 1, "reject")
    worker.join(5)
    assert (tmp_path / "a.py").read_text().splitlines()[5:8] == ["5", "line 6", "line 7"]
    assert out[0].content.startswith("partly accepted")
