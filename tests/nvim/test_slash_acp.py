"""An ACP agent's slash commands (available_commands_update) in the composer's `/`: marked
as the agent's, sent to it as typed (the protocol runs a command from the prompt's text),
and replaced when the agent announces a new list. Driven with the scripted agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim
from tests.agent_util import idle, send
from tests.complete_util import menu, open_composer, send_keys, type_each, words
from tests.conftest import wait_for

COMMANDS = [["web", "Search the web", "<query>"], ["tests", "Run the test suite"]]


def test_agent_commands_are_offered_sent_and_refreshed(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    turns: list[list[dict[str, Any]]] = [
        # Announced within the first turn, so the core has them once it is idle (an agent
        # announcing later makes the next `/` offer them).
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
