"""Checkpoints and `:Sightline rewind`, typed as a user types them: three turns edit four
files; a rewind restores exactly the state before the chosen turn, keeps what the user typed
since (shown as hunks to take or leave), deletes files the undone turns created only after a
yes, and is undone by rewinding the rewind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent_util import accepted, claude, decide, idle, lines, texts, wait_core_pending
from tests.checkpoint_util import START, files, setup_ws, three_turns
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text
from tests.screen import Screen

__all__ = ["fake_api"]


def composer(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def rewind_pick(nv: Any, screen: Screen, choice: int) -> None:
    """`:Sightline rewind`, then the picker's item `choice` (1 = the newest), typed."""
    nv.input("<Esc>:Sightline rewind<CR>")
    screen.wait_text("rewind the files to before which turn?")
    nv.input(f"{choice}<CR>")
    screen.wait_for(lambda s: s.find("rewind the files") is None, 10, "the picker gone")


def test_rewind_to_before_turn_2_restores_turn_1_and_deletes_its_new_file_after_a_yes(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    screen = screen_factory(nv)
    states = three_turns(nv, fake_api)
    assert files(isolated_env) == states["after3"]
    nv.command("edit a.txt")
    abuf = nv.api.get_current_buf().number
    mtime_untouched = (isolated_env / "a.txt").stat().st_mtime_ns

    rewind_pick(nv, screen, 2)  # newest first: #3, #2, #1
    st = wait_core_pending(nv)
    assert st["pending"] == "delete d.txt (created by the undone turns)?"
    # Nothing is deleted before the yes; the other files are back already.
    assert (isolated_env / "d.txt").read_text() == "new\n"
    nv.input(":Sightline accept<CR>")
    idle(nv)
    assert files(isolated_env) == states["after1"]
    assert not (isolated_env / "d.txt").exists()
    assert lines(nv, abuf) == ["alpha", "a1"]
    assert nv.api.buf_get_option(abuf, "modified") is False
    assert (isolated_env / "a.txt").stat().st_mtime_ns != mtime_untouched
    shown = "\n".join(transcript(nv))
    assert "restored: a.txt, b.txt, c.txt" in shown and "deleted: d.txt" in shown
    # The buffer's restore is one undo step.
    nv.command("undo")
    assert lines(nv, abuf) == ["alpha", "a3"]
    nv.command("redo")

    # The rewind is a checkpoint: rewinding it puts turn 3's state back (d.txt too).
    rewind_pick(nv, screen, 1)
    idle(nv)
    assert files(isolated_env) == states["after3"]


def test_a_file_the_user_edited_after_turn_2_keeps_their_edit_and_shows_the_hunks(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    screen = screen_factory(nv)
    three_turns(nv, fake_api)
    nv.command("edit b.txt")
    bbuf = nv.api.get_current_buf().number
    nv.input("ggOmine<Esc>:write<CR>")  # the user's own line, saved
    wait_for(lambda: (isolated_env / "b.txt").read_text() == "mine\nbeta\nb2\n")
    c_mtime = (isolated_env / "c.txt").stat().st_mtime_ns
    before_rewind = (isolated_env / "c.txt").read_text()

    rewind_pick(nv, screen, 2)
    st = wait_core_pending(nv)
    # b.txt: the way back to its checkpoint is proposed, drawn in its buffer hunk by hunk.
    assert st["pending"] == "edit b.txt (+1 −2)"
    drawn = wait_for(lambda: nv.exec_lua("return require('sightline.ui.inline').shown()"))
    assert drawn["buffer"] == bbuf and len(drawn["hunks"]) == 2
    # (the note comes in the transcript's push, which may follow the status's)
    wait_for(
        lambda: "b.txt changed since (your edits)" in "\n".join(transcript(nv)),
        10,
        "the note on the user's edits",
    )
    assert status(nv)["autoaccept"] is True  # and still it asks
    decide(nv, "reject")  # keep my text
    st = wait_core_pending(nv)
    assert st["pending"] == "delete d.txt (created by the undone turns)?"
    decide(nv, "reject")  # and keep the new file
    idle(nv)
    assert (isolated_env / "b.txt").read_text() == "mine\nbeta\nb2\n"
    assert lines(nv, bbuf) == ["mine", "beta", "b2"]
    assert (isolated_env / "d.txt").read_text() == "new\n"
    assert (isolated_env / "c.txt").read_text() == "gamma\none\n" != before_rewind
    assert c_mtime != (isolated_env / "c.txt").stat().st_mtime_ns
    wait_for(
        lambda: "kept as you left them: b.txt, d.txt" in "\n".join(transcript(nv)),
        10,
        "the rewind's note",
    )


def test_rewind_without_checkpoints_says_so_and_changes_nothing(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api)
    mtimes = {p: p.stat().st_mtime_ns for p in isolated_env.glob("*.txt")}
    nv.command("Sightline chat")
    err = nv.exec_lua("return select(2, require('sightline.ui.rewind').command({}))")
    assert err == "sightline: nothing to rewind: no turn of this conversation changed a file"
    err = nv.exec_lua("return select(2, require('sightline.ui.rewind').command({'x'}))")
    assert err == 'sightline: rewind takes [fork] and a checkpoint number (#3 or 3), got "x"'
    assert {p: p.stat().st_mtime_ns for p in isolated_env.glob("*.txt")} == mtimes


def test_in_the_transcript_the_turn_under_the_cursor_is_rewound(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    states = three_turns(nv, fake_api)
    nv.command("Sightline chat")
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    nv.api.set_current_win(nv.call("bufwinid", tbuf))
    nv.input("<Esc>")
    rows = list(nv.api.buf_get_lines(tbuf, 0, -1, False))
    # The cursor on the reply of the first turn ("first" is its prompt).
    row = rows.index("first") + 2
    nv.api.win_set_cursor(0, [row + 1, 0])
    nv.input(":Sightline rewind<CR>")
    wait_core_pending(nv)  # turn 2 created d.txt: asked before it goes
    nv.input(":Sightline accept<CR>")
    idle(nv)
    assert files(isolated_env) == START
    wait_for(
        lambda: "rewinding to before #1 (first)" in "\n".join(transcript(nv)),
        10,
        "the rewind's note",
    )
    assert states["after1"] != START


def test_rewind_fork_restores_the_files_and_the_next_request_holds_no_undone_turn(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    screen = screen_factory(nv, 200, 40)
    states = three_turns(nv, fake_api)
    nv.input("<Esc>:Sightline rewind fork<CR>")
    screen.wait_text("rewind the files and fork the conversation to before which turn?")
    nv.input("2<CR>")  # newest first: #3, #2, #1
    st = wait_core_pending(nv)
    assert st["pending"] == "delete d.txt (created by the undone turns)?"
    nv.input(":Sightline accept<CR>")
    idle(nv)
    assert files(isolated_env) == states["after1"]
    # The conversation goes on without turns 2 and 3; turn 2's prompt is back to edit.
    assert composer(nv) == ["second"]
    shown = "\n".join(transcript(nv))
    assert "forked from" in shown and "third" not in shown
    fake_api.script(text("fine"))
    nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input("<C-u>second, differently<C-s>")
    body = accepted(fake_api, 7)[6]
    idle(nv)
    said = [t for m in body["messages"] for t in texts(m)]
    assert said[0] == "first" and said[-1] == "second, differently"
    assert "second" not in said and not any("third" in t for t in said)
    assert "d.txt" not in json.dumps(body["messages"])  # turn 2's tool calls are gone too
    # The forked conversation can undo the rewind (its checkpoint is there, #4, the newest).
    rewind_pick(nv, screen, 1)
    idle(nv)
    assert files(isolated_env) == states["after3"]


def test_rewind_fork_of_a_rewind_is_refused_and_changes_nothing(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    states = three_turns(nv, fake_api)
    nv.input("<Esc>:Sightline rewind 3<CR>")
    idle(nv)
    after = files(isolated_env)
    assert after != states["after3"]
    path = nv.exec_lua("return require('sightline').status().conversation")
    err = nv.exec_lua("return select(2, require('sightline.ui.rewind').command({'fork', '4'}))")
    assert err == (
        "sightline: #4 is a rewind, not a turn: there is no message to fork at "
        "(:Sightline rewind 4 undoes it without a fork)"
    )
    assert files(isolated_env) == after
    assert nv.exec_lua("return require('sightline').status().conversation") == path


def test_a_fork_keeps_the_checkpoints_of_the_turns_it_holds(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    screen = screen_factory(nv, 200, 40)
    states = three_turns(nv, fake_api)
    # A fork of the whole conversation (from the editor's window) holds all three turns'.
    path = nv.exec_lua("return require('sightline').status().conversation")
    nv.command("Sightline fork")
    wait_for(lambda: nv.exec_lua("return require('sightline').status().conversation") != path)
    assert files(isolated_env) == states["after3"]  # a fork changes no file
    rewind_pick(nv, screen, 2)  # newest first: #3, #2, #1
    wait_core_pending(nv)  # turn 2 created d.txt: asked before it goes
    nv.input(":Sightline accept<CR>")
    idle(nv)
    assert files(isolated_env) == states["after1"]
    # A fork at the third message holds turns 1 and 2: their checkpoints, not the third's
    # nor the rewind's (#4).
    nv.command("Sightline chat")
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    nv.api.set_current_win(nv.call("bufwinid", tbuf))
    nv.api.win_set_cursor(0, [transcript(nv).index("third") + 1, 0])
    nv.command("Sightline fork")
    wait_for(lambda: composer(nv) == ["third"], what="the message in the composer")
    nv.input("<Esc>:Sightline rewind<CR>")
    screen.wait_text("rewind the files to before which turn?")
    screen.wait_text("#2 ")
    assert screen.find("#1 ") is not None
    assert screen.find("#3 ") is None and screen.find("#4 ") is None
    nv.input("<Esc>")
    screen.wait_for(lambda s: s.find("rewind the files") is None, 10, "the picker gone")
    assert files(isolated_env) == states["after1"]
