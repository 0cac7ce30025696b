"""The transcript's Markdown as the user reads it (issue 19 items 1, 15 and 17): only real
Markdown syntax is concealed, headings and tables are rendered, code blocks can be jumped
between and yanked."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.agent_util import send
from tests.conftest import wait_for, wait_idle
from tests.lua_helper import lua_helper
from tests.screen import Screen


def normal(nv: Any) -> None:
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")


def test_square_brackets_that_are_no_link_read_as_written(nvim: Any, screen: Screen) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("tag [draft] and array a[i] ok<C-s>")
    screen.wait_text("echo: tag [draft] and array a[i] ok")
    wait_idle(nvim)
    assert screen.find("tag [draft] and array a[i] ok")  # the user's message
    # On the cursor's line too ('concealcursor').
    normal(nvim)
    nvim.input("<C-w>k")
    nvim.input("gg/draft<CR>")
    wait_for(lambda: nvim.api.win_get_cursor(0)[0] == 2, what="the cursor on the message")
    screen.wait_text("tag [draft] and array a[i] ok")
    assert len([r for r in screen.lines() if "[draft]" in r]) == 2


def test_headings_and_tables_are_rendered_and_code_blocks_show_their_code(
    nvim: Any, screen: Screen
) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("### Plan<CR>| a | b |<CR>|---|:-:|<CR>| 1 | 2 |<CR>")
    nvim.input("```markdown<CR>**raw** [x](y)<CR>```<C-s>")
    wait_idle(nvim)
    normal(nvim)
    nvim.input("<C-w>k")  # on the cursor's line too
    row, col = screen.wait_text("Plan")
    assert "Plan" in [r.strip() for r in transcript_cells(nvim, screen)]  # no `### ` before it
    assert screen.group_at(row, col) == "Title"  # @markup.heading.3.markdown, by default
    screen.wait_text("│ a │ b │")
    screen.wait_text("├───┼───┤")
    screen.wait_text("│ 1 │ 2 │")
    user = "\n".join(transcript_cells(nvim, screen)).split("▍Agent")[0]
    assert "#" not in user and "|" not in user and "-" not in user
    # A code block shows its code as written, even Markdown's.
    screen.wait_text("**raw** [x](y)")


def test_code_block_keys_jump_between_blocks_and_yank_the_code_under_the_cursor(
    nvim: Any, screen: Screen
) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    # Two blocks in the message, echoed as two more in the reply; one in a list item.
    nvim.input("first:<CR>```lua<CR>local a = 1<CR>local b = 2<CR>```<CR>")
    nvim.input("1. then<CR>   ```sh<CR>ls -la<CR>```<C-s>")  # 'autoindent' indents
    wait_idle(nvim)
    normal(nvim)
    nvim.input("<C-w>kgg")
    wait_for(lambda: nvim.api.win_get_cursor(0)[0] == 1, what="the transcript's top")

    def at() -> str:
        row = nvim.api.win_get_cursor(0)[0]
        return str(nvim.api.buf_get_lines(0, row - 1, row, False)[0])

    nvim.input("]b")
    wait_for(lambda: at() == "local a = 1", what="the first block's code")
    nvim.input("]b")
    wait_for(lambda: at() == "   ls -la", what="the second block")
    nvim.input("2]b")  # a count skips as many: the reply's second block
    wait_for(lambda: at() == "   ls -la" and nvim.api.win_get_cursor(0)[0] > 10)
    nvim.input("[b")
    wait_for(lambda: at() == "local a = 1", what="back to the reply's first block")
    nvim.input("``")  # the jumps are in the jumplist
    wait_for(lambda: at() == "   ls -la", what="back where the jump started")
    nvim.input("gg]b")
    wait_for(lambda: at() == "local a = 1")
    nvim.input("jgy")  # the block under the cursor, without its fences, linewise
    screen.wait_text("yanked the lua block (2 lines)")
    assert nvim.funcs.getreg('"') == "local a = 1\nlocal b = 2\n"
    assert nvim.funcs.getregtype('"') == "V"
    nvim.input(']b"agy')  # a register, and the list's indentation off the code
    screen.wait_text("yanked the sh block (1 line)")
    assert nvim.funcs.getreg("a") == "ls -la\n"
    # The <Plug> mapping, on a key of the user's own.
    nvim.command("nmap <buffer> Y <Plug>(sightline-block-yank)")
    nvim.input("[bY")
    screen.wait_text("yanked the lua block (2 lines)")
    # Off any block: said, and nothing yanked.
    nvim.input("gggy")
    screen.wait_text("no code block under the cursor")
    assert nvim.funcs.getreg('"') == "local a = 1\nlocal b = 2\n"


# -- the rule: what is not Markdown syntax reads as written --------------------------------------

# Pieces that make Markdown (and near misses: brackets that are no link, lone markers).
_PIECE = st.one_of(
    st.sampled_from(
        [
            "[",
            "]",
            "[x]",
            "a[i]",
            "[a][b]",
            "[c][]",
            "![",
            "(",
            ")",
            "`",
            "``",
            "*",
            "**",
            "_",
            "~~",
            "#",
            "# ",
            "### ",
            "|",
            "| a |",
            "|---|",
            "&lt;",
            "&amp;",
            "\\",
            "\\[",
            "<",
            ">",
            "- ",
            "1. ",
            "> ",
            "```",
            "```lua",
            ":",
            ";",
            "!",
        ]
    ),
    st.text(alphabet="abxy19 ", min_size=1, max_size=6),
)
_LINE = st.lists(_PIECE, max_size=8).map("".join)
# `](` would make an inline link, whose destination is syntax: kept out of the rule's text.
_MESSAGE = (
    st.lists(_LINE, min_size=1, max_size=4)
    .map(lambda ls: "\n".join(ls).replace("](", "] ("))
    .filter(lambda t: t.strip() != "")
)

# What rendering may hide or replace: the markers themselves, never what they mark.
_MARKERS = set("*_`~| \t")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"(?:^|(?<=\s))#{1,6}(?=\s|$)")
# Block quote and list markers: the line they open is read as a line of its own after them.
_CONTAINER = re.compile(r"^(?:\s*(?:>|[-*+](?=\s|$)|\d{1,9}[.)](?=\s|$)))+\s?")
_DELIMITER_ROW = re.compile(r"^[\s|:-]*-[\s|:-]*$")
_ENTITY = re.compile(r"&(nbsp|lt|gt|amp|quot|ensp|emsp);")


def readable(text: str) -> str:
    """The characters of `text` a reader must find on screen, in order."""
    out = []
    for line in text.split("\n"):
        opened = _CONTAINER.match(line)
        at = opened.end() if opened else 0
        inner = line[at:]
        if _FENCE.match(inner) or _DELIMITER_ROW.match(inner):
            continue  # a fence's delimiter line, a table's delimiter row: syntax
        line = _ENTITY.sub("", line[:at] + _HEADING.sub("", inner))
        out.append("".join(c for c in line if c not in _MARKERS))
    return "".join(out)


def holds_in_order(seen: str, wanted: str) -> bool:
    it = iter(seen)
    return all(c in it for c in wanted)


def transcript_cells(nv: Any, screen: Screen) -> list[str]:
    """The transcript window's rows as the screen shows them."""
    win = lua_helper(nv, "windows.pane_roles")["transcript"]
    row, col = nv.api.win_get_position(win)
    width, height = nv.api.win_get_width(win), nv.api.win_get_height(win)
    return [line[col : col + width] for line in screen.lines()[row : row + height + 1]]


def sections(rows: list[str]) -> tuple[str, str] | None:
    """(the user's message, the reply) as shown, whitespace dropped; None until both show."""
    joined = "\n".join(rows)
    if "▍You" not in joined or "▍Agent" not in joined or "\n─ " not in joined:
        return None
    user = joined.split("▍You", 1)[1].split("▍Agent", 1)[0]
    reply = joined.split("▍Agent", 1)[1].split("\n─ ", 1)[0]
    return "".join(user.split()), "".join(reply.split())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_MESSAGE)
@example(">#")  # a heading in a block quote: its `#` is syntax too
@example(">```")  # a fence in a block quote: a delimiter line, hidden whole
@example("- ```")  # and in a list item
def test_every_character_that_is_not_markdown_syntax_shows_in_the_message_and_the_reply(
    nvim: Any, screen_factory: Any, message: str
) -> None:
    screen = wide_screen(nvim, screen_factory)
    assert nvim.exec_lua("return {require('sightline').reset()}") == [True]
    wait_for(lambda: sections(transcript_cells(nvim, screen)) is None, what="a new transcript")
    send(nvim, message)
    wait_idle(nvim)
    wanted = readable(message)
    shown = screen.wait_for(lambda s: sections(transcript_cells(nvim, s)), what="the exchange")
    assert holds_in_order(shown[0], wanted), (message, wanted, shown[0])
    assert holds_in_order(shown[1], "echo:" + wanted), (message, wanted, shown[1])


_SCREENS: dict[int, Screen] = {}


def wide_screen(nv: Any, screen_factory: Any) -> Screen:
    """One 160x40 UI per child (hypothesis runs every example in the same one)."""
    key = id(nv)
    if key not in _SCREENS:
        _SCREENS.clear()
        _SCREENS[key] = screen_factory(nv, 160, 40)
        nv.command("Sightline chat")
    return _SCREENS[key]
