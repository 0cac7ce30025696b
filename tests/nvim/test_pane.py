"""The agent pane with the echo provider: open, type, send, stream, close, reopen."""

from __future__ import annotations

from typing import Any

from tests.conftest import capture_notify, said, status, transcript, wait_for, wait_idle
from tests.lua_helper import lua_helper
from tests.screen import Screen


def pane_windows(nv: Any) -> dict[str, int]:
    return dict(lua_helper(nv, "windows.pane_roles"))


def test_chat_opens_pane_with_composer_focused_in_insert_mode(nvim: Any) -> None:
    nvim.command("Sightline chat")
    wins = pane_windows(nvim)
    assert set(wins) == {"transcript", "composer"}
    assert nvim.api.get_current_win().handle == wins["composer"]
    assert nvim.api.get_mode()["mode"] == "i"
    tbuf = nvim.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    assert nvim.api.buf_get_option(tbuf, "buftype") == "nofile"
    assert nvim.api.buf_get_option(tbuf, "modifiable") is False
    assert nvim.api.buf_get_option(tbuf, "undolevels") == -1
    assert nvim.api.buf_get_option(tbuf, "filetype") == "sightline"


def test_typing_and_enter_streams_echo_reply(nvim: Any) -> None:
    nvim.command("Sightline chat")
    nvim.input("what is sightline?")
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n")
    nvim.input("<CR>")
    wait_for(lambda: "echo: what is sightline?" in transcript(nvim), what="the echo reply")
    lines = transcript(nvim)
    assert lines[:2] == ["▍You", "what is sightline?"]
    wait_idle(nvim)
    composer = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    assert nvim.api.buf_get_lines(composer, 0, -1, False) == [""]


def test_ctrl_s_sends_from_insert_mode(nvim: Any) -> None:
    nvim.command("Sightline chat")
    nvim.input("first line<CR>second line<C-s>")
    wait_for(lambda: "echo: first line" in transcript(nvim))
    assert "second line" in transcript(nvim)


def test_q_hides_pane_and_reopen_shows_same_transcript(nvim: Any) -> None:
    nvim.command("Sightline chat")
    nvim.exec_lua("assert(require('sightline').send('remember me'))")
    wait_idle(nvim)
    before = transcript(nvim)
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n")
    nvim.input("q")
    wait_for(lambda: pane_windows(nvim) == {})
    nvim.command("Sightline")  # toggles
    assert set(pane_windows(nvim)) == {"transcript", "composer"}
    assert transcript(nvim) == before
    assert "echo: remember me" in before


def test_status_reports_state_provider_model_mode(nvim: Any) -> None:
    st = status(nvim)
    assert st["state"] == "stopped"
    assert (st["provider"], st["model"], st["mode"]) == ("echo", "echo", "normal")
    nvim.exec_lua("assert(require('sightline').send('hi'))")
    wait_idle(nvim)
    assert status(nvim)["provider"] == "echo"


def test_empty_send_is_refused_with_a_message(nvim: Any) -> None:
    res = nvim.exec_lua("return {require('sightline').send('   ')}")
    assert res[0] is None and "empty" in res[1]
    assert status(nvim)["state"] in ("idle", "starting")


def test_send_with_bad_argument_types_is_refused_not_thrown(nvim: Any) -> None:
    assert nvim.exec_lua("return {require('sightline').send(42)}")[1].startswith("sightline.send")
    assert "opts" in nvim.exec_lua("return {require('sightline').send('x', 3)}")[1]


def test_unknown_subcommand_lists_valid_ones(nvim: Any) -> None:
    notes = capture_notify(nvim)
    nvim.command("Sightline frobnicate")
    (note,) = notes()
    whole = said(nvim, note["msg"])  # one screen line; the list waits in the pane
    assert "unknown subcommand" in whole and "chat" in whole and "reset" in whole


def test_subcommand_completion(nvim: Any) -> None:
    assert "chat" in nvim.call("getcompletion", "Sightline ", "cmdline")
    assert nvim.call("getcompletion", "Sightline plan ", "cmdline") == ["on", "off", "toggle"]
    assert nvim.call("getcompletion", "Sightline res", "cmdline") == ["reset", "restart"]


def test_reset_starts_a_new_conversation(nvim: Any) -> None:
    nvim.exec_lua("assert(require('sightline').send('one'))")
    wait_idle(nvim)
    first = nvim.exec_lua("return require('sightline.host').status().conversation")
    nvim.command("Sightline reset")
    wait_for(lambda: transcript(nvim) == [""], what="the cleared transcript")
    nvim.exec_lua("assert(require('sightline').send('two'))")
    wait_idle(nvim)
    assert nvim.exec_lua("return require('sightline.host').status().conversation") != first
    assert "one" not in transcript(nvim)


def test_pane_side_and_width_are_configurable(nvim_factory: Any) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}, "pane": {"side": "left", "width": 30}})
    nv.command("Sightline chat")
    wins = pane_windows(nv)
    assert nv.api.win_get_width(wins["transcript"]) == 30
    assert nv.call("win_screenpos", wins["transcript"])[1] == 1  # leftmost column


def test_transcript_follows_output_only_at_its_bottom(nvim: Any) -> None:
    nvim.command("Sightline chat")
    for i in range(3):
        nvim.exec_lua("assert(require('sightline').send(...))", f"message {i}")
        wait_idle(nvim)
    twin = pane_windows(nvim)["transcript"]
    last = len(transcript(nvim))
    assert nvim.api.win_get_cursor(twin)[0] == last  # followed
    nvim.api.win_set_cursor(twin, (2, 0))  # the user scrolls back to read
    nvim.exec_lua("assert(require('sightline').send('one more'))")
    wait_idle(nvim)
    assert nvim.api.win_get_cursor(twin)[0] == 2


def test_composer_recalls_sent_prompts(nvim: Any) -> None:
    nvim.command("Sightline chat")
    for text in ("first prompt", "second prompt"):
        nvim.input(text + "<C-s>")

        def echoed(t: str = text) -> bool:
            return f"echo: {t}" in transcript(nvim)

        wait_for(echoed)
        wait_idle(nvim)
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n")
    nvim.input("<Up>")
    composer = nvim.exec_lua("return require('sightline.ui.pane').buffers().composer")
    wait_for(lambda: nvim.api.buf_get_lines(composer, 0, -1, False) == ["second prompt"])
    nvim.input("<Up>")
    wait_for(lambda: nvim.api.buf_get_lines(composer, 0, -1, False) == ["first prompt"])


def test_stop_without_a_turn_is_a_message_not_an_error(nvim: Any) -> None:
    notes = capture_notify(nvim)
    nvim.command("Sightline stop")
    assert notes()[0]["msg"] == "sightline: no turn is running"


def test_typed_prompt_and_echo_reply_are_on_screen(nvim: Any, screen: Screen) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="Insert mode in the composer")
    nvim.input("hello from the keyboard<C-s>")
    screen.wait_text("echo: hello from the keyboard")
    assert screen.find("hello from the keyboard") is not None


def test_a_fold_streamed_in_insert_mode_closes_when_insert_mode_ends(nvim: Any) -> None:
    # Neovim computes no 'foldexpr' folds in Insert mode; the pane computes them when it
    # ends. (Replacing the rows through `:normal` instead froze a Neovim without a UI:
    # tests/nvim/test_complete_nvim.py::test_omnifunc_completes_each_mode hung there.)
    from sightline.ui.transcript import Transcript

    assert nvim.exec_lua("return require('sightline').chat()") is True
    assert nvim.api.get_mode()["mode"] == "i"
    t = Transcript()
    t.add_user("think first")
    t.append_thinking("step one\nstep two\nstep three\n")
    t.append_text("done")
    nvim.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
    twin = nvim.exec_lua(
        "return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)"
    )
    header = 1 + nvim.exec_lua(
        "local b = require('sightline.ui.pane').buffers().transcript;"
        "for i, l in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do"
        " if l:find('∴') == 1 then return i - 1 end end"
    )

    def closed() -> int:
        code = "local w, r = ...; return vim.api.nvim_win_call(w, function()"
        code += " return vim.fn.foldclosed(r) end)"
        return int(nvim.exec_lua(code, twin, header))

    assert nvim.api.get_mode() == {"mode": "i", "blocking": False}  # Neovim answers
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n", what="Normal mode")
    wait_for(lambda: closed() == header, what="the thinking folded")


_WATCH_REQUESTS = """
local host, receive = require('sightline.host'), require('sightline.ui.receive')
local request, update, inside = host.request, receive.update, false
_G.asked = {}
host.request = function(method, params)
  table.insert(_G.asked, { method, inside })
  return request(method, params)
end
receive.update = function(payload)
  inside = true
  update(payload)
  inside = false
end
"""


def test_a_lost_delta_brings_the_whole_transcript_asked_for_once_after_the_push(
    nvim: Any, screen: Screen
) -> None:
    nvim.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    nvim.input("first message<C-s>")
    wait_idle(nvim)
    shown = transcript(nvim)
    nvim.exec_lua(_WATCH_REQUESTS)
    # The pane lost what the core drew (its buffer emptied), then two pushes arrive whose
    # deltas start past its end, as after a core restarted mid-update.
    lost = "{start = %d, lines = {'later'}, hls = {}, chips = {}, md = {}, folds = {}}"
    nvim.exec_lua(
        "local receive = require('sightline.ui.receive') "
        "receive.update({transcript = {start = 0, lines = {}, hls = {}, chips = {}, md = {},"
        " folds = {}}}) "
        f"receive.update({{transcript = {lost % 40}}}) "
        f"receive.update({{transcript = {lost % 41}}})"
    )
    wait_for(lambda: transcript(nvim) == shown, what="the whole transcript again")
    screen.wait_text("echo: first message")
    # Asked once, and not from inside the push (no Lua function the core calls calls it).
    assert nvim.exec_lua("return _G.asked") == [["transcript.full", False]]
