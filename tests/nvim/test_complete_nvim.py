"""`@` completion in the real composer: the menu that opens on `@`, the omnifunc, and the
nvim-cmp / blink.cmp sources called with the request shapes those engines use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sightline.domain import extensions
from tests.complete_util import (
    SETUP_BLINK,
    SETUP_CMP,
    blink_menu,
    line,
    menu,
    open_composer,
    pum,
    type_each,
    type_until,
    words,
)
from tests.conftest import capture_notify, said, wait_for
from tests.docs_util import DOC
from tests.extensions_util import make_extension
from tests.lua_helper import lua_helper

FILES = ["README.md", "src/app.py", "src/browser.py", "docs/browse.md", "lib/bro/x.txt"]

# The built-in menu's own autocommands in a buffer (its group), not other features' (the
# composer's edit tracking also watches TextChangedI).
NATIVE_MENU_AUTOCMDS = """
local n = 0
for _, au in ipairs(vim.api.nvim_get_autocmds({ event = 'TextChangedI', buffer = ... })) do
  if (au.group_name or ''):find('^sightline%.complete%.native') then
    n = n + 1
  end
end
return n
"""


@pytest.fixture
def workspace(isolated_env: Path, tmp_path: Path) -> Path:
    for rel in FILES:
        (isolated_env / rel).parent.mkdir(parents=True, exist_ok=True)
        (isolated_env / rel).write_text("x\n")
    extensions.install(make_extension(tmp_path / "src", "browser-tools", "Browser helpers"))
    extensions.install(make_extension(tmp_path / "src", "docs"))
    extensions.disable("docs", workspace=isolated_env)  # inactive: never offered
    extensions.install(make_extension(tmp_path / "src", "k8s", "Cluster notes"))
    return isolated_env


ALL = [
    "@buffer",  # the editor's state, fixed at the top (see test_mentions_editor.py)
    "@diagnostics",
    "@ext:browser-tools",
    "@ext:k8s",
    "@README.md",
    "@src/app.py",
    "@lib/bro/x.txt",
    "@docs/browse.md",
    "@src/browser.py",
]
BRO = ["@ext:browser-tools", "@docs/browse.md", "@src/browser.py", "@lib/bro/x.txt"]


def test_typing_at_opens_the_menu_and_narrows_it(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    type_until(nvim, "see @", ALL)
    assert pum(nvim) and menu(nvim)["mode"] == "eval"
    # extensions first (alphabetical), then files shorter first; the inactive one is absent
    type_until(nvim, "bro", BRO)
    assert line(nvim) == "see @bro"  # noinsert: typing is never disturbed
    nvim.input("<BS><BS><BS>ext:")
    wait_for(lambda: words(nvim) == ["@ext:browser-tools", "@ext:k8s"], 10, "@ext: mode")
    items = menu(nvim)["items"]
    assert "Browser helpers" in items[0]["info"] and items[1]["kind"] == "ext"


def test_accepting_inserts_the_reference_and_a_space_closes(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    type_until(nvim, "@ext:k", ["@ext:k8s"])
    nvim.input("<C-y>")
    wait_for(lambda: line(nvim) == "@ext:k8s" and not pum(nvim), 10, "the accepted item")
    type_until(nvim, " and @src/br", ["@src/browser.py"])
    nvim.input(" ")
    wait_for(lambda: not pum(nvim), 10, "the menu to close after a space")
    assert line(nvim) == "@ext:k8s and @src/br "


def test_browsing_the_menu_keeps_it(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    type_until(nvim, "@bro", BRO)
    nvim.input("<C-n>")  # inserts the second item; that text change must not re-query
    wait_for(lambda: line(nvim) == "@docs/browse.md", 10, "the second item")
    assert words(nvim) == BRO and menu(nvim)["selected"] == 1


@pytest.mark.parametrize("text", ["mail me at a@b", "foo@ext:", "x@"])
def test_at_inside_a_word_or_address_opens_nothing(nvim: Any, workspace: Path, text: str) -> None:
    open_composer(nvim)
    type_until(nvim, "(@", ALL)  # after an opening bracket: a mention
    nvim.input("<C-e><C-u>" + text)
    wait_for(lambda: line(nvim) == text, 10, "the typed text")
    assert not pum(nvim) and words(nvim) == []


def test_omnifunc_completes_each_mode(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    cbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    assert nvim.api.buf_get_option(cbuf, "omnifunc").endswith("'sightline.complete'.omnifunc")
    for text, expected in [("@", ALL), ("@bro", BRO), ("@ext:", ALL[2:4]), ("a @ext:k", ALL[3:4])]:
        nvim.input("<C-e><Esc>")
        nvim.api.buf_set_lines(cbuf, 0, -1, False, [text])
        nvim.command("startinsert!")
        nvim.input("<C-x><C-o>")

        def offered(e: list[str] = expected) -> bool:
            return bool(words(nvim) == e and menu(nvim)["mode"] == "omni")

        wait_for(offered, 10, text)


def test_a_file_with_a_space_is_inserted_escaped(nvim: Any, workspace: Path) -> None:
    (workspace / "my notes.md").write_text("x\n")
    open_composer(nvim)
    type_until(nvim, "@my", ["@my\\ notes.md"])
    nvim.input("<C-y>")
    wait_for(lambda: line(nvim) == "@my\\ notes.md", 10, "the escaped path")


def test_the_menu_starts_at_the_at_after_multibyte_text(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    type_until(nvim, "é → @REA", ["@README.md"])
    nvim.input("<C-y>")
    wait_for(lambda: line(nvim) == "é → @README.md", 10, "the accepted item")


# --- the engines' sources -----------------------------------------------------------------


def test_cmp_source(nvim: Any, workspace: Path) -> None:
    lua_helper(nvim, "engines.fake_cmp")
    nvim.exec_lua(SETUP_CMP)
    open_composer(nvim)
    cbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    buffer_config = nvim.exec_lua("return _G.fake_cmp.buffer[...]", cbuf)
    assert buffer_config["sources"] == [
        {"name": "sightline", "group_index": 1},
        {"name": "buffer", "group_index": 2},
    ]
    assert buffer_config["sorting"] == {"comparators": ["order-comparator"]}
    # cmp owns the menu: no native auto-open in the composer
    native = NATIVE_MENU_AUTOCMDS
    assert nvim.exec_lua(native, cbuf) == 0
    before = "see @bro"
    got = wait_for(
        lambda: (
            (r := lua_helper(nvim, "engines.cmp_complete", before))["response"]["items"][1:] and r
        ),
        10,
        "cmp items with files",
    )
    assert got["available"] and got["encoding"] == "utf-8"
    assert {"@", ":", "/", ".", "~", "\\"} <= set(got["triggers"])
    # cmp finds the start of the menu with the keyword pattern: the whole token, escapes too
    assert lua_helper(nvim, "engines.cmp_keyword_at_end", "x @a\\ b.md") == "@a\\ b.md"
    response = got["response"]
    assert response["isIncomplete"] is True
    items = response["items"]
    assert [i["textEdit"]["newText"] for i in items] == BRO
    assert [i["sortText"] for i in items] == ["00001", "00002", "00003", "00004"]
    first = items[0]
    assert first["label"] == "@ext:browser-tools" and first["kind"] == 9
    assert first["documentation"] == "Browser helpers"
    assert first["filterText"] == "@bro"
    assert first["textEdit"]["range"] == {
        "start": {"line": 0, "character": 4},
        "end": {"line": 0, "character": 8},
    }
    assert items[1]["label"] == "docs/browse.md" and items[1]["kind"] == 17
    assert lua_helper(nvim, "engines.cmp_complete", "a@b")["response"] == {
        "items": [],
        "isIncomplete": True,
    }
    # elsewhere the source is not available
    nvim.command("new")
    assert nvim.exec_lua("return _G.fake_cmp.sources.sightline:is_available()") is False


def test_blink_source(nvim: Any, workspace: Path) -> None:
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(SETUP_BLINK)
    open_composer(nvim)
    provider = (
        "local p = _G.fake_blink.config.sources.providers.sightline; return {p.name, p.module}"
    )
    assert nvim.exec_lua(provider) == ["sightline", "sightline.complete.blink"]
    assert nvim.exec_lua("return _G.fake_blink.filetypes") == [["markdown", "sightline"]]
    line_text = "é @src/br"  # é is two bytes: columns are bytes
    got = wait_for(
        lambda: (
            (r := lua_helper(nvim, "engines.blink_complete", line_text, 9))["response"]["items"]
            and r
        ),
        10,
        "blink items",
    )
    assert got["enabled"] and got["cancel"] == "function"
    response = got["response"]
    assert response["is_incomplete_forward"] and response["is_incomplete_backward"]
    (item,) = response["items"]
    assert item["textEdit"] == {
        "newText": "@src/browser.py",
        "range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 10}},
    }
    assert item["filterText"] == "br"  # blink's keyword at the cursor
    nvim.command("new")
    assert nvim.exec_lua("return require('sightline.complete.blink').new():enabled()") is False


def test_browsing_a_menu_the_omnifunc_opened(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    cbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    nvim.input("<Esc>")
    nvim.api.buf_set_lines(cbuf, 0, -1, False, ["@bro"])
    nvim.command("startinsert!")
    nvim.input("<C-x><C-o>")
    wait_for(lambda: words(nvim) == BRO, 10, "the omni menu")
    nvim.input("<C-n>")
    wait_for(lambda: line(nvim) == "@docs/browse.md", 10, "the second item")
    assert words(nvim) == BRO and menu(nvim)["mode"] == "omni"


# --- which engine completes, and what it shows ---------------------------------------------

ENGINE = (
    "return require('sightline.complete').engine(require('sightline.ui.pane').buffers().composer)"
)
COMPOSER_OPT = "local b = require('sightline.ui.pane').buffers().composer; return vim.bo[b][...]"


def help_blink_snippet() -> str:
    """The manual blink.cmp configuration exactly as the help shows it."""
    text = DOC.read_text()
    section = text[text.index("*sightline-completion-blink*") :]
    block = section[section.index(">lua\n") + 5 : section.index("\n<\n")]
    return "\n".join(line[4:] for line in block.splitlines())


def test_blink_set_up_keeps_its_menu_inside_a_mention(
    nvim: Any, workspace: Path, screen: Any
) -> None:
    # blink set up, nvim-cmp merely installed (on the runtimepath, loadable): blink completes
    lua_helper(nvim, "engines.fake_cmp")
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(SETUP_BLINK)
    notes = capture_notify(nvim)
    open_composer(nvim)
    assert nvim.exec_lua(ENGINE) == "blink"
    assert nvim.exec_lua("return package.loaded['cmp'] == nil")  # never loaded by sightline
    # no 'omnifunc': blink's own `omni` source (in sources.default) would list each item twice
    assert nvim.exec_lua(COMPOSER_OPT, "omnifunc") == ""
    assert nvim.exec_lua(COMPOSER_OPT, "completeopt") == "menuone,noinsert,popup"
    type_each(nvim, "see @ext")
    type_each(nvim, ":")  # neither a keyword nor (before the fix) a trigger: blink hid
    wait_for(lambda: blink_menu(nvim) == ["@ext:browser-tools", "@ext:k8s"], 10, "@ext:")
    nvim.input("<C-u>")
    type_each(nvim, "@src")
    wait_for(lambda: blink_menu(nvim) == ["@src/app.py", "@src/browser.py"], 10, "@src")
    type_each(nvim, "/")
    wait_for(lambda: blink_menu(nvim) == ["@src/app.py", "@src/browser.py"], 10, "@src/")
    type_each(nvim, "b")
    wait_for(lambda: blink_menu(nvim) == ["@src/browser.py"], 10, "@src/b")
    type_each(nvim, ".")
    wait_for(lambda: blink_menu(nvim) == ["@src/browser.py"], 10, "@src/b.")
    type_each(nvim, " done.")  # outside a mention a trigger character opens nothing
    assert blink_menu(nvim) is None
    assert not pum(nvim) and not screen.find("src/app.py")  # no second (built-in) menu
    assert notes() == []


def test_the_help_snippet_for_blink_works_with_a_blink_that_registers_itself(
    nvim: Any, workspace: Path
) -> None:
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(help_blink_snippet())
    notes = capture_notify(nvim)
    open_composer(nvim)
    assert notes() == []  # no "Provider with id sightline already exists"
    assert nvim.exec_lua(ENGINE) == "blink"
    type_each(nvim, "@bro")
    wait_for(lambda: blink_menu(nvim) == sorted(BRO), 10, "the menu of the configured source")


def test_a_failed_registration_is_reported_and_the_built_in_menu_completes(
    nvim: Any, workspace: Path, screen: Any
) -> None:
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(SETUP_BLINK)
    nvim.exec_lua("package.loaded['blink.cmp'].add_source_provider = nil")  # an old blink.cmp
    notes = capture_notify(nvim)
    open_composer(nvim)
    (note,) = notes()
    whole = said(nvim, note["msg"])
    assert "blink.cmp" in whole and "sightline-completion-blink" in whole
    assert note["level"] == 3  # WARN
    assert nvim.exec_lua(ENGINE) == "native"
    nvim.input("@bro")
    screen.wait_text("docs/browse.md")  # the built-in menu, on screen
    assert words(nvim) == BRO


def test_the_configured_engine_wins(
    nvim_factory: Any, workspace: Path, screen_factory: Any
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "completion": {"engine": "cmp"}})
    lua_helper(nv, "engines.fake_blink")
    nv.exec_lua(SETUP_BLINK)
    lua_helper(nv, "engines.fake_cmp")
    nv.exec_lua("package.loaded['cmp'] = require('cmp')")  # loaded, not set up: still asked for
    open_composer(nv)
    assert nv.exec_lua(ENGINE) == "cmp"
    assert nv.exec_lua("return _G.fake_cmp.sources.sightline ~= nil")
    assert nv.exec_lua("return _G.fake_blink.config.sources.providers.sightline") is None


def test_native_turns_the_engines_off_in_the_composer(
    nvim_factory: Any, workspace: Path, screen_factory: Any
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "completion": {"engine": "native"}})
    lua_helper(nv, "engines.fake_blink")
    nv.exec_lua(SETUP_BLINK)
    screen = screen_factory(nv)
    open_composer(nv)
    assert nv.exec_lua(ENGINE) == "native"
    assert (
        nv.exec_lua("return vim.b[require('sightline.ui.pane').buffers().composer].completion")
        is False
    )
    nv.input("@bro")
    screen.wait_text("src/browser.py")
    assert words(nv) == BRO and blink_menu(nv) is None


def test_an_engine_named_but_missing_is_reported(nvim_factory: Any, workspace: Path) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "completion": {"engine": "blink"}})
    notes = capture_notify(nv)
    open_composer(nv)
    (note,) = notes()
    assert "completion.engine is 'blink' but blink.cmp is not installed" in said(nv, note["msg"])
    assert nv.exec_lua(ENGINE) == "native"
    type_until(nv, "@bro", BRO)


def test_a_bad_engine_is_refused(nvim: Any) -> None:
    ok, msg = nvim.exec_lua(
        "return { require('sightline').setup({ completion = { engine = 'coq' } }) }"
    )
    assert ok is None and msg.startswith("sightline.completion.engine: expected one of auto")


def test_an_engine_set_up_on_the_first_insert_takes_over(nvim: Any, workspace: Path) -> None:
    # lazy.nvim's `event = 'InsertEnter'`: blink.cmp is set up after the composer was made
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(
        "vim.api.nvim_create_autocmd('InsertEnter', { once = true, callback = function() "
        + SETUP_BLINK
        + " end })"
    )
    open_composer(nvim)
    assert nvim.exec_lua(ENGINE) == "blink"
    assert nvim.exec_lua(COMPOSER_OPT, "omnifunc") == ""
    native = NATIVE_MENU_AUTOCMDS
    assert (
        nvim.exec_lua(
            native, nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
        )
        == 0
    )
    type_each(nvim, "@ext:")
    wait_for(lambda: blink_menu(nvim) == ["@ext:browser-tools", "@ext:k8s"], 10, "@ext:")


def test_with_cmp_other_menus_in_the_composer_insert_nothing(
    nvim: Any, workspace: Path, screen: Any
) -> None:
    lua_helper(nvim, "engines.fake_cmp")
    nvim.exec_lua(SETUP_CMP)
    open_composer(nvim)
    assert nvim.exec_lua(ENGINE) == "cmp"
    assert nvim.exec_lua(COMPOSER_OPT, "omnifunc") == ""
    assert nvim.exec_lua(COMPOSER_OPT, "completeopt") == "menuone,noinsert,popup"
    nvim.input("alphabet alpine al<C-x><C-n>")
    screen.wait_text("alpine ")
    wait_for(lambda: pum(nvim), 10, "the keyword menu")
    assert line(nvim) == "alphabet alpine al"  # noinsert: the first item is not inserted


def test_typing_on_a_long_pasted_token_stays_fast(nvim: Any, workspace: Path) -> None:
    open_composer(nvim)
    cbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    nvim.input("<Esc>")
    token = ("src/br" * 40_000)[:200_000]
    nvim.api.buf_set_lines(cbuf, 0, -1, False, ["see @" + token])
    nvim.command("startinsert!")
    for key in "ab":
        nvim.input(key)
        token += key

        def listed(t: str = token) -> dict[str, Any] | None:
            ll = nvim.exec_lua(LAST_LIST)
            return dict(ll) if ll and ll["token"] == t else None

        got = wait_for(listed, 10, key)
        assert got["count"] == 0 and got["cpu_ms"] < 200  # (was 100 s before the cap)


LAST_LIST = "return require('sightline.complete').last_list"


def test_every_mark_a_mention_holds_is_a_trigger_character(nvim: Any) -> None:
    # The rule behind `@ext:` and `@src/`: whatever a path or `ext:` name holds besides
    # the engines' keyword characters must keep their menu open.
    triggers = nvim.exec_lua("return require('sightline.complete').TRIGGERS")
    marks = {chr(b) for b in range(33, 127) if not (chr(b).isalnum() or chr(b) == "_")}
    assert set(triggers) == marks and len(triggers) == len(marks)
    for module in ("sightline.complete.blink", "sightline.complete.cmp"):
        got = nvim.exec_lua(
            f"local m = require('{module}'); return (m.new()):get_trigger_characters()"
        )
        assert got == triggers


# --- what the menu shows (issue 19 item 11) ------------------------------------------------

LONG = "src/very/long/folder/name/that/goes/on/and/on/for/a/while/module_with_a_long_name.py"


def pum_rows(nv: Any, screen: Any) -> list[str]:
    """The built-in menu's rows as the screen shows them (with its scrollbar)."""
    pos = nv.exec_lua("return vim.fn.pum_getpos()")
    rows = screen.lines()[pos["row"] : pos["row"] + pos["height"]]
    return [r[pos["col"] : pos["col"] + pos["width"] + pos["scrollbar"]] for r in rows]


def test_the_menu_fits_the_screen_beside_the_pane(
    nvim: Any, workspace: Path, screen_factory: Any
) -> None:
    (workspace / LONG).parent.mkdir(parents=True)
    (workspace / LONG).write_text("x\n")
    extensions.install(
        make_extension(workspace.parent / "more", "zeta", "A description long enough " * 3)
    )
    screen = screen_factory(nvim, 160, 45)  # the default pane: 40 % on the right
    open_composer(nvim)
    nvim.input("see @")
    wait_for(lambda: "@" + LONG in words(nvim), 10, "the menu")
    screen.wait_text("README.md")
    screen.wait_text("app.py")
    rows = {r.split()[0]: r for r in pum_rows(nvim, screen)}
    # Every row shows its kind whole, inside the screen: a long path is shortened in the
    # middle (its file name kept) instead of pushing the columns off the right edge.
    (long_row,) = [r for k, r in rows.items() if k.endswith("/module_with_a_long_name.py")]
    assert long_row.split()[1:] == ["file"] and "…" in long_row
    assert " ext " in rows["@ext:zeta"] and rows["@ext:zeta"].rstrip().endswith("…")
    # A file says `file` once (the kind column), not `file file`.
    assert rows["README.md"].split() == ["README.md", "file"]
    assert rows["@buffer"].split()[:2] == ["@buffer", "editor"]
    # Nothing lost: the whole path is in the item's info, and the item inserts it whole.
    (item,) = [i for i in menu(nvim)["items"] if i["word"] == "@" + LONG]
    assert item["info"] == LONG


def edit_words(nv: Any, workspace: Path) -> None:
    """A file in the editor window: blink.cmp's `buffer` source offers its words."""
    (workspace / "words.txt").write_text("brown bronze\n")
    nv.command("edit words.txt")


def test_with_blink_a_mention_holds_only_sightline_items(nvim: Any, workspace: Path) -> None:
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(SETUP_BLINK)
    edit_words(nvim, workspace)
    open_composer(nvim)
    type_each(nvim, "a bro")  # outside a mention the user's sources complete as before
    wait_for(lambda: blink_menu(nvim) == ["bronze", "brown"], 10, "buffer words")
    type_each(nvim, " @bro")  # inside one: sightline's items alone, no buffer words after
    wait_for(lambda: blink_menu(nvim) == sorted(BRO), 10, "the mention's items")


def test_the_help_snippet_for_blink_owns_the_mention(nvim: Any, workspace: Path) -> None:
    lua_helper(nvim, "engines.fake_blink")
    nvim.exec_lua(help_blink_snippet())
    edit_words(nvim, workspace)
    open_composer(nvim)
    type_each(nvim, "a @bro")
    wait_for(lambda: blink_menu(nvim) == sorted(BRO), 10, "the mention's items")


def test_with_cmp_the_best_item_is_preselected(nvim: Any, workspace: Path) -> None:
    lua_helper(nvim, "engines.fake_cmp")
    nvim.exec_lua("require('cmp').setup({ sources = { { name = 'buffer' } }, preselect = 'none' })")
    open_composer(nvim)
    cbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    # the composer honours the source's preselect, whatever the user's global choice
    assert nvim.exec_lua("return _G.fake_cmp.buffer[...].preselect", cbuf) == "item"
    got = wait_for(
        lambda: (
            (r := lua_helper(nvim, "engines.cmp_complete", "@bro"))["response"]["items"][1:] and r
        ),
        10,
        "cmp items",
    )
    flags = [i.get("preselect") for i in got["response"]["items"]]
    assert flags == [True, None, None, None]  # LSP `preselect` on the best item only
