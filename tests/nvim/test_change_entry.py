"""Change with Agent entry points: mapping, :'<,'>Sightline change, dialog, PopUp menu."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import claude
from tests.conftest import capture_notify, status, transcript, wait_for, wait_idle
from tests.fakeapi import FakeAnthropic, fake_api, hold

__all__ = ["fake_api"]


def setup_file(nv: Any, ws: Path) -> None:
    (ws / "src").mkdir(exist_ok=True)
    (ws / "src" / "app.py").write_text("one\ntwo\nthree\nfour\n")
    nv.command("edit src/app.py")


def dialog_win(nv: Any) -> int | None:
    win: int | None = nv.exec_lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do "
        "if vim.w[w].sightline_role == 'dialog' then return w end end return nil"
    )
    return win


def test_mapping_opens_dialog_naming_selection_and_sends(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    setup_file(nv, isolated_env)
    nv.api.win_set_cursor(0, (2, 0))
    nv.input("Vj")
    wait_for(lambda: nv.api.get_mode()["mode"] == "V")
    nv.input("\\sc")
    win = wait_for(lambda: dialog_win(nv), what="the dialog")
    title = nv.api.win_get_config(win)["title"]
    assert "src/app.py:2–3" in "".join(t[0] for t in title)
    # The selection was taken when the dialog opened: moving the cursor changes nothing.
    nv.exec_lua("vim.api.nvim_win_set_cursor(vim.fn.win_getid(1), {4, 0})")
    nv.input("uppercase these<C-s>")
    (req,) = fake_api.wait_for_requests(1)
    parts = [p["text"] for p in req.body["messages"][0]["content"]]
    assert parts[0] == "uppercase these"
    assert "```python\ntwo\nthree\n```" in parts[1]
    assert dialog_win(nv) is None
    wait_idle(nv)
    lines = transcript(nv)
    assert "uppercase these" in lines and "about src/app.py:2–3" in lines


def test_range_command_with_instruction_sends_at_once(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    setup_file(nv, isolated_env)
    nv.api.win_set_cursor(0, (1, 1))
    nv.input("vj<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n")
    nv.command("'<,'>Sightline change swap them")
    (req,) = fake_api.wait_for_requests(1)
    parts = [p["text"] for p in req.body["messages"][0]["content"]]
    assert parts[0] == "swap them"
    assert "```python\nne\ntw\n```" in parts[1]
    assert dialog_win(nv) is None
    wait_idle(nv)


def test_plain_line_range_command_is_linewise(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    setup_file(nv, isolated_env)
    nv.command("3,4Sightline change go")
    (req,) = fake_api.wait_for_requests(1)
    assert "```python\nthree\nfour\n```" in req.body["messages"][0]["content"][1]["text"]
    wait_idle(nv)


def test_echo_provider_says_a_model_is_needed_and_starts_nothing(
    nvim: Any, isolated_env: Path
) -> None:
    notes = capture_notify(nvim)
    setup_file(nvim, isolated_env)
    nvim.input("Vj")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "V")
    nvim.input("\\sc")
    wait_for(notes)
    assert "needs a model provider" in notes()[0]["msg"]
    assert dialog_win(nvim) is None
    nvim.input("<Esc>")
    nvim.command("1,2Sightline change do it")
    assert "needs a model provider" in notes()[1]["msg"]
    assert status(nvim)["state"] == "stopped"


def popup_items(nv: Any) -> list[str]:
    nv.exec_lua("vim.api.nvim_exec_autocmds('MenuPopup', {})")
    menus = nv.call("menu_get", "PopUp", "v")
    return [m["name"] for m in menus[0]["submenus"]] if menus else []


def test_popup_entry_rules(nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path) -> None:
    nv = claude(nvim_factory, fake_api)
    setup_file(nv, isolated_env)
    assert "Change with Agent…" not in popup_items(nv)  # normal mode: no selection
    nv.input("Vj")
    wait_for(lambda: nv.api.get_mode()["mode"] == "V")
    items = popup_items(nv)
    assert items[-2:] == ["-sightline-", "Change with Agent…"]
    nv.input("<Esc>")
    fake_api.script(hold(after_events=3))
    nv.exec_lua("assert(require('sightline').send('busy'))")
    nv.input("Vj")
    wait_for(lambda: nv.api.get_mode()["mode"] == "V")
    items = popup_items(nv)
    assert "Change with Agent…" not in items and "-sightline-" not in items
    fake_api.release()
    wait_idle(nv)


def test_popup_absent_with_echo_or_option_off(
    nvim: Any, nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    for nv in (nvim, claude(nvim_factory, fake_api, selection_menu=False)):
        nv.api.buf_set_lines(0, 0, -1, False, ["a", "b"])
        nv.input("Vj")

        def visual(nv: Any = nv) -> bool:
            return bool(nv.api.get_mode()["mode"] == "V")

        wait_for(visual)
        assert "Change with Agent…" not in popup_items(nv)


# --- the dialog's place and title (issue 9 item 8) -------------------------------------------

LONG = "".join(f"row {i}\n" for i in range(1, 61))


def dialog_rows(screen: Any) -> tuple[int, int]:
    """Screen rows of the dialog's top and bottom border."""
    top = screen.wait_for(lambda s: s.find("╭ Change with Agent"), what="the dialog")[0]
    bottom = screen.wait_for(lambda s: s.find("╰ <C-s> send"), what="its footer")[0]
    return top, bottom


def test_dialog_opens_below_the_selection_and_takes_typed_ahead_keys(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    (isolated_env / "long.txt").write_text(LONG)
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 100, 30)
    nv.command("edit long.txt")
    screen.wait_text("row 1 ")
    tick = nv.api.buf_get_changedtick(0)
    # Typed in one go, as a fast typist does: the instruction lands in the dialog.
    nv.input("4GVj\\scfix these")
    win = wait_for(lambda: dialog_win(nv), what="the dialog")
    wait_for(lambda: nv.api.buf_get_lines(nv.api.win_get_buf(win), 0, -1, False) == ["fix these"])
    assert nv.api.buf_get_changedtick(nv.call("bufnr", "long.txt")) == tick
    top, _ = dialog_rows(screen)
    row4, row5 = screen.find("row 4 "), screen.find("row 5 ")
    assert row4 is not None and row5 is not None  # the selected lines are still in sight
    assert top == row5[0] + 1  # right below them


def test_dialog_opens_above_a_selection_at_the_bottom(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    (isolated_env / "long.txt").write_text(LONG)
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 100, 30)
    nv.command("edit long.txt")
    screen.wait_text("row 1 ")
    source = nv.api.get_current_win().handle
    nv.input("LVk\\sc")  # the last two lines of the window
    wait_for(lambda: dialog_win(nv), what="the dialog")
    _, bottom = dialog_rows(screen)
    last = nv.call("line", "w$", source)
    above, below = screen.find(f"row {last - 1} "), screen.find(f"row {last} ")
    assert above is not None and below is not None
    assert bottom == above[0] - 1


def test_charwise_title_ends_at_the_last_selected_column(
    nvim_factory: Any, fake_api: FakeAnthropic, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 100, 30)
    nv.api.buf_set_lines(0, 0, -1, False, ["abcdefghSELECTED rest", "ünï code"])
    nv.input("08lv6l\\sc")  # columns 9–15
    screen.wait_text("Change with Agent: [No Name] 1:9–1:15 ")
    nv.input("<Esc><Esc>j0v2l\\sc")  # ü (2 bytes), n, ï (2 bytes): bytes 1–5, ï at 4
    screen.wait_text("Change with Agent: [No Name] 2:1–2:4 ")


def test_title_under_lcd_is_the_transcripts(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 160, 30)
    setup_file(nv, isolated_env)
    nv.command("lcd src")  # names relative to the window's directory would say app.py
    nv.input("2GVj\\sc")
    screen.wait_text("Change with Agent: src/app.py:2–3 ")
    nv.input("shout<C-s>")
    wait_idle(nv)
    assert "about src/app.py:2–3" in transcript(nv)
    (req,) = fake_api.wait_for_requests(1)
    assert req.body["messages"][0]["content"][1]["text"].startswith(
        "The selection: src/app.py, lines 2–3."
    )
