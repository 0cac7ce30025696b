"""MCP prompts as `/mcp:{server}:{prompt}`, against the published "everything" server: listed
once the server is up, argument names completed, a missing required one asked with
vim.ui.input, the prompt's messages sent as the user turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.complete_util import (
    SETUP_BLINK,
    SETUP_CMP,
    blink_menu,
    line,
    menu,
    open_composer,
    pum,
    send_keys,
    type_each,
    words,
)
from tests.conftest import transcript, wait_for
from tests.lua_helper import lua_helper
from tests.mcp_servers.npm import everything_server


def everything() -> dict[str, Any]:
    command, *args = everything_server()
    return {"servers": {"every": {"command": command, "args": args}}}


PROMPTS = [
    "/mcp:every:simple-prompt",
    "/mcp:every:args-prompt",
    "/mcp:every:completable-prompt",
    "/mcp:every:resource-prompt",
]


def echoed(nv: Any, *parts: str) -> bool:
    return any(r.startswith("echo:") and all(p in r for p in parts) for r in transcript(nv))


def test_mcp_prompts_are_listed_with_their_arguments_and_sent(
    nvim_factory: Any, isolated_env: Path
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "mcp": everything()})
    nv.command("set columns=200")
    open_composer(nv)
    type_each(nv, "/mcp:")
    # "starting…" first; the menu asks again by itself until the server is up
    wait_for(lambda: words(nv) == PROMPTS, 30, "the server's prompts")
    items = {i["word"]: i for i in menu(nv)["items"]}
    args = items["/mcp:every:args-prompt"]
    assert args["abbr"] == "/mcp:every:args-prompt city= [state=]"
    assert args["menu"].startswith("[MCP every] ") and args["kind"] == "mcp"
    type_each(nv, "every:args")
    wait_for(lambda: words(nv) == ["/mcp:every:args-prompt"], 10, "narrowed")
    nv.input("<C-y>")
    wait_for(lambda: line(nv) == "/mcp:every:args-prompt" and not pum(nv), 10, "accepted")
    type_each(nv, " c")
    wait_for(lambda: words(nv) == ["city="], 10, "the argument's name")
    nv.input("<C-y>")
    wait_for(lambda: line(nv) == "/mcp:every:args-prompt city=", 10, "the argument inserted")
    send_keys(nv, "Paris")
    wait_for(lambda: echoed(nv, "Paris"), 30, "the prompt's text sent")
    rows = transcript(nv)
    typed = rows.index("/mcp:every:args-prompt city=Paris")
    assert rows[typed + 1] == "▸ sent as" and "Paris" in rows[typed + 2]


def test_a_missing_required_argument_is_asked_for(nvim_factory: Any, isolated_env: Path) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "mcp": everything()})
    open_composer(nv)
    type_each(nv, "/mcp:")
    wait_for(lambda: "/mcp:every:args-prompt" in words(nv), 30, "the server's prompts")
    nv.input("<C-e>")
    send_keys(nv, "every:args-prompt")
    wait_for(lambda: nv.api.get_mode()["mode"] == "c", 10, "vim.ui.input for city")
    nv.input("Rome<CR>")
    wait_for(lambda: echoed(nv, "Rome"), 30, "the prompt with the answer")


def test_cmp_completes_an_mcp_prompts_arguments(nvim_factory: Any, isolated_env: Path) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "mcp": everything()})
    lua_helper(nv, "engines.fake_cmp")
    nv.exec_lua(SETUP_CMP)
    open_composer(nv)

    def names(before: str) -> list[str]:
        got = lua_helper(nv, "engines.cmp_complete", before)["response"]["items"]
        return [i["textEdit"]["newText"] for i in got]

    wait_for(lambda: names("/mcp:") == PROMPTS, 30, "the server's prompts")
    typed = "/mcp:every:args-prompt c"
    # cmp asks the source only where its keyword pattern matches before the cursor
    assert lua_helper(nv, "engines.cmp_keyword_at_end", typed) == "c"
    assert lua_helper(nv, "engines.cmp_keyword_at_end", "/mcp:every:args-prompt ") == ""
    (item,) = lua_helper(nv, "engines.cmp_complete", typed)["response"]["items"]
    assert item["textEdit"]["newText"] == "city="
    assert item["textEdit"]["range"]["start"] == {"line": 0, "character": len(typed) - 1}
    assert names("/mcp:every:args-prompt city=Paris s") == ["state="]
    assert names("/mcp:every:args-prompt city=Pa") == []  # a value: nothing to complete


def test_blink_completes_an_mcp_prompts_arguments_as_typed(
    nvim_factory: Any, isolated_env: Path
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "mcp": everything()})
    lua_helper(nv, "engines.fake_blink")
    nv.exec_lua(SETUP_BLINK)
    open_composer(nv)
    type_each(nv, "/mcp:")
    wait_for(lambda: blink_menu(nv) == sorted(PROMPTS), 30, "the server's prompts")
    type_each(nv, "every:args-prompt")
    wait_for(lambda: blink_menu(nv) == ["/mcp:every:args-prompt"], 10, "narrowed")
    type_each(nv, " ")
    assert blink_menu(nv) is None  # (blink hides its menu on a space)
    type_each(nv, "c")
    wait_for(lambda: blink_menu(nv) == ["city="], 10, "the argument's name")
    type_each(nv, "ity=Paris s")
    wait_for(lambda: blink_menu(nv) == ["state="], 10, "the next argument")
