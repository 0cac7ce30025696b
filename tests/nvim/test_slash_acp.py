"""An ACP agent's slash commands (available_commands_update) in the composer's `/`: marked
as the agent's, sent to it as typed (the protocol runs a command from the prompt's text),
and replaced when the agent announces a new list. Driven with the scripted agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim
from tests.agent_util import decide, idle, send, wait_pending
from tests.complete_util import (
    SETUP_BLINK,
    blink_menu,
    menu,
    open_composer,
    pum,
    send_keys,
    type_each,
    words,
)
from tests.conftest import wait_for
from tests.lua_helper import lua_helper

COMMANDS = [["web", "Search the web", "<query>"], ["tests", "Run the test suite"]]


def test_agent_commands_are_offered_sent_and_refreshed(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    turns: list[list[dict[str, Any]]] = [
        # Announced within the first turn, so the core has them once it is idle (one
        # announced while the menu is open joins it: the tests below).
        [{"commands": COMMANDS}, {"say": "hello"}],
        [{"say": "searching"}, {"commands": [["deploy", "Deploy the app"]]}],
        [{"say": "ok"}],
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, turns)
    nv.command("set columns=200")
    send(nv, "hi")  # the agent's session starts with the first turn, then it announces them
    idle(nv)
    open_composer(nv)
    type_each(nv, "/")
    wait_for(lambda: {"/web", "/tests"} <= set(words(nv)), 10, "the agent's commands")
    items = {i["word"]: i for i in menu(nv)["items"]}
    assert items["/web"]["kind"] == "agent" and items["/web"]["abbr"] == "/web <query>"
    assert items["/web"]["menu"] == "[agent scripted-agent] Search the web"
    nv.input("<C-e>")
    send_keys(nv, "web cats")
    idle(nv)
    prompts = log.wait("prompt", 2)
    texts = [b["text"] for b in prompts[1]["blocks"] if b.get("type") == "text"]
    assert texts[:1] == ["/web cats"]  # the command as typed, first
    nv.input("<C-u>")
    type_each(nv, "/")
    wait_for(lambda: "/deploy" in words(nv), 10, "the new list")
    assert "/web" not in words(nv)


# A turn that waits on the user's decision, then announces the agent's commands: they come
# while the composer's `/` menu is open.
LATE: list[list[dict[str, Any]]] = [
    [
        {"permission": {"id": "p1", "title": "Run make", "kind": "execute"}},
        {"commands": [["deploy", "Deploy the app"]]},
        {"say": "done"},
    ],
    [{"say": "ok"}],
]


def test_commands_announced_late_join_the_open_menu(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    nv, _log = acp_nvim(nvim_factory, tmp_path, LATE)
    send(nv, "build")
    wait_pending(nv)
    open_composer(nv)
    type_each(nv, "/")
    wait_for(lambda: "/compact" in words(nv), 10, "the / menu")
    assert "/deploy" not in words(nv)
    decide(nv, "accept")  # the agent goes on, and announces its commands
    wait_for(lambda: "/deploy" in words(nv) and pum(nv), 10, "the late command, no key typed")
    assert nv.exec_lua("return vim.api.nvim_get_current_line()") == "/"
    type_each(nv, "dep")
    wait_for(lambda: words(nv) == ["/deploy"], 10, "/dep")


def test_commands_announced_late_reach_blinks_menu(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    nv, _log = acp_nvim(nvim_factory, tmp_path, LATE)
    lua_helper(nv, "engines.fake_blink")
    nv.exec_lua(SETUP_BLINK)
    send(nv, "build")
    wait_pending(nv)
    open_composer(nv)
    type_each(nv, "/de")
    wait_for(lambda: blink_menu(nv) is not None, 10, "blink's / menu")
    assert "/deploy" not in (blink_menu(nv) or [])
    decide(nv, "accept")
    wait_for(lambda: "/deploy" in (blink_menu(nv) or []), 10, "the late command in blink's menu")
