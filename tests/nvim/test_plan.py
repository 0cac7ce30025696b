"""Plan mode: the mode shows in status() and the pane; the plan is a checklist kept in history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent_util import claude, idle, send, tool_results
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use

__all__ = ["fake_api"]

STEPS = [
    {"text": "Read the parser", "done": True},
    {"text": "Split tokenize() in two", "done": False},
]
CHECKLIST = ["▍Plan (1/2 done)", "- [x] Read the parser", "- [ ] Split tokenize() in two"]


def contains_block(lines: list[str], block: list[str]) -> bool:
    return any(lines[i : i + len(block)] == block for i in range(len(lines)))


def test_plan_mode_shows_in_status_and_the_pane(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}})
    nv.command("Sightline chat")
    nv.command("Sightline plan on")
    assert status(nv)["mode"] == "plan"
    tbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    win = nv.call("bufwinid", tbuf)
    wait_for(lambda: "plan mode" in nv.api.win_get_option(win, "winbar"), what="plan in the bar")
    nv.command("Sightline plan toggle")
    assert status(nv)["mode"] == "normal"
    wait_for(lambda: "plan mode" not in nv.api.win_get_option(win, "winbar"))


def test_update_plan_renders_a_checklist_kept_with_the_conversation(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    nv.command("Sightline plan on")
    fake_api.script(
        tool_use("update_plan", {"steps": STEPS}),
        tool_use("update_plan", {"steps": []}),
        text("That is the plan."),
    )
    send(nv, "plan the refactor")
    idle(nv)
    assert tool_results(fake_api, 1)[0]["content"] == "plan updated: 1 of 2 steps done"
    bad = tool_results(fake_api, 2)[0]
    assert bad["is_error"] and "steps" in bad["content"]
    assert contains_block(transcript(nv), CHECKLIST)

    path = Path(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert {"type": "plan", "steps": STEPS} in records

    nv.command("Sightline reset")
    wait_for(lambda: not contains_block(transcript(nv), CHECKLIST), what="the cleared transcript")
    assert nv.exec_lua("return require('sightline').open_conversation(...)", str(path))
    wait_for(lambda: contains_block(transcript(nv), CHECKLIST), what="the plan after reopening")
