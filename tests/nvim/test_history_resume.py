"""A conversation reopened from `:Sightline history` reads as it did live and continues
honestly: a reply cut off by quitting is shown as interrupted and its prompt is not asked
again in the next request; each turn keeps its footer; the list puts the conversation last
used first."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from tests import fakeapi as fa
from tests.agent_util import TURN_TIMEOUT_S, claude, core_pid, core_status, idle, texts
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, validation_error
from tests.processes import gone
from tests.screen import Screen

__all__ = ["fake_api"]


def typed(nv: Any, text: str) -> None:
    """Type a prompt into the composer and send it, as the user does."""
    if nv.api.get_mode()["mode"] != "i":
        nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input(text + "<C-s>")


def quit_all(nv: Any) -> None:
    pid = core_pid(nv)
    with contextlib.suppress(Exception):  # the session ends with Neovim
        nv.command("qa!")
    wait_for(lambda: gone(pid), TURN_TIMEOUT_S, "the core to exit with Neovim")


def pick_first(nv: Any, screen: Screen) -> None:
    """`:Sightline history`, the first (most recent) conversation picked."""
    nv.exec_lua("vim.ui.select = function(items, _, cb) cb(items[1]) end")
    nv.input(":Sightline history<CR>")


def test_a_reply_cut_off_by_quitting_is_interrupted_and_never_asked_again(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(fa.hold(of=fa.text("Once upon a time, in a land far away")))
    typed(nv, "long story please")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the reply to stream")
    path = str(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    quit_all(nv)

    again = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(again, 160, 30)
    pick_first(again, screen)
    wait_for(lambda: core_status(again)["conversation_path"] == path, TURN_TIMEOUT_S)
    # The transcript says the turn got no reply, below the question.
    screen.wait_text("✗ interrupted")
    shown = transcript(again)
    question = shown.index("long story please")
    assert any(line.startswith("✗ interrupted") for line in shown[question:]), shown
    fake_api.script(fa.text("yes, I am here"))
    typed(again, "are you there")
    idle(again)
    screen.wait_text("yes, I am here")
    request = fake_api.wait_for_requests(2, TURN_TIMEOUT_S)[1].body
    assert validation_error(request) is None
    messages = request["messages"]
    # The old prompt is not part of the question the model answers now.
    assert texts(messages[-1]) == ["are you there"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert texts(messages[0]) == ["long story please"]
    assert "no reply" in texts(messages[1])[0]


def test_a_reopened_conversation_keeps_its_footers_and_the_list_is_by_last_use(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(fa.text("first answer"))
    typed(nv, "first conversation")
    idle(nv)
    first = str(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    footer = next(line for line in transcript(nv) if line.startswith("─ "))
    assert " in · " in footer and " out" in footer  # time, tokens (and cost)
    nv.command("Sightline reset")
    fake_api.script(fa.text("second answer"))
    typed(nv, "second conversation")
    idle(nv)
    second = str(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    # The first, started earlier, is continued later: it is the one last used.
    past = time.time() - 60
    os.utime(second, (past, past))
    nv.command("Sightline reset")
    nv.exec_lua("assert(require('sightline').open_conversation(...))", first)
    fake_api.script(fa.text("continued"))
    typed(nv, "and more")
    idle(nv)
    quit_all(nv)

    again = claude(nvim_factory, fake_api)
    screen: Screen = screen_factory(again, 160, 30)
    titles = again.exec_lua(
        "return vim.tbl_map(function(c) return c.title end,"
        " require('sightline.host').request('history.list').conversations)"
    )
    assert titles == ["first conversation", "second conversation"]
    assert Path(first).exists()
    pick_first(again, screen)
    screen.wait_text("continued")
    shown = transcript(again)
    footers = [line for line in shown if line.startswith("─ ")]
    assert len(footers) == 2, shown
    assert footers[0] == footer
    # Each footer ends its own turn, under its reply.
    assert shown.index("first answer") < shown.index(footers[0]) < shown.index("and more")
    screen.wait_text(footer)
