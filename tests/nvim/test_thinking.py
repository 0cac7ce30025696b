"""Thinking: provider.thinking checked by config.lua, streamed into its own transcript
section (SightlineThinking), and passed back exactly as the API requires during tool use.

The end-to-end test drives the real anthropic SDK in a child Neovim against the loopback
Messages server, which signs thinking blocks and refuses (400, like the real API) a tool
turn whose thinking block was dropped, moved or altered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sightline.ui.transcript import THINKING_GROUP, THINKING_HEADER
from tests import fakeapi as fa
from tests.agent_util import API_KEY, idle, send
from tests.conftest import capture_notify, transcript
from tests.fakeapi import FakeAnthropic, fake_api, validation_error

__all__ = ["fake_api"]


@pytest.mark.parametrize("bad", ["'max'", "512", "true", "{}"])
def test_the_lua_schema_refuses_a_bad_thinking_value(nvim: Any, bad: str) -> None:
    capture_notify(nvim)
    err = nvim.exec_lua(
        f"return select(2, require('sightline').setup({{provider = {{thinking = {bad}}}}}))"
    )
    assert err.startswith("sightline.provider.thinking:"), err


def test_the_lua_schema_takes_a_budget_an_effort_or_false(nvim: Any) -> None:
    for good in ("8000", "'medium'", "false"):
        opts = f"{{provider = {{name = 'echo', thinking = {good}}}}}"
        res = nvim.exec_lua(f"return {{require('sightline').setup({opts})}}")
        assert res[0] is not None, (good, res)


def test_thinking_round_trips_through_a_tool_turn_and_shows_in_the_pane(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, isolated_env: Path
) -> None:
    (isolated_env / "a.txt").write_text("alpha\n")
    first = fa.thinking("The user wants a.txt; I should read it.", chunks=4)
    hidden = fa.redacted_thinking()
    fake_api.script(
        fa.reply(
            first, hidden, fa.text("Reading it."), fa.tool_use("read_file", {"path": "a.txt"})
        ),
        fa.reply(fa.thinking("It holds alpha."), fa.text("It says alpha.")),
    )
    cfg = {
        "provider": {
            "name": "anthropic",
            "base_url": fake_api.base_url,
            "retries": 0,
            "thinking": 2048,
        }
    }
    nv = nvim_factory(cfg, env={"ANTHROPIC_API_KEY": API_KEY})
    screen = screen_factory(nv, 120, 40)
    nv.command("Sightline chat")
    send(nv, "what is in a.txt?")
    idle(nv)
    reqs = fake_api.wait_for_requests(2)
    assert fake_api.pending == 0  # both accepted: a dropped or altered block is a 400
    for req in reqs:
        assert validation_error(req.body) is None
        assert req.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert req.body["max_tokens"] == 8192 + 2048
    sent_back = reqs[1].body["messages"][1]["content"]
    assert sent_back[0] == {
        "type": "thinking",
        "thinking": first.thinking,
        "signature": first.signature,
    }
    assert sent_back[1] == {"type": "redacted_thinking", "data": hidden.data}
    assert [b["type"] for b in sent_back[2:]] == ["text", "tool_use"]
    shown = "\n".join(transcript(nv))
    assert "It says alpha." in shown and THINKING_HEADER in shown
    # On screen, dimmed: the cells take the colours SightlineThinking links to (the UI
    # reports the group a link resolves to), unlike the reply's text.
    linked = nv.exec_lua(f"return vim.api.nvim_get_hl(0, {{name = '{THINKING_GROUP}'}}).link")
    assert linked == "Comment"
    # Folded (closed) from its header on once Insert mode ends (Neovim computes no folds
    # in Insert mode): the header's summary shows, the thought is behind `zo`.
    nv.input("<Esc>")
    assert screen.group_at(*screen.wait_text(f"{THINKING_HEADER}  ▸ ")) == linked
    assert screen.find("I should read it.") is None
    assert screen.group_at(*screen.wait_text("It says alpha.")) != linked
    # The history holds the blocks as the API sent them.
    (path,) = (isolated_env.parent / "xdg" / "data" / "sightline" / "history").glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    replies = [r for r in records if r.get("role") == "assistant"]
    assert replies[0]["content"][0]["signature"] == first.signature
    assert replies[0]["content"][1] == {"type": "redacted_thinking", "data": hidden.data}


def test_the_reply_stays_in_view_when_the_thinking_folds_on_leaving_insert_mode(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    # A thought longer than the pane: streamed in Insert mode it shows whole and the view
    # follows the reply below it; leaving Insert mode folds it to one row.
    thought = "\n".join(f"step {i} of the plan" for i in range(60))
    fake_api.script(fa.reply(fa.thinking(thought, chunks=6), fa.text("The answer is 42.")))
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory(
        {"provider": {**provider, "thinking": 2048}}, env={"ANTHROPIC_API_KEY": API_KEY}
    )
    screen = screen_factory(nv, 120, 40)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="the composer in Insert mode")
    nv.input("think hard<C-s>")
    idle(nv)
    screen.wait_text("The answer is 42.")
    assert screen.find("step 0 of the plan") is None  # scrolled off the top
    nv.input("<Esc>")
    screen.wait_text(f"{THINKING_HEADER}  ▸ 60 lines")
    # The whole exchange shows again, from the question to the reply's footer.
    screen.wait_text("think hard")
    screen.wait_text("The answer is 42.")
