"""Issue 29 item 4: an idle pane costs Neovim nothing, whatever the transcript holds. Once a
long streamed reply (Markdown, code blocks) has ended and been drawn, no timer of sightline
runs in Neovim (not the spinner, not the paced Markdown render, not the languages loaded
ahead), the core pushes nothing and the screen is not drawn again."""

from __future__ import annotations

import time
from typing import Any

from tests import fakeapi
from tests.agent_util import idle, send
from tests.conftest import wait_for
from tests.fakeapi import FakeAnthropic, fake_api

__all__ = ["fake_api"]
from tests.screen import Screen

WATCH = """
_G.pushes = 0
local receive = require('sightline.ui.receive')
local update = receive.update
receive.update = function(payload)
  _G.pushes = _G.pushes + 1
  update(payload)
end
"""

# Active timers, and the streamed span's paint when one is scheduled (the loop's next turn).
ACTIVE_TIMERS = """
local n = require('sightline.ui.pane.state').S.md_painting and 1 or 0
vim.uv.walk(function(h)
  if h:get_type() == 'timer' and h:is_active() then
    n = n + 1
  end
end)
return n
"""


def _prompt(blocks: int) -> str:
    parts = []
    for i in range(blocks):
        parts += [
            f"## Part {i}: some **bold** and `code`",
            "- one item\n- two *items*",
            f"```lua\nlocal x{i} = {{ {i} }}\nreturn x{i}\n```",
            f"```c\nint f{i}(void) {{ return {i}; }}\n```",
        ]
    return "\n\n".join(parts) + "\n\nthe very end"


def test_after_a_long_streamed_reply_the_idle_pane_runs_no_timer_and_draws_nothing(
    nvim: Any, screen: Screen
) -> None:
    nvim.exec_lua("require('sightline.ui.pane').show()")
    nvim.exec_lua(WATCH)
    send(nvim, _prompt(150))  # echoed back: ~3 000 transcript rows, streamed in small chunks
    idle(nvim)
    screen.wait_text("the very end")
    wait_for(lambda: nvim.exec_lua(ACTIVE_TIMERS) == 0, what="no sightline timer running")
    # What the last timer scheduled has run (requests come after it) and been drawn: the
    # flush of this full redraw comes after any it caused, on the UI's ordered channel.
    drawn = screen.flushes
    nvim.command("redraw!")
    wait_for(lambda: screen.flushes > drawn, what="the full redraw")
    pushes, flushes = nvim.exec_lua("return _G.pushes"), screen.flushes
    # Nothing is awaited here: what is checked is that nothing happens for a while.
    time.sleep(0.5)
    assert nvim.exec_lua(ACTIVE_TIMERS) == 0
    assert nvim.exec_lua("return _G.pushes") == pushes
    assert screen.flushes == flushes


SCROLLS = """
_G.scrolls = { pane = 0, other = 0 }
vim.api.nvim_create_autocmd('WinScrolled', {
  callback = function()
    local twin = require('sightline.ui.pane.state').S.twin
    for key in pairs(vim.v.event) do
      if key == tostring(twin) then
        _G.scrolls.pane = _G.scrolls.pane + 1
      elseif key ~= 'all' then
        _G.scrolls.other = _G.scrolls.other + 1
      end
    end
  end,
})
"""


def test_a_reply_scrolling_the_pane_runs_no_scroll_handler_and_the_window_gets_its_own_back(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic
) -> None:
    # Each push of a paced reply scrolls the transcript a row or so; a WinScrolled handler
    # (matchparen's, in the window the user types in) would run for each one.
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nvim = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": "k"})
    screen = screen_factory(nvim)
    nvim.exec_lua("require('sightline.ui.pane').show()")
    twin = nvim.exec_lua("return require('sightline.ui.pane.state').S.twin")
    nvim.api.win_set_option(twin, "eventignorewin", "BufEnter")  # the user's own
    nvim.exec_lua(SCROLLS)
    top = nvim.call("getwininfo", twin)[0]["topline"]
    reply = "\n\n".join(f"Paragraph {i} of the reply." for i in range(60)) + "\n\nthe very end"
    with Paced():
        fake_api.script(fakeapi.text(reply, chunks=240))
        nvim.exec_lua("assert(require('sightline').send('a long one'))")
        idle(nvim)
    screen.wait_text("the very end")
    # It followed the reply down, row after row: handlers saw one scroll at most (the last
    # push's, once the turn had ended).
    assert nvim.call("getwininfo", twin)[0]["topline"] > top + 60
    assert nvim.exec_lua("return _G.scrolls.pane") <= 1
    assert nvim.api.win_get_option(twin, "eventignorewin") == "BufEnter"
    # Scrolled by the user, the window fires WinScrolled as any other.
    seen = nvim.exec_lua("return _G.scrolls.pane")
    nvim.exec_lua("vim.api.nvim_win_call(..., function() vim.cmd('normal! gg') end)", twin)
    wait_for(lambda: nvim.exec_lua("return _G.scrolls.pane") == seen + 1, what="the scroll")


class Paced:
    """The fake API's text deltas sent one every 4 ms, as a model streams them."""

    def __enter__(self) -> Paced:
        self._original = fakeapi._Handler.send_event
        original = self._original

        def send_event(handler: Any, name: str, data: dict[str, Any]) -> None:
            if name == "content_block_delta":
                time.sleep(0.004)
            original(handler, name, data)

        fakeapi._Handler.send_event = send_event  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *_: object) -> None:
        fakeapi._Handler.send_event = self._original  # type: ignore[method-assign]
