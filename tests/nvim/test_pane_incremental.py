"""Issue 14 item 5: a streamed reply's Markdown is rendered incrementally (from the start of
its last block), and that paints exactly what rendering the whole transcript at once does."""

from __future__ import annotations

import random
from typing import Any

from sightline.ui.transcript import Transcript
from tests.lua_helper import lua_helper

REPLY = (
    "# Title\n\nSome **bold** and `code` here,\nstill the same paragraph.\n\n"
    "- one *item*\n- two `items`\n\n> a quote with **bold**\n\n"
    "```lua\nlocal x = 1\n\nlocal y = 2\n```\n\nplain prose\n\nmore plain\nand _end_ here\n"
)


def test_streamed_markdown_paints_what_a_whole_render_paints(nvim: Any) -> None:
    # Markdown is rendered where a window shows it: a pane tall enough for the whole reply.
    nvim.exec_lua("vim.o.lines = 120; require('sightline.ui.pane').show()")
    for seed in range(4):
        t = Transcript()
        t.add_user("first")
        t.append_text("an earlier reply with **bold**\n")
        t.end_reply()
        t.add_user("go on")
        nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
        rng = random.Random(seed)
        i = 0
        while i < len(REPLY):  # random cuts: inside words, fences, markers
            n = rng.randint(1, 12)
            t.append_text(REPLY[i : i + n])
            i += n
            nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.take_delta())
        streamed = lua_helper(nvim, "marks.markdown_settled")
        nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
        assert streamed == lua_helper(nvim, "marks.markdown"), seed
        assert any("strong" in m for m in streamed)
