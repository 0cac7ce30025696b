"""`@buffer` and `@diagnostics`: offered by `@` above extensions and files, resolved at send
from the editor (the buffer of the editor window with its unsaved text; vim.diagnostic for
the workspace's loaded buffers), as parts after the typed text, bounded and redacted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import API_KEY, claude, idle
from tests.conftest import wait_for
from tests.fakeapi import FakeAnthropic, fake_api

__all__ = ["fake_api"]


def test_typing_at_b_offers_buffer_and_sending_it_sends_the_unsaved_text(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any, isolated_env: Path
) -> None:
    (isolated_env / "notes.py").write_text("saved = True\n")
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 120, 30)
    nv.command("edit notes.py")
    editor = nv.api.get_current_buf()
    # Unsaved, and holding the API key (which must never reach the model).
    nv.input(f"ggOunsaved = 'only in the buffer'  # {API_KEY}<Esc>")
    wait_for(lambda: editor.api.get_option("modified"))
    tick = editor.api.get_var("changedtick")
    nv.command("Sightline chat")
    nv.input("explain @b")
    # The native menu, on screen: @buffer first.
    screen.wait_text("@buffer")
    first = nv.exec_lua("return vim.fn.complete_info({'items'}).items[1].word")
    assert first == "@buffer"
    nv.input("<C-y>")
    wait_for(lambda: nv.api.get_current_line().startswith("explain @buffer"))
    nv.input("<Esc><CR>")
    idle(nv)
    (req,) = fake_api.wait_for_requests(1)
    content = req.body["messages"][0]["content"]
    assert content[0]["text"].rstrip() == "explain @buffer"  # the typed text, unchanged
    part = content[1]["text"]
    assert part.startswith('<buffer path="notes.py">\n')
    assert "unsaved = 'only in the buffer'" in part and "saved = True" in part
    assert editor.api.get_var("changedtick") == tick  # the buffer is left alone
    assert (isolated_env / "notes.py").read_text() == "saved = True\n"
    assert API_KEY not in str(req.body)


def test_at_diagnostics_sends_the_loaded_buffers_diagnostics(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "bad.py").write_text("x = (\n")
    nv = claude(nvim_factory, fake_api)
    nv.command("edit bad.py")
    nv.exec_lua(
        "local ns = vim.api.nvim_create_namespace('test-lint') "
        "vim.diagnostic.set(ns, 0, {{lnum = 0, col = 4, severity = 1, message = 'unclosed (',"
        " source = 'lint'}})"
    )
    assert nv.exec_lua("return {require('sightline').send('what is wrong? @diagnostics')}") == [
        True
    ]
    idle(nv)
    (req,) = fake_api.wait_for_requests(1)
    content = req.body["messages"][0]["content"]
    assert content[0]["text"] == "what is wrong? @diagnostics"
    assert content[1]["text"] == (
        '<diagnostics path="loaded buffers of the workspace">\n'
        "bad.py:1:5: error: unclosed ( [lint]\n</diagnostics>"
    )


def test_at_diagnostics_shows_the_one_error_among_thousands_of_hints(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # Issue 20 §13: the Lua side stopped at 1,000 items in buffer order, before the core sorted
    # (100,000 hints hid the error; 5,000 are enough to pass the bound).
    (isolated_env / "noisy.py").write_text("x = 1\n" * 10)
    (isolated_env / "bad.py").write_text("x = (\n")
    nv = claude(nvim_factory, fake_api)
    nv.command("edit noisy.py")
    nv.command("badd bad.py")
    nv.exec_lua(
        "local ns = vim.api.nvim_create_namespace('test-lint') "
        "local hints = {} "
        "for i = 1, 5000 do hints[i] = {lnum = i % 10, col = 0, severity = 4, "
        "message = 'hint ' .. i} end "
        "vim.diagnostic.set(ns, vim.fn.bufnr('noisy.py'), hints) "
        "vim.fn.bufload(vim.fn.bufnr('bad.py')) "
        "vim.diagnostic.set(ns, vim.fn.bufnr('bad.py'), {{lnum = 0, col = 4, severity = 1, "
        "message = 'unclosed ('}})"
    )
    assert nv.exec_lua("return {require('sightline').send('what is wrong? @diagnostics')}") == [
        True
    ]
    idle(nv)
    (req,) = fake_api.wait_for_requests(1)
    lines = req.body["messages"][0]["content"][1]["text"].splitlines()
    assert lines[1] == "bad.py:1:5: error: unclosed (", lines[:3]
    assert lines[2].startswith("noisy.py:") and ": hint: hint " in lines[2]
    assert lines[-2].startswith("[200 of 1000+ shown]"), lines[-2:]
