"""`@url:https://…` typed in the composer: the page is fetched at send (not asked: the user
typed it), bounded like `@path`, added after the typed text as Markdown; the URL shows as a
chip that <CR> opens; an address the rules refuse is not fetched and the pane says why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_util import accepted, claude, idle, texts
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text
from tests.webserver import WebServer

__all__ = ["fake_api"]


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def type_and_send(nv: Any, message: str) -> None:
    """What a user does: open the pane, type in the composer, send with <C-s>."""
    nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input(message.replace("<", "<lt>") + "<C-s>")
    wait_for(lambda: fake_requests_or_busy(nv), what="the send")


def fake_requests_or_busy(nv: Any) -> bool:
    return status(nv)["state"] != "idle" or any(
        line.startswith("⇣") or line.startswith("✗") for line in transcript(nv)
    )


def test_a_mentioned_page_is_fetched_at_send_bounded_and_shown_as_a_chip(
    nvim_factory: Any, fake_api: FakeAnthropic, web: WebServer
) -> None:
    web.page(
        "/guide",
        "<html><body><main><h1>Guide</h1><p>" + "word " * 400 + "</p></main></body></html>",
    )
    network = {"allow_hosts": ["127.0.0.1"]}
    nv = claude(
        nvim_factory, fake_api, tools={"network": network}, mentions={"max_file_bytes": 500}
    )
    fake_api.script(text("read it"))
    url = web.url("/guide")
    type_and_send(nv, f"summarise @url:{url}.")
    idle(nv)
    (body,) = accepted(fake_api, 1)
    parts = texts(body["messages"][-1])
    assert parts[0] == f"summarise @url:{url}."  # what was typed, as typed
    page = parts[1]
    assert page.startswith(f'<url href="{url}" status="200">\n# Guide\n\nword word')
    assert "[cut: only the first" in page and len(page.encode()) < 700
    assert web.paths() == ["/guide"]
    lines = transcript(nv)
    assert any(line.startswith(f"⇣ {url} · 200 OK · ") for line in lines)
    # The mention is a chip; <CR> on it opens the page (vim.ui.open, stubbed here).
    row = next(i for i, line in enumerate(lines) if f"@url:{url}" in line)
    col = lines[row].index("@url:")
    nv.exec_lua("vim.ui.open = function(u) _G.opened = u return {}, nil end")
    twin = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    marks = nv.exec_lua(
        "local b = require('sightline.ui.pane').buffers().transcript "
        "return vim.api.nvim_buf_get_extmarks(b, vim.api.nvim_create_namespace('sightline.chip'),"
        " 0, -1, {details = true})"
    )
    assert any(m[1] == row and m[2] == col for m in marks)
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    nv.api.set_current_win(twin)
    nv.api.win_set_cursor(twin, (row + 1, col + 3))
    nv.input("<CR>")
    assert wait_for(lambda: nv.exec_lua("return _G.opened"), what="the page opened") == url


def test_a_refused_address_is_not_fetched_and_the_pane_says_which_rule(
    nvim_factory: Any, fake_api: FakeAnthropic, web: WebServer
) -> None:
    web.page("/admin", "secret")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("ok"))
    url = web.url("/admin")
    type_and_send(nv, f"look @url:{url}")
    idle(nv)
    (body,) = accepted(fake_api, 1)
    parts = texts(body["messages"][-1])
    assert parts[1].startswith(f'<url href="{url}" error="true">\n[not fetched: refused: 127.0.0.1')
    assert web.requests == []
    assert any(
        line.startswith(f"✗ @url:{url} not fetched — refused: 127.0.0.1, a loopback address")
        for line in transcript(nv)
    )
