"""The composer's completion menu as the tests read and type it (`@` and `/`, every
engine): shared by the test modules of tests/nvim."""

from __future__ import annotations

from typing import Any

from tests.conftest import wait_for


def menu(nv: Any) -> dict[str, Any]:
    return dict(nv.exec_lua("return vim.fn.complete_info({'items', 'selected', 'mode'})"))


def words(nv: Any) -> list[str]:
    return [item["word"] for item in menu(nv)["items"]]


def line(nv: Any) -> str:
    return str(nv.exec_lua("return vim.api.nvim_get_current_line()"))


def pum(nv: Any) -> bool:
    return bool(nv.exec_lua("return vim.fn.pumvisible() == 1"))


def open_composer(nv: Any) -> None:
    assert nv.exec_lua("return require('sightline').chat()") is True
    assert nv.api.get_mode()["mode"] == "i"


def type_until(nv: Any, keys: str, expected: list[str]) -> None:
    """Type keys into the composer and wait for the menu to show `expected`."""
    nv.input(keys)
    wait_for(lambda: words(nv) == expected, 10, f"the menu after {keys!r}")


SETUP_CMP = "require('cmp').setup({ sources = { { name = 'buffer' } } })"
SETUP_BLINK = "require('blink.cmp').setup({})"


def blink_menu(nv: Any) -> list[str] | None:
    menu_ = nv.exec_lua("return _G.fake_blink.menu")
    return None if menu_ is None else list(menu_)


def type_each(nv: Any, text: str) -> None:
    """Type one key at a time, as a person does (each gets its own TextChangedI)."""
    for char in text:
        before = line(nv)
        nv.input(char)

        def typed(b: str = before, c: str = char) -> bool:
            return bool(line(nv) == b + c)

        wait_for(typed, 10, f"{char!r} typed")


def send_keys(nv: Any, text: str) -> None:
    """Type a message and send it with <C-s> (the composer's submit key in Insert mode)."""
    type_each(nv, text)
    nv.input("<C-e><C-s>")


def composer_text(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def bar_note(nv: Any) -> str | None:
    note = nv.exec_lua("local n = require('sightline.ui.pane.state').S.notice return n and n.text")
    return note if isinstance(note, str) else None
