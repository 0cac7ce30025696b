"""Reveal in a real headless Neovim: the three display cases in every mode, the highlight,
its expiry, the peek, a UI's view of the band, invalid arguments, go_to_position, the command."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import wait_for
from tests.lua_helper import lua_helper

REVEAL = "return require('sightline.reveal').reveal(...)"
GOTO = "return require('sightline.reveal').go_to_position(...)"
ACCENT = 0xFF6B9D


def blend(fg: int, bg: int, alpha: float = 48 / 255) -> int:
    """The accent over a background at alpha, as the ADR's Color.FromArgb(48, accent)."""
    out = 0
    for shift in (16, 8, 0):
        f, b = (fg >> shift) & 0xFF, (bg >> shift) & 0xFF
        out |= int(b + (f - b) * alpha + 0.5) << shift
    return out


def band_rgb(nvim: Any) -> int:
    normal = nvim.exec_lua("return vim.api.nvim_get_hl(0, {name = 'Normal', link = false})")
    return blend(ACCENT, normal.get("bg", 0))


def write_code(ws: Path, name: str = "code.txt", n: int = 300) -> Path:
    """n lines; every 7th is empty, so the band must cover empty lines too."""
    p = ws / name
    p.write_text("".join("\n" if i % 7 == 0 else f"line {i} of {name}\n" for i in range(1, n + 1)))
    return p


def reveal(nvim: Any, start: int, end: int | None = None, **extra: Any) -> str:
    """Call reveal as the MCP server does (exec_lua); file_path defaults to code.txt."""
    args: dict[str, Any] = {"file_path": "code.txt", "start_line": start, **extra}
    if end is not None:
        args["end_line"] = end
    return str(nvim.exec_lua(REVEAL, args))


def marks(nvim: Any) -> list[dict[str, Any]]:
    return list(lua_helper(nvim, "marks.reveal"))


def peeks(nvim: Any) -> list[dict[str, Any]]:
    return list(lua_helper(nvim, "windows.peeks"))


def assert_painted(nvim: Any, buf: int, s: int, e: int, signs: bool = False) -> None:
    ms = sorted(marks(nvim), key=lambda m: m.get("hl_group") or "")
    assert len(ms) == 2, ms
    bar, band = ms  # the bar has no hl_group
    assert band == {
        "buf": buf, "row": s - 1, "col": 0, "end_row": e, "end_col": 0,
        "hl_group": "SightlineReveal", "hl_eol": True,
    }  # fmt: skip
    assert "hl_group" not in bar
    assert bar["row"] == s - 1 and bar["end_row"] == e - 1 and bar["buf"] == buf
    assert bar["number_hl_group"] == "SightlineRevealBar"
    if signs:
        assert bar["sign_hl_group"] == "SightlineRevealBar" and bar["sign_text"].strip() == "▎"
    else:
        assert "sign_text" not in bar


def gone(nvim: Any) -> bool:
    return not marks(nvim) and not peeks(nvim)


@pytest.fixture
def editor(nvim: Any, isolated_env: Path) -> Any:
    """code.txt in the left (current) window, other.txt on the right; '< '> set earlier."""
    write_code(isolated_env, "code.txt")
    write_code(isolated_env, "other.txt", 50)
    nvim.command("edit code.txt | rightbelow vsplit other.txt | wincmd h")
    nvim.api.win_set_cursor(0, [3, 1])
    nvim.input("vj<Esc>")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "n")
    nvim.api.win_set_cursor(0, [10, 2])
    return nvim


def enter_mode(nvim: Any, mode: str) -> None:
    keys = {"n": "", "v": "vjj", "V": "Vj", "i": "i"}[mode]
    if keys:
        nvim.input(keys)
    wait_for(lambda: nvim.api.get_mode()["mode"] == mode, what=f"mode {mode}")


# ranges for code.txt in a 22-row window whose cursor is on line 10..12 and topline 1
CASES = {"visible": (14, 16), "scrolled": (25, 28), "peek": (200, 205)}


@pytest.mark.parametrize("mode", ["n", "v", "V", "i"])
@pytest.mark.parametrize("case", ["visible", "scrolled", "peek"])
def test_display_case_keeps_everything(editor: Any, case: str, mode: str) -> None:
    nvim = editor
    enter_mode(nvim, mode)
    s, e = CASES[case]
    before = lua_helper(nvim, "windows.snapshot")
    res = reveal(nvim, s, e, duration_ms=150)
    assert res == "OK"
    after = lua_helper(nvim, "windows.snapshot")
    last = nvim.exec_lua("return require('sightline.reveal').last")
    assert last["case"] == case
    cur = nvim.api.get_current_win().handle
    if case == "scrolled":
        # only the revealing window's view changed, and it now shows the range
        assert last["win"] == cur
        top = after["wins"][str(cur)]["topline"]
        assert top != before["wins"][str(cur)]["topline"]
        assert top <= s and nvim.eval(f"line('w$', {cur})") >= e
        before["wins"][str(cur)]["topline"] = top
    assert after == before
    buf = nvim.api.get_current_buf().handle
    assert_painted(nvim, buf, s, e)
    ps = peeks(nvim)
    if case == "peek":
        assert len(ps) == 1
        p = ps[0]
        assert p["buf"] == buf and p["topline"] == s and p["number"]
        assert p["config"]["relative"] == "win" and p["config"]["win"] == cur
        assert p["config"]["focusable"] is False
        assert p["config"]["title"][0][0].strip() == f"code.txt:{s}–{e}"
        assert p["config"]["height"] == e - s + 1
    else:
        assert ps == []
    wait_for(lambda: gone(nvim), what="highlight and peek gone")
    assert lua_helper(nvim, "windows.snapshot") == after


def test_band_and_bar_on_exact_lines_of_a_window_with_signs(editor: Any) -> None:
    nvim = editor
    nvim.command("setlocal signcolumn=yes number")
    assert reveal(nvim, 7, 9) == "OK"
    assert_painted(nvim, nvim.api.get_current_buf().handle, 7, 9, signs=True)


def test_bar_never_opens_a_sign_column(editor: Any) -> None:
    nvim = editor
    nvim.command("setlocal signcolumn=auto")
    width = nvim.eval("getwininfo(win_getid())[0].textoff")
    assert reveal(nvim, 7, 9) == "OK"
    assert_painted(nvim, nvim.api.get_current_buf().handle, 7, 9, signs=False)
    assert nvim.eval("getwininfo(win_getid())[0].textoff") == width


def test_last_line_and_single_line(editor: Any) -> None:
    nvim = editor
    assert reveal(nvim, 300, 300) == "OK"
    assert_painted(nvim, nvim.api.get_current_buf().handle, 300, 300)
    assert reveal(nvim, 1) == "OK"
    assert_painted(nvim, nvim.api.get_current_buf().handle, 1, 1)


def test_peek_taller_than_window_shows_start(editor: Any) -> None:
    nvim = editor
    assert reveal(nvim, 100, 250) == "OK"
    (p,) = peeks(nvim)
    height = nvim.api.get_current_win().height
    assert p["config"]["height"] + 2 <= height and p["topline"] == 100 and p["cursor"] == [100, 0]


def test_peek_closes_when_the_user_moves(editor: Any) -> None:
    nvim = editor
    nvim.api.win_set_cursor(0, [11, 0])  # a CursorMoved is pending: it must not close the peek
    assert reveal(nvim, 200, 203) == "OK"
    time.sleep(0.1)  # a bounded wait for something that must NOT happen
    assert len(peeks(nvim)) == 1
    nvim.input("j")
    wait_for(lambda: not peeks(nvim), what="peek closed by cursor move")
    assert len(marks(nvim)) == 2  # the highlight itself lives on until its timer


@pytest.mark.parametrize("keys", ["i", "<C-w>l", ":"])
def test_peek_closes_on_mode_or_window_change(editor: Any, keys: str) -> None:
    nvim = editor
    assert reveal(nvim, 200, 203) == "OK"
    assert len(peeks(nvim)) == 1
    nvim.input(keys)
    wait_for(lambda: not peeks(nvim), what="peek closed")


def test_new_reveal_replaces_previous_and_its_timer(editor: Any) -> None:
    nvim = editor
    assert reveal(nvim, 200, 203, duration_ms=150) == "OK"
    assert reveal(nvim, 14, 15, duration_ms=5000) == "OK"
    assert peeks(nvim) == []  # the old peek went with the old reveal
    nvim.exec_lua("vim.wait(300)")  # past the first timer: it must not clear the second reveal
    assert_painted(nvim, nvim.api.get_current_buf().handle, 14, 15)


def test_unloaded_file_loads_hidden_and_unlisted(nvim: Any, isolated_env: Path) -> None:
    write_code(isolated_env, "code.txt")
    res = nvim.exec_lua(
        REVEAL, {"file_path": str(isolated_env / "code.txt"), "start_line": 40, "end_line": 42}
    )
    assert res == "OK"
    buf = nvim.exec_lua("return vim.fn.bufnr(...)", str(isolated_env / "code.txt"))
    assert nvim.exec_lua(
        "return {vim.bo[...].buflisted, vim.api.nvim_buf_is_loaded(...)}", buf
    ) == [False, True]
    # shown only in the peek, never in a user window
    wins = nvim.exec_lua("return vim.fn.win_findbuf(...)", buf)
    assert [p["win"] for p in peeks(nvim)] == wins


def test_home_and_relative_paths(nvim: Any, isolated_env: Path) -> None:
    sub = isolated_env / "src"
    sub.mkdir()
    write_code(sub, "a.txt", 20)
    assert nvim.exec_lua(REVEAL, {"file_path": "src/../src/a.txt", "start_line": 2}) == "OK"
    home = nvim.exec_lua("return vim.uv.os_homedir()")
    if str(isolated_env).startswith(home):
        rel = (isolated_env / "src" / "a.txt").relative_to(home)
        assert nvim.exec_lua(REVEAL, {"file_path": f"~/{rel}", "start_line": 3}) == "OK"
    assert len({m["buf"] for m in marks(nvim)}) == 1


def test_swap_file_of_another_neovim_loads_read_only(
    nvim_factory: Callable[..., Any], isolated_env: Path
) -> None:
    write_code(isolated_env, "code.txt", 30)
    swapdir = isolated_env.parent / "swap"
    swapdir.mkdir()
    other = nvim_factory()
    other.command(f"set swapfile updatecount=200 directory={swapdir}// | edit code.txt")
    assert other.eval("swapname('%')")
    me = nvim_factory()
    me.command(f"set swapfile updatecount=200 directory={swapdir}//")
    assert reveal(me, 3, 4) == "OK"
    buf = me.exec_lua("return vim.fn.bufnr('code.txt')")
    assert me.exec_lua("return vim.bo[...].readonly", buf) is True
    assert me.api.get_mode()["mode"] == "n"


def A(**kw: Any) -> dict[str, Any]:
    return {"file_path": "code.txt", **kw}


PAST_END = "is past the end of code.txt (300 lines)"
DURATION = "duration_ms must be between 100 and 60000, got"
INVALID = [
    ({"start_line": 1}, "file_path is required"),
    ({"file_path": "", "start_line": 1}, "file_path must be a non-empty string"),
    ({"file_path": "nope.c", "start_line": 1}, "file not found: nope.c"),
    ({"file_path": ".", "start_line": 1}, "is a directory"),
    (A(), "start_line is required (or give member_key)"),
    (A(start_line=0), "start_line must be at least 1, got 0"),
    (A(start_line=-3), "start_line must be at least 1, got -3"),
    (A(start_line=1.5), "start_line must be a whole number, got 1.5"),
    (A(start_line="x"), 'start_line must be a whole number, got "x"'),
    (A(start_line=5, end_line=4), "end_line 4 is before start_line 5"),
    (A(start_line=5, end_line=301), f"end_line 301 {PAST_END}"),
    (A(start_line=400), f"start_line 400 {PAST_END}"),
    (A(start_line=5, duration_ms=99), f"{DURATION} 99"),
    (A(start_line=5, duration_ms=60001), f"{DURATION} 60001"),
    (A(start_line=5, member_key=""), "member_key must be a non-empty string"),
    (
        A(start_line=5, syntax_scope=[{"kind": "loop", "index_in_parent": 0}]),
        "syntax_scope step 1: kind must be one of",
    ),
    (
        A(start_line=5, syntax_scope=[{"kind": "for", "index_in_parent": -1}]),
        "syntax_scope step 1: index_in_parent must be a whole number",
    ),
    (A(start_line=5, syntax_scope="{"), "syntax_scope is not valid JSON"),
    (A(start_line=5, syntax_scope={"kind": "for"}), "syntax_scope must be a list"),
]


@pytest.mark.parametrize(("args", "error"), INVALID)
def test_invalid_argument_changes_nothing(
    nvim: Any, isolated_env: Path, args: dict[str, Any], error: str
) -> None:
    write_code(isolated_env, "code.txt")
    before = lua_helper(nvim, "windows.snapshot")
    res = nvim.exec_lua(REVEAL, args)
    assert error in res and not res.startswith("OK")
    assert (
        lua_helper(nvim, "windows.snapshot") == before
    )  # also: the file loaded for checking is gone again
    assert marks(nvim) == [] and peeks(nvim) == []


def test_non_table_and_internal_errors_never_throw(nvim: Any) -> None:
    assert (
        nvim.exec_lua("return require('sightline.reveal').reveal(nil)")
        == "reveal expects a table of arguments"
    )
    assert (
        nvim.exec_lua("return require('sightline.reveal').go_to_position('x')")
        == "go_to_position expects a table of arguments"
    )


def test_json_floats_and_nil_values_are_accepted(editor: Any) -> None:
    nvim = editor
    assert reveal(nvim, 14.0, 15.0, member_key=None) == "OK"  # type: ignore[arg-type]


def test_duration_from_config(nvim_factory: Callable[..., Any], isolated_env: Path) -> None:
    write_code(isolated_env, "code.txt")
    nvim = nvim_factory({"reveal": {"duration_ms": 150}})
    nvim.command("edit code.txt")
    assert reveal(nvim, 2) == "OK"
    assert marks(nvim)
    wait_for(lambda: gone(nvim), timeout=2, what="default duration from config")


def test_open_window_shows_file_in_editor_window(
    nvim_factory: Callable[..., Any], isolated_env: Path
) -> None:
    write_code(isolated_env, "code.txt")
    write_code(isolated_env, "other.txt", 20)
    nvim = nvim_factory({"reveal": {"open": "window"}})
    nvim.command("edit other.txt")
    jumps, alt = nvim.eval("getjumplist()"), nvim.eval("bufnr('#')")
    assert reveal(nvim, 150, 152) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "window"
    assert nvim.eval("expand('%:t')") == "code.txt" and nvim.eval("line('.')") == 150
    assert nvim.eval("line('w0') <= 150 && line('w$') >= 152") == 1
    assert nvim.eval("getjumplist()") == jumps and nvim.eval("bufnr('#')") == alt
    assert peeks(nvim) == []


def test_open_window_falls_back_to_peek_in_visual_mode(
    nvim_factory: Callable[..., Any], isolated_env: Path
) -> None:
    write_code(isolated_env, "code.txt")
    write_code(isolated_env, "other.txt", 20)
    nvim = nvim_factory({"reveal": {"open": "window"}})
    nvim.command("edit other.txt")
    enter_mode(nvim, "v")
    assert reveal(nvim, 150) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "peek"
    assert nvim.api.get_mode()["mode"] == "v" and nvim.eval("expand('%:t')") == "other.txt"


def test_peek_skips_sightline_windows(editor: Any) -> None:
    """Revealing from the pane: the peek goes over the editor window, not the pane."""
    nvim = editor
    nvim.command("botright vnew | let w:sightline_role = 'pane'")
    pane = nvim.api.get_current_win().handle
    assert reveal(nvim, 200, 201) == "OK"
    (p,) = peeks(nvim)
    assert p["config"]["win"] != pane
    assert nvim.exec_lua("return vim.w[...].sightline_role", p["config"]["win"]) is None


# --- a UI's view ---------------------------------------------------------------------------


class Screen:
    """A minimal ext_linegrid UI: the hl id of every cell of grid 1 (floats are composed in)."""

    def __init__(self, nvim: Any, width: int = 80, height: int = 24) -> None:
        self.nvim = nvim
        self.band = band_rgb(nvim)
        self.width, self.height = width, height
        self.cells = [[0] * width for _ in range(height)]
        self.attrs: dict[int, dict[str, Any]] = {0: {}}
        nvim.ui_attach(width, height, ext_linegrid=True, rgb=True)

    def _event(self, name: str, args: list[Any]) -> None:
        if name == "hl_attr_define":
            self.attrs[args[0]] = args[1]
        elif name == "grid_resize" and args[0] == 1:
            self.width, self.height = args[1], args[2]
            self.cells = [[0] * self.width for _ in range(self.height)]
        elif name == "grid_clear" and args[0] == 1:
            self.cells = [[0] * self.width for _ in range(self.height)]
        elif name == "grid_line" and args[0] == 1:
            row, col, hl = args[1], args[2], 0
            for cell in args[3]:
                if len(cell) > 1:
                    hl = cell[1]
                for _ in range(cell[2] if len(cell) > 2 else 1):
                    self.cells[row][col] = hl
                    col += 1
        elif name == "grid_scroll" and args[0] == 1:
            _, top, bot, left, right, rows, _cols = args
            src = [r[:] for r in self.cells]
            for r in range(top, bot):
                if top <= r + rows < bot:
                    self.cells[r][left:right] = src[r + rows][left:right]

    def pump_until(self, pred: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 10
        while not pred():
            assert time.monotonic() < deadline, f"screen never showed {what}"
            msg = self.nvim.next_message()
            if msg and msg[0] == "notification" and msg[1] == "redraw":
                for batch in msg[2]:
                    for args in batch[1:]:
                        self._event(batch[0], args)

    def band_rows(self) -> set[int]:
        return {
            r
            for r, row in enumerate(self.cells)
            if any(self.attrs.get(h, {}).get("background") == self.band for h in row)
        }


@pytest.mark.parametrize(
    ("start", "end", "rows"),
    [(5, 8, set(range(4, 8))), (7, 7, {6})],
)
def test_ui_sees_band_on_exactly_the_range_rows(
    nvim: Any, isolated_env: Path, start: int, end: int, rows: set[int]
) -> None:
    write_code(isolated_env, "code.txt")
    screen = Screen(nvim)
    nvim.command("edit code.txt")
    res = reveal(nvim, start, end, duration_ms=300)
    assert res == "OK"
    screen.pump_until(lambda: screen.band_rows() == rows, f"band on rows {rows}")
    # past end of line: the band reaches the last column of the window (line 7 is empty)
    assert all(screen.attrs[screen.cells[r][-1]].get("background") == screen.band for r in rows)
    screen.pump_until(lambda: not screen.band_rows(), "band gone")


def test_ui_sees_band_inside_the_peek(nvim: Any, isolated_env: Path) -> None:
    write_code(isolated_env, "code.txt")
    screen = Screen(nvim)
    nvim.command("edit code.txt")
    res = reveal(nvim, 200, 203, duration_ms=300)
    assert res == "OK"
    (p,) = peeks(nvim)
    top = p["config"]["row"] + 1  # below the border; the editor window starts at screen row 0
    expected = set(range(top, top + 4))
    screen.pump_until(lambda: screen.band_rows() == expected, f"band on peek rows {expected}")
    screen.pump_until(lambda: not screen.band_rows(), "band and peek gone")


# --- colours ---------------------------------------------------------------------------------


def test_colours_blend_over_normal_and_fall_back(nvim: Any) -> None:
    get = "return vim.api.nvim_get_hl(0, {name = ..., link = false})"
    nvim.exec_lua("require('sightline.reveal').setup_highlights()")
    assert nvim.exec_lua(get, "SightlineRevealBar")["fg"] == ACCENT
    band = nvim.exec_lua(get, "SightlineReveal")
    normal_bg = nvim.exec_lua(get, "Normal")["bg"]  # Neovim's default scheme has one
    assert band["bg"] == blend(ACCENT, normal_bg) and band["ctermbg"] == 53
    # no Normal background: assume black on a dark 'background'
    nvim.exec_lua(
        "vim.api.nvim_set_hl(0, 'Normal', {}); vim.cmd('hi clear SightlineReveal');"
        "require('sightline.reveal').setup_highlights()"
    )
    assert nvim.exec_lua(get, "SightlineReveal")["bg"] == 0x30141E
    # a light Normal background, re-applied on ColorScheme
    nvim.exec_lua(
        "vim.o.background = 'light'; vim.api.nvim_set_hl(0, 'Normal', {bg = 0xFFFFFF});"
        "vim.cmd('hi clear SightlineReveal'); require('sightline.reveal').setup_highlights()"
    )
    band = nvim.exec_lua(get, "SightlineReveal")
    assert band["bg"] == blend(ACCENT, 0xFFFFFF) and band["ctermbg"] == 225
    # a user's own definition wins (default = true)
    nvim.exec_lua(
        "vim.api.nvim_set_hl(0, 'SightlineReveal', {bg = 0x123456});"
        "require('sightline.reveal').setup_highlights()"
    )
    assert nvim.exec_lua(get, "SightlineReveal")["bg"] == 0x123456


# --- go_to_position --------------------------------------------------------------------------


def test_go_to_position_moves_and_selects(editor: Any) -> None:
    nvim = editor
    assert nvim.exec_lua(GOTO, {"file_path": "other.txt", "line": 4, "column": 3}) == "OK"
    assert nvim.eval("expand('%:t')") == "other.txt" and nvim.api.win_get_cursor(0) == [4, 2]
    assert (
        nvim.exec_lua(
            GOTO,
            {"file_path": "code.txt", "line": 20, "column": 2, "end_line": 22, "end_column": 4},
        )
        == "OK"
    )
    assert nvim.api.get_mode()["mode"] == "v"
    assert nvim.eval("getpos('v')[1:2]") == [20, 2] and nvim.api.win_get_cursor(0) == [22, 3]
    assert nvim.exec_lua(GOTO, {"file_path": "code.txt", "line": 30, "end_line": 31}) == "OK"
    assert nvim.api.get_mode()["mode"] == "V" and nvim.eval("getpos('v')[1]") == 30
    assert nvim.exec_lua("return vim.bo.buflisted") is True


def test_go_to_position_from_insert_mode(editor: Any) -> None:
    nvim = editor
    enter_mode(nvim, "i")
    cursor = nvim.api.win_get_cursor(0)
    # The user types in this very window: their cursor and mode stay (tests/nvim/test_focus.py).
    res = nvim.exec_lua(GOTO, {"file_path": "code.txt", "line": 40, "column": 5})
    assert res == (
        "OK (kept the focus and the cursor where they were (Insert mode in code.txt): "
        "gv there selects 40:5)"
    )
    assert nvim.api.get_mode()["mode"] == "i" and nvim.api.win_get_cursor(0) == cursor
    nvim.input("<Esc>gv")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "v" and nvim.api.win_get_cursor(0) == [40, 4])


def test_go_to_position_records_a_jump(editor: Any) -> None:
    nvim = editor
    assert nvim.exec_lua(GOTO, {"file_path": "code.txt", "line": 120}) == "OK"
    nvim.input("<C-o>")
    wait_for(lambda: nvim.api.win_get_cursor(0)[0] == 10)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"file_path": "code.txt"}, "line is required"),
        ({"file_path": "code.txt", "line": 0}, "line must be at least 1, got 0"),
        (
            {"file_path": "code.txt", "line": 999},
            "line 999 is past the end of code.txt (300 lines)",
        ),
        (
            {"file_path": "code.txt", "line": 2, "column": 99},
            "column 99 is past the end of line 2 of code.txt",
        ),
        ({"file_path": "code.txt", "line": 5, "end_line": 4}, "end_line 4 is before line 5"),
        (
            {"file_path": "code.txt", "line": 5, "column": 4, "end_column": 2},
            "end_column 2 is before column 4",
        ),
        ({"file_path": "missing.txt", "line": 1}, "file not found: missing.txt"),
    ],
)
def test_go_to_position_invalid(editor: Any, args: dict[str, Any], error: str) -> None:
    nvim = editor
    before = lua_helper(nvim, "windows.snapshot")
    res = nvim.exec_lua(GOTO, args)
    assert error in res
    assert lua_helper(nvim, "windows.snapshot") == before


# --- :Sightline reveal -----------------------------------------------------------------------


def test_command_parsing(editor: Any) -> None:
    nvim = editor
    cmd = "return {require('sightline.reveal').command(...)}"
    assert nvim.exec_lua(cmd, ["reveal", "code.txt", "14", "15"]) == [True, "OK"]
    assert_painted(nvim, nvim.api.get_current_buf().handle, 14, 15)
    assert nvim.exec_lua(cmd, ["code.txt", "16"]) == [True, "OK"]
    assert_painted(nvim, nvim.api.get_current_buf().handle, 16, 16)
    ok, msg = nvim.exec_lua(cmd, ["code.txt"])
    assert not ok and msg.startswith("usage:")
    ok, msg = nvim.exec_lua(cmd, ["code.txt", "x"])
    assert not ok and "start_line must be a whole number" in msg
    ok, msg = nvim.exec_lua(cmd, ["code.txt", "--member"])
    assert not ok and "--member needs a value" in msg
    ok, msg = nvim.exec_lua(cmd, ["code.txt", "--bogus", "1"])
    assert not ok and "unknown option --bogus" in msg
    ok, msg = nvim.exec_lua(cmd, ["code.txt", "--member", "nothing"])
    assert not ok and "nothing" in msg


def test_command_completion(editor: Any, isolated_env: Path) -> None:
    nvim = editor
    (isolated_env / "with space.txt").write_text("x\n")
    comp = "return require('sightline.reveal').complete(...)"
    assert nvim.exec_lua(comp, "co", "Sightline reveal co") == ["code.txt"]
    assert nvim.exec_lua(comp, "wi", "Sightline reveal wi") == ["with\\ space.txt"]
    assert nvim.exec_lua(comp, "--m", "Sightline reveal code.txt --m") == ["--member"]
    assert nvim.exec_lua(comp, "", "Sightline reveal code.txt --member ") == []
    assert nvim.exec_lua(comp, "1", "Sightline reveal code.txt 1") == []


# --- view edge cases -------------------------------------------------------------------------


def test_scroll_up_to_a_range_above_the_view(editor: Any) -> None:
    nvim = editor
    nvim.api.win_set_cursor(0, [150, 0])
    nvim.command("normal! zz")
    before = nvim.api.win_get_cursor(0)
    assert reveal(nvim, 135, 138) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "scrolled"
    assert nvim.api.win_get_cursor(0) == before
    assert nvim.eval("line('w0') <= 135 && line('w$') >= 150") == 1


def test_scrolloff_is_honoured(editor: Any) -> None:
    """With 'scrolloff' 8 the cursor (line 10) must stay 8 lines inside the view."""
    nvim = editor
    nvim.command("setlocal scrolloff=8")
    assert reveal(nvim, 22, 23) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "scrolled"
    assert nvim.eval("[line('w0'), line('.')]") == [2, 10]
    # without 'scrolloff' 24..25 would scroll; with it, the cursor would leave: peek
    assert reveal(nvim, 24, 25) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "peek"


def test_closed_fold_in_the_range_peeks(editor: Any) -> None:
    nvim = editor
    nvim.command("15,17fold")
    assert reveal(nvim, 14, 16) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "peek"
    assert nvim.eval("foldclosed(15)") == 15  # the user's fold stays closed


def test_range_visible_in_another_window_is_painted_there(editor: Any) -> None:
    nvim = editor
    nvim.command("wincmd l | edit code.txt | normal! 100Gzt")
    nvim.command("wincmd h")
    assert reveal(nvim, 105, 107) == "OK"
    assert nvim.exec_lua("return require('sightline.reveal').last.case") == "visible"
    assert nvim.eval("line('w0')") == 1  # the current window did not move


def test_peek_refused_in_the_command_line_window_still_answers(editor: Any) -> None:
    nvim = editor
    nvim.input("q:")
    wait_for(lambda: nvim.eval("getcmdwintype()") == ":")
    res = reveal(nvim, 200, 201)
    assert res.startswith("OK (could not open a peek:") or res == "OK"
    nvim.input("<C-c><C-c>")
