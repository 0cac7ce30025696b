"""`:Sightline review`, typed: every hunk of the conversation in the quickfix list, each file's
reverts offered in its buffer with the gate's inline hunk view; reverting one hunk writes that
hunk only; a hunk the user edited since is marked and asks twice; an ACP agent's own disk
writes are in it; `:Sightline review HEAD` reviews against git."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim
from tests.agent_util import claude, decide, idle, lines, send, wait_core_pending
from tests.checkpoint_util import propose, setup_ws, three_turns
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, reply, text

__all__ = ["fake_api"]


def qflist(nv: Any) -> list[tuple[str, int, str]]:
    items = nv.call("getqflist")
    return [(Path(nv.call("bufname", i["bufnr"])).name, i["lnum"], i["text"]) for i in items]


def test_review_lists_every_hunk_and_reverts_only_those_taken(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    setup_ws(isolated_env)
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    three_turns(nv, fake_api)
    nv.command("edit c.txt")
    nv.input("Gomine<Esc>:write<CR>")  # the user's own line under the agent's
    wait_for(lambda: (isolated_env / "c.txt").read_text() == "gamma\nc3\nmine\n")

    nv.input(":Sightline review<CR>")
    st = wait_core_pending(nv)
    assert qflist(nv) == [
        ("a.txt", 2, "hunk 1/1: revert +1 −1"),
        ("b.txt", 2, "hunk 1/1: revert +1 −1"),
        ("c.txt", 2, "hunk 1/1: revert +1 −2 — edited by you since"),
        ("d.txt", 1, "hunk 1/1: revert +0 −1 (created)"),
    ]
    nv.command("cfirst")
    nv.command("cnext")
    assert Path(nv.call("bufname", "%")).name == "b.txt"
    # a.txt first, drawn inline in its buffer: accept reverts it.
    assert st["pending"] == "review a.txt (1 hunk: accept reverts, reject keeps)"
    decide(nv, "accept")
    st = wait_core_pending(nv)
    assert st["pending"].startswith("review b.txt")
    decide(nv, "reject")  # kept
    st = wait_core_pending(nv)
    assert st["pending"].startswith("review c.txt")
    # (the note comes in the transcript's push, which may follow the status's)
    wait_for(
        lambda: "hunk 1 hold your edits since the agent's" in "\n".join(transcript(nv)),
        10,
        "the note on the user's edits",
    )
    decide(nv, "accept")
    st = wait_core_pending(nv)  # asked again: it holds my line
    assert st["pending"] == "revert hunk 1 of c.txt over your own edits?"
    decide(nv, "reject")
    st = wait_core_pending(nv)
    assert st["pending"].startswith("review d.txt")
    decide(nv, "reject")
    idle(nv)
    assert (isolated_env / "a.txt").read_text() == "alpha\none\n"
    assert (isolated_env / "b.txt").read_text() == "beta\nb2\n"
    assert (isolated_env / "c.txt").read_text() == "gamma\nc3\nmine\n"
    assert (isolated_env / "d.txt").read_text() == "new\n"


def test_reverting_one_hunk_in_the_buffer_writes_that_hunk_only(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    path = isolated_env / "e.txt"
    path.write_text("one\ntwo\nthree\nfour\nfive\n")
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    buf = nv.api.get_current_buf().number
    nv.command(f"edit {path}")
    buf = nv.api.get_current_buf().number
    fake_api.script(
        reply(propose("e.txt", "one", "ONE"), propose("e.txt", "five", "FIVE")), text("ok")
    )
    send(nv)
    idle(nv)
    nv.input(":Sightline review<CR>")
    wait_core_pending(nv)
    shown = "return require('sightline.ui.inline').shown()"
    wait_for(lambda: nv.exec_lua(shown) and len(nv.exec_lua(shown)["hunks"]) == 2)
    nv.api.win_set_cursor(0, [1, 0])
    nv.input("\\ha")  # revert the first hunk
    wait_for(lambda: nv.exec_lua(shown)["hunks"][0].get("decided") == "accept")
    nv.input("]h\\hr")  # keep the second
    idle(nv)
    assert path.read_text() == "one\ntwo\nthree\nfour\nFIVE\n"
    assert lines(nv, buf) == ["one", "two", "three", "four", "FIVE"]
    assert "reverted in e.txt: hunk 1" in "\n".join(transcript(nv))
    nv.command("undo")  # one undo step
    assert lines(nv, buf) == ["ONE", "two", "three", "four", "FIVE"]


def test_an_acp_agents_own_disk_write_is_reviewed_and_a_git_ref_too(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text("x = 1\ny = 2\n")
    git = ["git", "-C", str(isolated_env), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "app.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    turn = [{"disk_write": str(app), "content": "x = 1\ny = 3\n"}, {"say": "done"}]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "go")
    idle(nv)
    nv.input(":Sightline review<CR>")
    wait_core_pending(nv)
    assert qflist(nv) == [("app.py", 2, "hunk 1/1: revert +1 −1")]
    decide(nv, "reject")
    idle(nv)
    (isolated_env / "new.txt").write_text("untracked\n")
    nv.input(":Sightline review HEAD<CR>")
    wait_core_pending(nv)
    assert qflist(nv) == [
        ("app.py", 2, "hunk 1/1: revert +1 −1"),
        ("new.txt", 1, "hunk 1/1: revert +0 −1 (created)"),
    ]
    decide(nv, "accept")
    st = wait_core_pending(nv)
    assert st["pending"].startswith("review new.txt")
    decide(nv, "reject")
    idle(nv)
    assert app.read_text() == "x = 1\ny = 2\n"
    assert (isolated_env / "new.txt").read_text() == "untracked\n"
