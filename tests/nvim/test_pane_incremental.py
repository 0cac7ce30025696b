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


def test_a_push_before_the_streamed_spans_paint_still_leaves_what_a_whole_render_paints(
    nvim: Any,
) -> None:
    # The streamed span is parsed in one turn of the loop and painted in the next: deltas
    # applied two at a time, in one call, always bring the second before that paint. Its
    # rows may reach into the span or only add rows below it.
    nvim.exec_lua("vim.o.lines = 120; require('sightline.ui.pane').show()")
    apply_two = "for _, d in ipairs({...}) do require('sightline.ui.pane').apply(d) end"
    for seed in range(4):
        t = Transcript()
        t.add_user("say **this** and `that`")
        rng = random.Random(seed)
        deltas = [t.take_delta()]
        i = 0
        while i < len(REPLY):
            n = rng.randint(1, 30)
            t.append_text(REPLY[i : i + n])
            i += n
            deltas.append(t.take_delta())
        t.end_reply()
        deltas.append(t.take_delta())
        deltas = [d for d in deltas if d is not None]
        for k in range(0, len(deltas), 2):
            nvim.exec_lua(apply_two, *deltas[k : k + 2])
        streamed = lua_helper(nvim, "marks.markdown_settled")
        nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
        assert streamed == lua_helper(nvim, "marks.markdown"), seed
        assert any("strong" in m for m in streamed)
