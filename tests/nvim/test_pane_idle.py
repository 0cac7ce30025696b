"""Issue 29 item 4: an idle pane costs Neovim nothing, whatever the transcript holds. Once a
long streamed reply (Markdown, code blocks) has ended and been drawn, no timer of sightline
runs in Neovim (not the spinner, not the paced Markdown render, not the languages loaded
ahead), the core pushes nothing and the screen is not drawn again."""

from __future__ import annotations

import time
from typing import Any

from tests.agent_util import idle, send
from tests.conftest import wait_for
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

ACTIVE_TIMERS = """
local n = 0
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
