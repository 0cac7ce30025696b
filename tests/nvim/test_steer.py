"""Steering the conversation through typed keys, with the README's configuration and the
real anthropic SDK against the loopback Messages API (its validator rejects what the real
API rejects): a message typed while a turn runs is queued and sent when it ends, a steered
one arrives after the tool results in the same request, `e` on your message forks with the
edited text, `r` regenerates the same request, a queued message survives a restart, and
the history picker reopens a branch exactly."""

from __future__ import annotations

from typing import Any

from tests import fakeapi as fa
from tests.agent_util import (
    TURN_TIMEOUT_S,
    accepted,
    claude,
    core_status,
    idle,
    texts,
    wait_pending,
)
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api
from tests.screen import Screen

__all__ = ["fake_api"]

EDITED_NOTE = "edited — the earlier version is kept, :Sightline history shows it"
REGENERATED_NOTE = "regenerated — the earlier answer is kept, :Sightline history shows it"


def typed(nv: Any, text: str, key: str = "<C-s>") -> None:
    """Type into the composer and send with `key`, as the user does."""
    if nv.api.get_mode()["mode"] != "i":
        nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input(text + key)


def to_transcript_line(nv: Any, text: str) -> None:
    """Leave the composer for the transcript, cursor on the line that reads `text`."""
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    win = nv.exec_lua("return require('sightline.ui.pane.state').S.twin")
    nv.api.set_current_win(win)
    row = transcript(nv).index(text) + 1
    nv.api.win_set_cursor(win, [row, 0])


def composer_text(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def test_a_steered_message_follows_the_tool_results_and_a_queued_one_the_turn(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    looking = fa.reply(fa.text("looking"), fa.tool_use("list_files", {}))
    fake_api.script(fa.hold(of=looking), fa.text("done looking"), fa.text("X is done"))
    typed(nv, "list the files")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the reply to stream")
    typed(nv, "also mind the tests", "<M-CR>")
    screen.wait_text("◌ queued (sent at the next tool boundary): also mind the tests")
    typed(nv, "then do X")
    screen.wait_text("◌ queued (sent when the turn ends): then do X")
    screen.wait_text("dq cancels · cq edits")
    assert composer_text(nv) == [""]  # taken: nothing is left to send twice
    fake_api.release()
    bodies = accepted(fake_api, 3)
    idle(nv)
    steered = bodies[1]["messages"][-1]["content"]
    assert [b["type"] for b in steered] == ["tool_result", "text"], steered
    assert steered[1]["text"] == "also mind the tests"
    assert texts(bodies[2]["messages"][-1]) == ["then do X"]
    screen.wait_text("X is done")
    assert "◌ queued" not in screen.text()
    shown = transcript(nv)
    assert shown.index("also mind the tests") < shown.index("done looking")
    assert shown.index("then do X") > shown.index("done looking")


def test_a_queued_message_can_be_cancelled_or_taken_back_to_edit(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.hold(of=fa.text("working on it")))
    typed(nv, "start")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the reply to stream")
    typed(nv, "drop me")
    screen.wait_text("◌ queued (sent when the turn ends): drop me")
    nv.input("<Esc>dq")
    wait_for(lambda: "◌ queued" not in screen.text(), what="the queued message gone")
    typed(nv, "fix me")
    screen.wait_text("◌ queued (sent when the turn ends): fix me")
    nv.input("<Esc>cq")
    wait_for(lambda: composer_text(nv) == ["fix me"], what="the queued text in the composer")
    fake_api.release()
    idle(nv)
    assert len(fake_api.requests) == 1  # neither was sent


def test_a_queued_message_survives_a_restart_and_comes_back_into_the_composer(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.hold(of=fa.text("working on it")))
    typed(nv, "start")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the reply to stream")
    typed(nv, "do not lose me")
    screen.wait_text("◌ queued (sent when the turn ends): do not lose me")
    # A statusline sees it too (sightline.status()).
    assert [q["text"] for q in status(nv)["queued"]] == ["do not lose me"]
    nv.input("<Esc>")
    nv.command("Sightline restart")
    wait_for(lambda: composer_text(nv) == ["do not lose me"], TURN_TIMEOUT_S, "the text back")
    wait_for(lambda: "◌ queued" not in screen.text(), what="no longer queued")


def test_edit_forks_and_the_next_request_holds_the_edit_not_the_old_branch(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.text("answer one"), fa.text("answer two"), fa.text("answer three"))
    typed(nv, "first question")
    idle(nv)
    typed(nv, "second question")
    idle(nv)
    to_transcript_line(nv, "first question")
    nv.input("e")
    wait_for(lambda: composer_text(nv) == ["first question"], what="the message in the composer")
    screen.wait_text("editing an earlier message")
    nv.input("A, better<C-s>")
    bodies = accepted(fake_api, 3)
    idle(nv)
    assert [texts(m) for m in bodies[2]["messages"]] == [["first question, better"]]
    screen.wait_text(EDITED_NOTE)
    shown = transcript(nv)
    assert "second question" not in shown and "answer one" not in shown
    assert "first question, better" in shown and "answer three" in shown
    # The earlier branch stays: the picker offers it, and it reopens as it was.
    nv.exec_lua(
        "vim.ui.select = function(items, opts, cb)"
        " if opts.kind == 'sightline.branch' then"
        "  for _, b in ipairs(items) do if b.id == '1' then return cb(b) end end"
        " end cb(items[1]) end"
    )
    nv.input("<Esc>:Sightline history<CR>")
    wait_for(lambda: "second question" in transcript(nv), TURN_TIMEOUT_S, "the first branch")
    assert core_status(nv)["branch"] == "1"
    shown = transcript(nv)
    assert "answer two" in shown and "first question, better" not in shown


def test_a_fork_is_refused_while_a_proposal_waits(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, tmp_path: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.text("hello"), fa.hold(of=fa.text("thinking hard")))
    typed(nv, "hi")
    idle(nv)
    typed(nv, "next")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the reply to stream")
    to_transcript_line(nv, "hi")
    nv.input("e")
    screen.wait_text("a turn is running: wait for it or :Sightline stop first")
    assert composer_text(nv) == [""]
    fake_api.release()
    idle(nv)


def test_regenerate_sends_the_same_messages_again_and_replaces_the_reply(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.text("first try"), fa.text("second try"))
    typed(nv, "tell me a joke")
    idle(nv)
    to_transcript_line(nv, "first try")
    nv.input("r")
    bodies = accepted(fake_api, 2)
    idle(nv)
    assert bodies[1]["messages"] == bodies[0]["messages"]
    screen.wait_text(REGENERATED_NOTE)
    shown = transcript(nv)
    assert "second try" in shown and "first try" not in shown
    assert shown.count("tell me a joke") == 1


def test_the_history_list_shows_turns_provider_and_branches_and_filters_by_text(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(fa.text("a1"), fa.text("a2"), fa.text("a2 again"), fa.text("b1"))
    typed(nv, "apples first")
    idle(nv)
    typed(nv, "apples second")
    idle(nv)
    nv.input("<Esc>")
    nv.command("Sightline regenerate")
    accepted(fake_api, 3)
    idle(nv)
    nv.command("Sightline rename fruit talk")
    nv.command("Sightline reset")
    typed(nv, "bananas")
    idle(nv)
    nv.input("<Esc>")
    nv.exec_lua(
        "_G.shown = nil; vim.ui.select = function(items, opts, cb)"
        " _G.shown = vim.tbl_map(opts.format_item, items) end"
    )
    nv.command("Sightline history")
    labels = nv.exec_lua("return _G.shown")
    assert len(labels) == 2
    assert labels[0].endswith("bananas  (1 turn · anthropic)"), labels
    assert labels[1].endswith("fruit talk  (2 turns · anthropic · 2 branches)"), labels
    nv.command("Sightline history FRUIT")
    assert [label.split("  ")[1] for label in nv.exec_lua("return _G.shown")] == ["fruit talk"]


def test_regenerate_withdraws_the_replaced_answers_waiting_proposal_silently(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, isolated_env: Any
) -> None:
    path = isolated_env / "app.py"
    source = "def total(xs):\n    return sum(xs)\n"
    path.write_text(source)
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    edit = {"path": "app.py", "old_string": "sum(xs)", "new_string": "0"}
    fake_api.script(fa.tool_use("propose_edit", edit), fa.text("a plain answer"))
    typed(nv, "fix total")
    wait_pending(nv)
    nv.input("<Esc>")
    to_transcript_line(nv, "fix total")
    nv.input("r")
    bodies = accepted(fake_api, 2)
    idle(nv)
    assert bodies[1]["messages"] == bodies[0]["messages"]  # the replaced branch is not sent
    screen.wait_text("a plain answer")
    assert path.read_text() == source
    shown = transcript(nv)
    assert REGENERATED_NOTE in shown
    assert not any("rejected" in line or "stopped" in line for line in shown), shown


def test_fork_at_a_message_starts_a_new_conversation_and_both_continue(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(nv, 200, 40)
    fake_api.script(fa.text("answer one"), fa.text("answer two"), fa.text("forked answer"))
    typed(nv, "first question")
    idle(nv)
    typed(nv, "second question")
    idle(nv)
    before = core_status(nv)["conversation_path"]
    to_transcript_line(nv, "second question")
    nv.command("Sightline fork")
    wait_for(lambda: composer_text(nv) == ["second question"], what="the message in the composer")
    screen.wait_text("forked from “first question”")
    after = core_status(nv)["conversation_path"]
    assert after != before
    shown = transcript(nv)
    assert "answer one" in shown and "second question" not in shown
    nv.input("A, in the fork<C-s>")
    bodies = accepted(fake_api, 3)
    idle(nv)
    asked = [texts(m) for m in bodies[2]["messages"]]
    assert asked == [["first question"], ["answer one"], ["second question, in the fork"]]
    # The other one is still in the history, whole.
    nv.input("<Esc>")
    nv.exec_lua(
        "_G.shown = nil; vim.ui.select = function(items, opts, cb)"
        " _G.shown = vim.tbl_map(function(c) return c.path end, items) end"
    )
    nv.command("Sightline history")
    assert sorted(nv.exec_lua("return _G.shown")) == sorted([before, after])
