"""Issue 14: a 100 000-token conversation reopened from history shows its last turn, and
scrolling to its top shows the first, Markdown rendered there too: the transcript renders
Markdown where a window shows it, so what scrolls into view is rendered as it comes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sightline.ui.transcript import Transcript
from tests import longconv
from tests.screen import Screen

MARKS_LUA = """
local buf = require('sightline.ui.pane').buffers().transcript
local ns = vim.api.nvim_create_namespace('sightline.markdown')
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
  local d = m[4]
  table.insert(out, table.concat({ m[2], m[3], d.end_row or -1, d.end_col or -1,
    d.hl_group or '', d.conceal or '', d.priority or 0 }, ':'))
end
table.sort(out)
return out
"""


def _changed(before: list[str]) -> Callable[[Screen], bool]:
    return lambda s: s.lines() != before


def _group_at(screen: Screen, needle: str, word: str) -> str:
    found = screen.find(needle)
    assert found is not None, needle
    row, col = found
    return screen.group_at(row, col + needle.index(word))


def test_a_long_conversation_reopens_at_its_end_and_scrolls_to_its_start(
    nvim_factory: Callable[..., Any], screen_factory: Callable[..., Screen], isolated_env: Path
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}})
    store = Path(os.environ["XDG_DATA_HOME"], "sightline", "history")
    _, turns, tokens = longconv.write(store, os.path.realpath(isolated_env))
    assert tokens >= 100_000
    screen = screen_factory(nv, 140, 40)
    editor_buf = nv.api.get_current_buf()
    nv.input(":Sightline history<CR>")
    screen.wait_text("sightline conversations")
    nv.input("<CR>")
    # The last turn is in view, its Markdown rendered: `**` concealed, the word bold.
    screen.wait_text(longconv.last_words(turns - 1), timeout=30)
    last = "- the checker, which refuses"
    screen.wait_text(last)
    assert "strong" in _group_at(screen, last, "checker")
    assert screen.mode == "insert"  # the composer, ready for typing, as :Sightline chat
    nv.input("<Esc><C-w>k")
    screen.wait_for(lambda s: s.mode == "normal", what="Normal mode")
    assert nv.exec_lua("return vim.bo.filetype") == "sightline"
    nv.input("gg")
    screen.wait_text(longconv.first_words(0))
    # Rendered as it scrolled into view, 8 000 rows above where the pane opened: the code
    # span's backticks concealed, the name painted as code.
    first = "Let me look at module_0 first."
    screen.wait_text(first)
    code = _group_at(screen, first, "module_0")
    assert code and code != _group_at(screen, first, "Let")
    nv.input("G")
    screen.wait_text(longconv.last_words(turns - 1))
    assert nv.api.buf_get_changedtick(editor_buf) == 2  # the editor's buffer untouched


def test_what_scrolls_into_view_is_rendered_as_a_whole_render_would(
    nvim: Any, screen_factory: Callable[..., Screen]
) -> None:
    """Rule: however the view got there, each row's Markdown is what rendering the whole
    transcript at once paints (a window tall enough to show every row renders it all)."""
    t = Transcript()
    for i in range(12):  # ~300 rows: all of them fit the 400-row screen below
        t.add_user(f"question {i} with **bold** and `code`")
        t.append_text(f"## Part {i}\n\n- *one*\n- two\n\n```lua\nlocal x = {i}\n```\n\nDone {i}.")
        t.end_reply()
        t.add_output("\n".join(f"out {k}" for k in range(10)))
    screen = screen_factory(nvim, 100, 20)
    nvim.exec_lua("require('sightline.ui.pane').show()")
    nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
    twin = nvim.exec_lua(
        "return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)"
    )
    nvim.api.set_current_win(twin)
    partial = nvim.exec_lua(MARKS_LUA)
    screen.wait_text("Done 11.")
    nvim.input("gg")
    screen.wait_text("question 0 with")
    for _ in range(60):  # down the whole transcript, a frame at a time
        before = screen.lines()
        nvim.input("<C-d>")
        if nvim.exec_lua("return vim.fn.line('w$') == vim.fn.line('$')"):
            break
        screen.wait_for(_changed(before), what="scrolled")
    scrolled = nvim.exec_lua(MARKS_LUA)
    assert len(partial) < len(scrolled)  # the first apply left the rows out of view alone
    screen.resize(100, 400)  # every row in view: the whole transcript rendered at once
    nvim.exec_lua("require('sightline.ui.pane').apply(...)", Transcript().full())
    nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
    screen.wait_text("question 0 with")
    assert nvim.exec_lua(MARKS_LUA) == scrolled
