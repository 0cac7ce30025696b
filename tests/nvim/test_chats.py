"""Several conversations at once, one a tab page's pane, through typed keys with the README's
configuration and the real anthropic SDK against the loopback Messages API: two tab pages
run two turns at once and a decision in one leaves the other's proposal waiting,
`:Sightline chats` lists them with their state and switches, a reopened conversation goes
into the tab's pane, and a second Neovim on the workspace holds a conversation of its own
while the first holds another (the history lock is per conversation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests import fakeapi as fa
from tests.agent_util import TURN_TIMEOUT_S, accepted, claude, texts
from tests.conftest import wait_for
from tests.fakeapi import FakeAnthropic, fake_api
from tests.screen import Screen

__all__ = ["fake_api"]


def propose(path: str, old: str, new: str) -> Any:
    return fa.tool_use("propose_edit", {"path": path, "old_string": old, "new_string": new})


def typed(nv: Any, text: str) -> None:
    """Open (or focus) this tab page's pane, type into its composer and send."""
    if nv.api.get_mode()["mode"] != "i":
        nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input(text + "<C-s>")


def normal(nv: Any) -> None:
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")


def tab_pane(nv: Any) -> int | None:
    """The pane this tab page shows."""
    return nv.exec_lua("return require('sightline.ui.pane.state').of_tab()")  # type: ignore[no-any-return]


def pane_status(nv: Any, pane: int) -> dict[str, Any]:
    """The Lua mirror of pane `pane`'s conversation."""
    return dict(nv.exec_lua("return require('sightline.host').status(...)", pane))


def pane_state(nv: Any, pane: int) -> str:
    return str(pane_status(nv, pane)["state"])


def pane_transcript(nv: Any, pane: int) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane.state').get(...).tbuf", pane)
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def test_two_tab_pages_run_at_once_and_a_decision_in_one_leaves_the_other(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    Path("a.txt").write_text("alpha\n")
    Path("b.txt").write_text("beta\n")
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(
        fa.hold(of=fa.reply(fa.text("streaming in one"), propose("a.txt", "alpha", "ALPHA"))),
        fa.reply(fa.text("proposing in two"), propose("b.txt", "beta", "BETA")),
        fa.text("two is done"),
        fa.text("one is done"),
    )
    typed(nv, "first tab")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the first tab's reply to stream")
    normal(nv)
    nv.input(":tabnew<CR>")
    wait_for(lambda: nv.funcs.tabpagenr() == 2, what="the second tab page")
    assert tab_pane(nv) is None
    typed(nv, "second tab")
    screen.wait_text("● edit b.txt", TURN_TIMEOUT_S)
    one, two = 1, tab_pane(nv)
    assert two is not None and two != one
    # Both turns are in flight: one streams (held by the loopback API), one waits.
    assert pane_state(nv, one) == "working"
    assert pane_state(nv, two) == "awaiting_decision"
    assert "first tab" not in pane_transcript(nv, two)
    assert "second tab" not in pane_transcript(nv, one)
    normal(nv)
    nv.input("ga")
    screen.wait_text("two is done", TURN_TIMEOUT_S)
    assert Path("b.txt").read_text() == "BETA\n"
    assert Path("a.txt").read_text() == "alpha\n"
    assert pane_state(nv, one) == "working"  # its stream goes on, untouched
    fake_api.release()
    wait_for(lambda: pane_state(nv, one) == "awaiting_decision", TURN_TIMEOUT_S, "tab one's edit")
    wait_for(lambda: pane_state(nv, two) == "idle", TURN_TIMEOUT_S, "tab two idle")
    assert "● edit" not in screen.text()  # this tab's bar shows its own conversation
    nv.input(":tabprevious<CR>")
    screen.wait_text("● edit a.txt")
    nv.input("ga")
    screen.wait_text("one is done", TURN_TIMEOUT_S)
    assert Path("a.txt").read_text() == "ALPHA\n"
    bodies = accepted(fake_api, 4)
    # Each conversation's requests hold its own messages only.
    assert [texts(m) for m in bodies[1]["messages"]] == [["second tab"]]
    assert texts(bodies[0]["messages"][0]) == ["first tab"]
    assert texts(bodies[3]["messages"][0]) == ["first tab"]
    assert all("second tab" not in str(m) for m in bodies[3]["messages"])
    paths = {pane_status(nv, p)["conversation_path"] for p in (one, two)}
    assert len(paths) == 2  # two history files


def test_chats_lists_the_open_conversations_with_their_state_and_switches(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.text("answer one"), fa.hold(of=fa.text("answer two")))
    typed(nv, "question one")
    screen.wait_text("answer one", TURN_TIMEOUT_S)
    wait_for(lambda: pane_state(nv, 1) == "idle", TURN_TIMEOUT_S, "idle")
    normal(nv)
    nv.input(":tabnew<CR>")
    typed(nv, "question two")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the second reply to stream")
    normal(nv)
    nv.input(":tabnew<CR>")
    wait_for(lambda: nv.funcs.tabpagenr() == 3, what="a third tab page")
    # Neovim's own vim.ui.select (inputlist): the list on the screen, a number picks.
    nv.input(":Sightline chats<CR>")
    screen.wait_text("sightline chats")
    screen.wait_text("1: tab 1  question one  (idle · anthropic · 1 turn)")
    screen.wait_text("2: tab 2  question two  (working · anthropic · 1 turn)")
    nv.input("1<CR>")
    wait_for(lambda: nv.funcs.tabpagenr() == 1, what="tab page one")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="the composer ready")
    composer = nv.exec_lua("return require('sightline.ui.pane.state').get(1).cbuf")
    assert nv.api.get_current_buf().number == composer
    screen.wait_text("answer one")  # drawn once the switch is flushed
    assert "question two" not in screen.text()
    fake_api.release()
    wait_for(lambda: pane_state(nv, 2) == "idle", TURN_TIMEOUT_S, "the second turn to end")
    # Any picker: the items are the conversations; picking the second goes to its tab.
    nv.exec_lua(
        "vim.ui.select = function(items, opts, cb)"
        " for _, c in ipairs(items) do if c.pane == 2 then return cb(c) end end end"
    )
    normal(nv)
    nv.input(":Sightline chats<CR>")
    wait_for(lambda: nv.funcs.tabpagenr() == 2, what="tab page two")
    screen.wait_text("answer two")


def test_a_reopened_conversation_goes_into_the_tab_pane_and_two_neovims_hold_their_own(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    first = claude(nvim_factory, fake_api)
    fake_api.script(fa.text("old answer"), fa.text("held answer"))
    typed(first, "the old one")
    wait_for(lambda: pane_state(first, 1) == "idle" and pane_status(first, 1)["tokens"], 30)
    old = pane_status(first, 1)["conversation_path"]
    normal(first)
    first.input(":Sightline reset<CR>")
    wait_for(lambda: pane_status(first, 1).get("conversation_path") in (None, first.lua.vim.NIL))
    typed(first, "the held one")
    wait_for(lambda: pane_status(first, 1).get("conversation_path") not in (None, old), 30)
    held = pane_status(first, 1)["conversation_path"]
    wait_for(lambda: pane_state(first, 1) == "idle", TURN_TIMEOUT_S, "the first Neovim idle")

    second = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(second, 200, 40)
    pick = (
        "local want = ...; vim.ui.select = function(items, opts, cb)"
        " for _, c in ipairs(items) do if c.path == want then return cb(c) end end end"
    )
    second.exec_lua(pick, old)
    second.input(":Sightline history<CR>")
    screen.wait_text("old answer", TURN_TIMEOUT_S)
    assert tab_pane(second) == 1
    assert pane_status(second, 1)["read_only"] is False  # the first Neovim holds another
    # A second tab page: the conversation the first Neovim holds opens in that tab's pane,
    # read-only there; the first tab's pane keeps its own.
    normal(second)
    second.input(":tabnew<CR>")
    wait_for(lambda: second.funcs.tabpagenr() == 2, what="the second tab page")
    second.exec_lua(pick, held)
    second.input(":Sightline history<CR>")
    screen.wait_text("held answer", TURN_TIMEOUT_S)
    pane = tab_pane(second)
    assert pane is not None and pane != 1
    assert pane_status(second, pane)["conversation_path"] == held
    assert pane_status(second, pane)["read_only"] is True
    assert pane_status(second, 1)["conversation_path"] == old
    assert "held answer" not in pane_transcript(second, 1)
    # The one it holds goes on in the second Neovim; the first Neovim's stays as it was.
    normal(second)
    second.input(":tabprevious<CR>")
    fake_api.script(fa.text("continued"))
    typed(second, "go on")
    screen.wait_text("continued", TURN_TIMEOUT_S)
    body = accepted(fake_api, 3)[2]
    assert [texts(m) for m in body["messages"]] == [
        ["the old one"],
        ["old answer"],
        ["go on"],
    ]


def test_a_failed_turn_and_a_reset_in_one_tab_leave_the_other_streaming(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen_factory(nv, 200, 40)
    fake_api.script(fa.hold(of=fa.text("one finishes")), fa.cut(of=fa.text("half of two")))
    typed(nv, "first tab")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the first tab's reply to stream")
    normal(nv)
    nv.input(":tabnew<CR>")
    typed(nv, "second tab")
    two = wait_for(lambda: tab_pane(nv), what="the second tab's pane")
    wait_for(lambda: pane_state(nv, two) == "idle" and len(fake_api.requests) == 2, TURN_TIMEOUT_S)
    wait_for(lambda: any("✗" in line for line in pane_transcript(nv, two)), what="its failure")
    assert pane_state(nv, 1) == "working"
    normal(nv)
    nv.input(":Sightline reset<CR>")
    wait_for(lambda: "second tab" not in pane_transcript(nv, two), what="the second tab reset")
    assert pane_state(nv, 1) == "working"
    fake_api.release()
    wait_for(lambda: pane_state(nv, 1) == "idle", TURN_TIMEOUT_S, "the first tab's turn to end")
    assert "one finishes" in pane_transcript(nv, 1)
    assert "first tab" in pane_transcript(nv, 1)


def test_a_restart_reopens_every_tab_conversation_in_its_pane(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.text("answer one"), fa.text("answer two"), fa.text("two again"))
    typed(nv, "question one")
    screen.wait_text("answer one", TURN_TIMEOUT_S)
    wait_for(lambda: pane_state(nv, 1) == "idle", TURN_TIMEOUT_S, "idle")
    normal(nv)
    nv.input(":tabnew<CR>")
    typed(nv, "question two")
    screen.wait_text("answer two", TURN_TIMEOUT_S)
    two = tab_pane(nv)
    assert two is not None
    wait_for(lambda: pane_state(nv, two) == "idle", TURN_TIMEOUT_S, "idle")
    path = pane_status(nv, two)["conversation_path"]
    normal(nv)
    nv.input(":Sightline restart<CR>")
    wait_for(
        lambda: pane_state(nv, two) == "idle" and pane_status(nv, two)["conversation_path"] == path,
        TURN_TIMEOUT_S,
        "the second tab's conversation back",
    )
    typed(nv, "and again")
    screen.wait_text("two again", TURN_TIMEOUT_S)
    body = accepted(fake_api, 3)[2]
    assert [texts(m) for m in body["messages"]] == [
        ["question two"],
        ["answer two"],
        ["and again"],
    ]
    assert "answer one" in pane_transcript(nv, 1) and "answer one" not in screen.text()


def test_the_hunk_keys_in_a_buffer_decide_the_proposal_drawn_there_from_any_tab(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    Path("b.txt").write_text("beta\n")
    nv = claude(nvim_factory, fake_api)
    screen_factory(nv, 200, 40)
    fake_api.script(
        fa.text("nothing to change"),
        propose("b.txt", "beta", "BETA"),
        fa.text("two is done"),
    )
    nv.input(":edit b.txt<CR>")
    typed(nv, "first tab")
    wait_for(lambda: "nothing to change" in pane_transcript(nv, 1), TURN_TIMEOUT_S, "a reply")
    normal(nv)
    nv.input(":tabnew<CR>:buffer b.txt<CR>")
    typed(nv, "second tab")
    two = wait_for(lambda: tab_pane(nv), what="the second tab's pane")
    wait_for(lambda: pane_state(nv, two) == "awaiting_decision", TURN_TIMEOUT_S, "its edit")
    wait_for(lambda: nv.exec_lua("return require('sightline.ui.inline').shown() ~= nil"))
    normal(nv)
    # Back in the first tab page, whose pane is idle: the keys in the edited buffer still
    # decide the second conversation's proposal, the one drawn there.
    nv.input(":tabprevious<CR><C-w>t")
    wait_for(lambda: nv.api.get_current_buf().name.endswith("b.txt"), what="the b.txt window")
    assert tab_pane(nv) == 1
    nv.input("gg\\hA")
    wait_for(lambda: pane_state(nv, two) == "idle", TURN_TIMEOUT_S, "the second turn to end")
    assert Path("b.txt").read_text() == "BETA\n"
    assert "two is done" in pane_transcript(nv, two)
    assert pane_state(nv, 1) == "idle"
    assert "two is done" not in pane_transcript(nv, 1)
    assert not any("BETA" in line for line in pane_transcript(nv, 1))
