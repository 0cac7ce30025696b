"""Every message sightline shows is one screen line (lua/sightline/ui/message.lua): none
raises Neovim's hit-enter prompt at 80 columns, and a longer one waits whole in the pane."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.providers.acp import AcpProvider
from sightline.providers.acp.presets import AgentSpec
from sightline.providers.echo import EchoProvider
from tests.acp_util import acp_nvim
from tests.conftest import status, wait_for
from tests.screen import Screen

# Shows `msg` as sightline shows a message (or, with `refused`, a refusal of a command or
# mapping), from Neovim's loop as a key or a push would (a prompt shown inside an RPC request
# would block it), and records in _G.shown what vim.notify was given (it still shows it).
SHOW = """
local msg, level, refused = ...
_G.shown = nil
vim.schedule(function()
  local shown, notify = {}, vim.notify
  vim.notify = function(m, l) table.insert(shown, m) notify(m, l) end
  if refused then
    require('sightline.ui.pane').refused(nil, msg)
  else
    require('sightline.ui.message').notify(msg, level)
  end
  vim.notify = notify
  _G.shown = shown
end)
"""
PANE_NOTE = "local n = require('sightline.ui.pane.state').S.notice return n and n.text or vim.NIL"


def _refusals() -> list[str]:
    """What the core refuses Change with Agent with, for each provider that refuses."""
    acp = object.__new__(AcpProvider)  # scope_refusal reads only the agent's spec
    acp.spec = AgentSpec("claude-agent-acp-with-a-long-name", ("x",), client_writes=False)
    out = [EchoProvider().scope_refusal(), acp.scope_refusal()]
    return ["sightline: " + why for why in out if why]


REFUSALS = _refusals()


def show(nv: Any, screen: Screen, msg: str, refused: bool) -> list[str]:
    """Show `msg`; fail if Neovim then waits at the hit-enter prompt. Returns what
    vim.notify was given."""
    nv.command("echo '<before the message>'")
    screen.wait_text("<before the message>")
    nv.exec_lua(SHOW, msg, 3, refused)
    screen.wait_for(
        lambda s: "<before the message>" not in s.lines()[-1] or s.find("Press ENTER"),
        5,
        "the message drawn",
    )
    mode = nv.api.get_mode()  # answered even while Neovim waits at a prompt
    if mode["blocking"]:
        nv.input("<CR>")  # let the next example run
    assert not mode["blocking"] and screen.find("Press ENTER") is None, screen.text()
    return list(wait_for(lambda: nv.exec_lua("return _G.shown"), 5, "the message shown"))


def test_refusals_the_core_sends_are_one_line_and_whole_in_the_pane(
    nvim: Any, screen_factory: Any
) -> None:
    screen = screen_factory(nvim, 80, 24)
    for msg in REFUSALS:
        (shown,) = show(nvim, screen, msg, refused=True)
        assert shown.endswith("… (:Sightline chat)") and msg.startswith(shown[:-19])
        assert nvim.exec_lua(PANE_NOTE) == msg.removeprefix("sightline: ")


# Any text Neovim can be sent (an empty message shows nothing to wait for).
TEXT = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=300
) | st.sampled_from(REFUSALS)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(msg=TEXT)
def test_no_message_raises_the_hit_enter_prompt(nvim: Any, screen_factory: Any, msg: str) -> None:
    screen = getattr(nvim, "_test_screen", None) or screen_factory(nvim, 80, 24)
    nvim._test_screen = screen
    shown = show(nvim, screen, msg, refused=False)
    note = nvim.exec_lua(PANE_NOTE)
    # Nothing is lost: shown whole, or kept whole in the pane.
    assert shown == [msg] or note == msg.removeprefix("sightline: ")
    nvim.exec_lua("require('sightline.ui.pane.notice').clear()")


def test_change_with_agent_under_a_disk_writing_agent_is_one_line(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("one\ntwo\nthree\n")
    nv, _ = acp_nvim(nvim_factory, tmp_path, [], client_writes=False)
    nv.command("edit app.py")
    screen = screen_factory(nv, 80, 24)
    nv.input("Vj")
    screen.wait_for(lambda s: s.mode.startswith("visual"), what="Visual mode")
    nv.input("\\sc")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="the dialog")
    nv.input("make it shout<C-s>")
    # The details are in the pane, brought into view: the note wraps in its width.
    screen.wait_text("through sightline")
    assert not nv.api.get_mode()["blocking"] and screen.find("Press ENTER") is None
    assert nv.api.get_mode()["mode"] == "i"  # still typing in the dialog, no prompt between
    said = nv.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert said.splitlines()[-1] == (
        "sightline: Change with Agent is off for 'python'… (see the pane)"
    )
    assert status(nv)["state"] != "working"
