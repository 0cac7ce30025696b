"""The pane's bar and the composer's hint: laid out by priority, each part whole or absent.

Covers issue 19 items 4 (the bar by priority, at every width from 30 columns), 12 (the names
in the bar) and 15 (the composer's hint at the default width; `:Sightline plan on` and
`:Sightline model X` confirmed with the pane closed).

The rule is held by a property test of the bar's layout (any width, any state, parsed by an
oracle that knows only what the user should see), then through the real pane on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import narrator
from tests.acp_util import acp_nvim
from tests.agent_util import TURN_TIMEOUT_S, claude, idle, send, wait_pending
from tests.conftest import status, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, hold, text, tool_use
from tests.lua_helper import lua_helper
from tests.screen import Screen

__all__ = ["fake_api"]

SEP = " · "
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
Cells = Callable[[list[str]], list[int]]  # display cells of texts, as Neovim counts them


# -- the oracle: what a bar may show --------------------------------------------------------


def visible(bar: str) -> str:
    """What a statusline string draws: highlight items and the truncation mark removed, `%%`
    read as `%`. Any other `%` item would be an unescaped name read as a statusline item."""
    out, i = [], 0
    while i < len(bar):
        c = bar[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        nxt = bar[i + 1]
        if nxt == "%":
            out.append("%")
            i += 2
        elif nxt == "#":
            i = bar.index("#", i + 2) + 1
        elif nxt in "*<":
            i += 2
        else:
            raise AssertionError(f"a statusline item %{nxt} in the bar {bar!r}")
    return "".join(out)


@dataclass
class Part:
    forms: list[str]
    words: bool = False  # may be shortened to its leading words and " …" (then it ends the bar)

    def shortened(self) -> list[str]:
        words = self.forms[0].split()
        return [" ".join(words[:n]) + " …" for n in range(len(words), 0, -1)]

    def narrowest(self, cells: Cells) -> int:
        return min(cells([*self.forms, *(self.shortened()[-1:] if self.words else [])]))


def review_keys(st_: dict[str, Any]) -> tuple[str, list[str]]:
    if st_.get("pending_kind") == "command":
        return "ga allow · gr deny", ["ga allow  gr deny"]
    return "ga accept · gr reject · gd compare", [
        "ga accept  gr reject  gd compare",
        "ga accept  gr reject",
    ]


def expected_parts(st_: dict[str, Any], view: dict[str, Any]) -> list[Part]:
    """The bar's parts in the order of priority, as the user should read them."""
    parts: list[Part] = []
    if st_["state"] == "working":
        spin = SPINNER[view.get("frame", 1) - 1]
        elapsed = view.get("elapsed")
        parts.append(
            Part([f"{spin} working {elapsed:.1f}s" if elapsed is not None else f"{spin} working"])
        )
    elif st_["state"] == "awaiting_decision":
        parts.append(Part(["● " + st_["pending"]], words=True))
        parts.append(Part([review_keys(st_)[0]]))
    else:
        parts.append(Part(["sightline"]))
    if view.get("notice"):
        parts.append(Part(["✗ " + view["notice"]["text"]], words=True))
    if st_.get("mode") == "plan":
        parts.append(Part(["plan mode"]))
    if st_.get("autoaccept"):
        parts.append(Part(["autoaccept"]))
    provider, model = st_.get("provider", ""), st_.get("model", "")
    if not model or model == provider:
        parts.append(Part([provider]))
    elif not provider:
        parts.append(Part([model]))
    else:
        parts.append(Part([f"{provider} {model}", model]))
    usage = st_.get("usage_parts") or {}
    if usage.get("cost"):
        parts.append(Part([usage["cost"]]))
    tokens = usage.get("tokens") or []
    if tokens:
        parts.append(Part([SEP.join(tokens[:n]) for n in range(len(tokens), 0, -1)]))
    return [p for p in parts if p.forms[0]]


def parse(shown: str, parts: list[Part], start: int = 0) -> list[tuple[int, str, bool]] | None:
    """`shown` as forms of `parts` in their order, joined by SEP: [(index, form, shortened)]."""
    if shown == "":
        return []
    for i in range(start, len(parts)):
        options = [(f, False) for f in parts[i].forms]
        options += [(f, True) for f in parts[i].shortened()] if parts[i].words else []
        for form, cut in options:
            if shown == form:
                return [(i, form, cut)]
            if not cut and shown.startswith(form + SEP):
                rest = parse(shown[len(form) + len(SEP) :], parts, i + 1)
                if rest is not None:
                    return [(i, form, cut), *rest]
    return None


def check_line(shown: str, parts: list[Part], width: int, cells: Cells) -> list[int]:
    """`shown` is whole parts in order, fits `width`, and leaves out or narrows a part only
    when it would not fit; returns the indices of the parts shown."""
    laid = parse(shown, parts)
    assert laid is not None, f"{shown!r} is not whole parts in order of {parts}"
    [used] = cells([shown])
    assert used <= width, (shown, width)
    at = [i for i, _, _ in laid]
    cut = next((i for i, _, c in laid if c), len(parts))
    # Nothing left out that would have fitted (before a part shortened to the room left).
    for i, part in enumerate(parts[:cut]):
        if i not in at:
            room = width - used - (len(SEP) if laid else 0)
            assert part.narrowest(cells) > room, (shown, part, width)
    # A part is shown narrower than it could be only when the wider form would not fit.
    for i, form, _ in laid:
        wider = parts[i].forms[: parts[i].forms.index(form)] if form in parts[i].forms else []
        for other in wider:
            [a, b] = cells([form, other])
            assert used - a + b > width, (shown, form, other, width)
    return at


def check_bar(
    st_: dict[str, Any], width: int, view: dict[str, Any], top: str, keys: str, cells: Cells
) -> None:
    parts = expected_parts(st_, view)
    shown, below = visible(top), visible(keys)
    at = check_line(shown, parts, width, cells)
    assert at and at[0] == 0, f"the state does not lead: {shown!r}"
    if st_["state"] == "awaiting_decision":
        top_keys, own = review_keys(st_)
        in_top = any(parts[i].forms == [top_keys] for i in at)
        assert in_top != (below != ""), (shown, below)  # the keys in one bar, never both
        assert below in ("", *own)
        assert cells([below])[0] <= width
    else:
        assert below == ""


# -- the property: any width from 30 to 200, any state --------------------------------------

_NAME_CHARS = st.sampled_from([*"abcxyz0129-_./:%", "é", "名", "😀", "ｍ"])
_NAME = st.text(_NAME_CHARS, min_size=1, max_size=40)
_WORD = st.text(_NAME_CHARS, min_size=1, max_size=24)
_PENDING = st.builds(
    lambda kind, words, count: (f"{count} of 3: " if count else "") + f"{kind} {' '.join(words)}",
    st.sampled_from(["edit", "create", "run:", "permission:"]),
    st.lists(_WORD, min_size=1, max_size=5),
    st.sampled_from([0, 1, 2]),
)
_COUNT = st.integers(0, 3_000_000)
_STATUS = st.fixed_dictionaries(
    {
        "state": st.sampled_from(["stopped", "idle", "working", "awaiting_decision"]),
        "provider": st.sampled_from(["anthropic", "openai", "openrouter", "echo", "acp", ""]),
        "model": st.one_of(st.sampled_from(["", "echo", "claude-sonnet-4-5"]), _NAME),
        "mode": st.sampled_from(["normal", "plan"]),
        "autoaccept": st.booleans(),
        "pending": _PENDING,
        "pending_kind": st.sampled_from(["edit", "command"]),
        "usage_parts": st.fixed_dictionaries(
            {
                "cost": st.one_of(st.none(), st.floats(0, 500).map(narrator.format_cost)),
                "tokens": st.lists(_COUNT, max_size=3).map(
                    lambda ns: [
                        f"{n} {w}" for n, w in zip(ns, ["in", "out", "cached"], strict=False)
                    ]
                ),
            }
        ),
    }
)
_VIEW = st.fixed_dictionaries(
    {"frame": st.integers(1, 10)},
    optional={
        # Never a tie at the tenth: LuaJIT rounds 1.25 up where Python rounds it to even,
        # and this property is about the layout, not the rounding.
        "elapsed": st.integers(0, 50_000).map(lambda n: n / 10 + 0.04),
        "notice": st.fixed_dictionaries(
            {"text": st.lists(_WORD, min_size=1, max_size=8).map(" ".join)}
        ),
    },
)


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(_STATUS, st.integers(30, 200), _VIEW), min_size=1, max_size=8))
def test_any_bar_at_any_width_is_whole_parts_in_priority_order(
    nvim: Any, cases: list[tuple[dict[str, Any], int, dict[str, Any]]]
) -> None:
    got = lua_helper(nvim, "bar.layout", [list(c) for c in cases])

    def cells(texts: list[str]) -> list[int]:
        return list(lua_helper(nvim, "bar.cells", texts))

    for (st_, width, view), (top, keys) in zip(cases, got, strict=True):
        check_bar(st_, width, view, top, keys, cells)


# -- through the real pane, on screen -------------------------------------------------------


def pane_wins(nv: Any) -> dict[str, int]:
    return dict(lua_helper(nv, "windows.pane_roles"))


def bar_in(nv: Any, lines: list[str], role: str = "transcript") -> str:
    """The cells of a pane window's bar row (its first row, when it has a bar) in `lines`."""
    win = pane_wins(nv)[role]
    if nv.api.win_get_option(win, "winbar") == "":
        return ""
    row, col = nv.call("win_screenpos", win)
    width = nv.api.win_get_width(win)
    return str(lines[row - 1][col - 1 : col - 1 + width].rstrip())


def bar_on_screen(nv: Any, screen: Screen, role: str = "transcript") -> str:
    return bar_in(nv, screen.lines(), role)


def status_and_frame(nv: Any, screen: Screen) -> tuple[dict[str, Any], list[str]]:
    """The status the bar is drawn from and the frame drawn from it, read together: a status
    read apart from the screen may be one the screen shows a frame later, or showed before."""
    st_, lines = screen.read_with_frame(nv, "return require('sightline.host').status()")
    return dict(st_), lines


def cells_in(nv: Any) -> Cells:
    return lambda texts: list(lua_helper(nv, "bar.cells", texts))


def on_screen_status(nv: Any) -> dict[str, Any]:
    return dict(nv.exec_lua("return require('sightline.host').status()"))


@pytest.mark.parametrize("columns", [80, 160])
def test_the_bar_on_screen_is_whole_parts_and_shows_the_cost_at_160_columns(
    nvim_factory: Any,
    screen_factory: Any,
    fake_api: FakeAnthropic,
    isolated_env: Path,
    columns: int,
) -> None:
    (isolated_env / "app.py").write_text("x = 1\n")
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, columns, 30)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")
    width = nv.api.win_get_width(pane_wins(nv)["transcript"])

    def check(view: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
        # The status and the frame drawn from it, read together; the spinner's frame and
        # elapsed time are read off that frame (they tick on their own).
        st_, lines = status_and_frame(nv, screen)
        shown = bar_in(nv, lines)
        if view is None:
            view = {}
            if st_["state"] == "working":
                view["elapsed"] = float(shown.split(" working ")[1].split("s")[0])
                view["frame"] = SPINNER.index(shown[0]) + 1
        keys = bar_in(nv, lines, "composer") if st_["state"] == "awaiting_decision" else ""
        check_bar(st_, width, view, shown, keys, cells_in(nv))
        return st_, shown

    # A turn that streams: one token count (the conversation's), never two.
    fake_api.script(hold(after_events=4, of=text("slow reply " * 20)))
    nv.input("hello<C-s>")
    wait_for(fake_api.holding.is_set, TURN_TIMEOUT_S, "the held stream")
    screen.wait_for(lambda s: " working " in bar_on_screen(nv, s), what="the spinner")
    st_, shown = check()
    assert st_["state"] == "working"
    assert shown.count(" in") <= 1, shown
    fake_api.release()
    idle(nv)

    # Idle: at the default width of a 160-column terminal the cost shows, whole.
    cost = on_screen_status(nv)["usage_parts"]["cost"]
    assert cost and cost.startswith("$")
    if columns == 160:
        screen.wait_for(lambda s: cost in bar_on_screen(nv, s).split(SEP), what=cost)
    _, shown = check({})
    assert "<" not in shown and ">" not in shown  # nothing cut by Neovim either

    # The review bar: what waits and its keys, whole.
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    fake_api.script(tool_use("propose_edit", edit), text("done"))
    nv.input("change it<C-s>")
    wait_pending(nv)
    screen.wait_text("gr reject")
    assert check({})[0]["state"] == "awaiting_decision"
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    nv.input("ga")
    idle(nv)


def test_a_window_resized_by_hand_lays_its_bar_out_again(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 140, 30)
    fake_api.script(text("hi"))
    nv.input(":Sightline chat<CR>hello<C-s>")
    idle(nv)
    screen.wait_for(lambda s: " in" in bar_on_screen(nv, s), what="the tokens in the bar")
    nv.input("<Esc><C-w>k:vertical resize 31<CR>")
    win = pane_wins(nv)["transcript"]
    wait_for(lambda: nv.api.win_get_width(win) == 31, what="the narrower pane")
    screen.wait_for(lambda s: "$" not in bar_on_screen(nv, s), what="the bar laid out again")
    st_, lines = status_and_frame(nv, screen)
    check_bar(st_, 31, {}, bar_in(nv, lines), "", cells_in(nv))


# -- item 12: the names in the bar ----------------------------------------------------------


def test_the_bar_names_echo_once_and_names_the_provider_before_the_core_starts(
    nvim: Any, screen: Screen
) -> None:
    # What the bar says at the moment the pane opens, before the core has said anything.
    first = nvim.exec_lua(
        "vim.cmd('Sightline') "
        "local b = require('sightline.ui.pane').buffers().transcript "
        "local named = require('sightline.host').status().provider "
        "return {vim.wo[vim.fn.bufwinid(b)].winbar, named or false}"
    )
    assert first[1] is False  # the core has named no provider yet
    assert visible(first[0]) == "sightline · echo"
    nvim.input("hi<C-s>")  # the pane opened with the composer in Insert mode
    screen.wait_text("echo: hi")
    idle(nvim)
    _, lines = status_and_frame(nvim, screen)  # the frame drawn once idle, not one before
    assert bar_in(nvim, lines) == "sightline · echo"  # not "echo echo"


def test_an_acp_agent_is_named_by_its_initialize_answer(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    nv, _log = acp_nvim(nvim_factory, tmp_path, [[{"say": "hello"}]])
    screen = screen_factory(nv, 160, 30)
    nv.input(":Sightline<CR>")
    screen.wait_for(lambda s: bar_on_screen(nv, s) != "", what="the bar")
    assert bar_on_screen(nv, screen) == "sightline · acp"  # its own command: no name yet
    send(nv, "hi")
    idle(nv)
    screen.wait_for(
        lambda s: bar_on_screen(nv, s).startswith("sightline · acp scripted-agent"),
        what="the agent's name",
    )
    assert "python" not in bar_on_screen(nv, screen)
    assert status(nv)["model"] == "scripted-agent"


# -- item 15: the composer's hint, the switches confirmed -----------------------------------

HINT = [
    Part(["Ask the agent"], words=True),
    Part(["<C-s> sends"]),
    Part(["@ mentions a file", "@ mentions"]),
    Part(["<CR> sends in Normal mode"]),
]


@pytest.mark.parametrize("columns", [80, 160, 200])
def test_the_composer_hint_is_whole_parts_at_the_default_width(
    nvim_factory: Any, screen_factory: Any, columns: int
) -> None:
    nv = nvim_factory({"provider": {"name": "echo"}})
    screen = screen_factory(nv, columns, 24)
    nv.input(":Sightline chat<CR>")
    screen.wait_text("Ask the agent")
    win = pane_wins(nv)["composer"]
    row, col = nv.call("win_screenpos", win)
    width = nv.api.win_get_width(win)
    shown = screen.lines()[row - 1][col - 1 : col - 1 + width].rstrip()
    at = check_line(shown, HINT, width, cells_in(nv))
    assert at == list(range(len(at))), shown  # the leading parts, none skipped
    if columns == 200:
        assert shown == SEP.join(p.forms[0] for p in HINT)  # wide enough: all of it


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        (":Sightline plan on<CR>", "sightline: plan mode on"),
        (":Sightline autoaccept on<CR>", "sightline: autoaccept on"),
        (
            ":Sightline model claude-haiku-4-5<CR>",
            "sightline: model claude-haiku-4-5 from the next",
        ),
    ],
)
def test_a_switch_with_the_pane_closed_is_confirmed_in_one_line(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic, typed: str, said: str
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 100, 24)
    nv.input(typed)
    row, _ = screen.wait_text(said, timeout=TURN_TIMEOUT_S)
    assert row == 23  # the message line: one line, no Press-ENTER prompt
    assert screen.find("Press ENTER") is None
    assert pane_wins(nv) == {}  # nothing opened to say it
