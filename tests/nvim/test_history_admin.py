"""Issue 19 item 18: the history picker previews the last exchange; conversations are renamed
and deleted (`:Sightline history rename|delete`), a delete asked first, and no history file is
ever lost without that confirmation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import transcript, wait_for, wait_idle
from tests.screen import Screen


def converse(nv: Any, *prompts: str) -> Path:
    for prompt in prompts:
        nv.exec_lua("assert(require('sightline').send(...))", prompt)
        wait_idle(nv)
    path = Path(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    nv.command("Sightline reset")
    return path


def test_the_picker_previews_the_last_exchange_and_opens_the_pick(
    nvim: Any, screen_factory: Callable[..., Screen]
) -> None:
    converse(nvim, "first question", "the last question")
    converse(nvim, "another talk")
    screen = screen_factory(nvim, 120, 30)
    nvim.input(":Sightline history<CR>")
    screen.wait_text("another talk  (1 turn · echo)")  # its turns and provider (issue 22)
    screen.wait_text("Agent:")
    screen.wait_text("echo: another talk")  # the newest first, its last exchange beside it
    nvim.input("j")
    screen.wait_text("echo: the last question")
    assert screen.find("echo: first question") is None  # only the last exchange
    nvim.input("<CR>")
    wait_for(lambda: "echo: the last question" in transcript(nvim), what="the reopened talk")
    screen.wait_for(lambda s: s.find("last exchange") is None, what="the picker to close")


def test_rename_from_the_command_line_is_listed(nvim: Any, screen_factory: Any) -> None:
    converse(nvim, "an unhelpful first line")
    screen = screen_factory(nvim, 120, 30)
    assert "rename" in nvim.call("getcompletion", "Sightline history ", "cmdline")
    nvim.input(":Sightline history rename<CR>")
    screen.wait_text("rename a conversation")
    nvim.input("<CR>")
    screen.wait_text("New title: an unhelpful first line")
    nvim.input("<C-u>Parser refactor<CR>")
    screen.wait_text('sightline: renamed to "Parser refactor"')
    listed = nvim.exec_lua("return require('sightline.host').request('history.list').conversations")
    assert [c["title"] for c in listed] == ["Parser refactor"]


def test_delete_asks_first_and_cancel_keeps_the_file(nvim: Any, screen_factory: Any) -> None:
    path = converse(nvim, "keep or drop")
    screen = screen_factory(nvim, 120, 30)
    assert "delete" in nvim.call("getcompletion", "Sightline history d", "cmdline")
    nvim.input(":Sightline history delete<CR>")
    screen.wait_text("delete a conversation")
    nvim.input("<CR>")
    screen.wait_text('Delete the conversation "keep or drop" (2 messages)?')
    nvim.input("c")
    screen.wait_text("sightline: nothing deleted")
    assert path.exists()
    nvim.input(":Sightline history delete<CR>")
    screen.wait_text("delete a conversation")
    nvim.input("<CR>")
    screen.wait_text("(D)elete, [C]ancel")
    nvim.input("d")
    screen.wait_text('sightline: deleted "keep or drop"')
    assert not path.exists()
    assert nvim.exec_lua("return {require('sightline').history()}")[1] == (
        "sightline: no conversations in this workspace yet"
    )


def test_the_open_conversation_is_never_deleted(nvim: Any, screen_factory: Any) -> None:
    path = converse(nvim, "older one")
    nvim.exec_lua("assert(require('sightline').open_conversation(...))", str(path))
    wait_for(lambda: "echo: older one" in transcript(nvim))
    nvim.input("<Esc>")
    screen = screen_factory(nvim, 120, 30)
    nvim.input(":Sightline history delete<CR>")
    screen.wait_text("delete a conversation")
    nvim.input("<CR>")
    screen.wait_text("(D)elete, [C]ancel")
    nvim.input("d")
    screen.wait_text("this conversation is open")
    assert path.exists()
