"""Issue 14: "A 100 000-token conversation opens and scrolls without lag".

A conversation of at least 100 000 tokens (tests/longconv.py: turns of Markdown with code
blocks, tool calls and their output, edit proposals as diffs) is in the history store; in a
child Neovim with a UI attached (tests/screen.py) the user types `:Sightline history`, picks
it (`1<CR>` in the default picker), and

* open: from that `<CR>` to the screen showing the conversation's last words (a fresh
  Neovim and core each run, as when a user reopens yesterday's conversation);
* scroll: in the transcript window, `gg`, `<C-d>` down the page, `G`, `<C-u>` back up, each
  key timed from `nvim_input` to the first redraw whose transcript rows differ from the rows
  before it (the frame that shows the scroll; Markdown scrolled into view is rendered then).

Not a test: `make bench` calls `bench()`. Alone: `python -m tests.bench_history`.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from tests import longconv  # noqa: E402
from tests.benchutil import child, run_alone  # noqa: E402
from tests.screen import Screen  # noqa: E402

Row = dict[str, Any]
TOKENS = 100_000
WIDTH, HEIGHT = 160, 50
OPEN_TARGET_MS = 200.0
FRAME_MS = 16.0


def _pane_rows(screen: Screen) -> list[str]:
    """The transcript's rows: the right-hand part of the screen, without the command line."""
    col = WIDTH - int(WIDTH * 0.4)
    return [line[col:] for line in screen.lines()[:-1]]


def reopen(tmp: str, tokens: int = TOKENS) -> tuple[Any, Screen, int, int]:
    """A fresh Neovim with a UI, the long conversation in its history, reopened the way a
    user does: (nvim, screen, turns, ms from the picker's <CR> to the last words shown)."""
    ws = Path(tmp, "ws")
    ws.mkdir(exist_ok=True)
    nv = child(tmp, {"provider": {"name": "echo"}}, "--cmd", f"cd {ws}")
    store = Path(tmp, "data", "sightline", "history")
    for old in store.glob("*.jsonl"):
        old.unlink()
    _, turns, _ = longconv.write(store, os.path.realpath(ws), tokens)
    screen = Screen.attach(nv, WIDTH, HEIGHT)
    nv.input(":Sightline history<CR>")
    screen.wait_text("sightline conversations", timeout=30)  # the picker, newest first
    t0 = time.perf_counter()
    nv.input("<CR>")
    screen.wait_text(longconv.last_words(turns - 1), timeout=60)
    return nv, screen, turns, round((time.perf_counter() - t0) * 1000)


CPU_LUA = "return os.clock() * 1000"  # Neovim's CPU time (ms): what a key cost it, not the wait


def _timed(nv: Any, screen: Screen, key: str) -> tuple[float, float]:
    """(wall ms from the key to the frame that shows it, Neovim's CPU ms meanwhile)."""
    before = _pane_rows(screen)
    cpu = float(nv.exec_lua(CPU_LUA))
    t0 = time.perf_counter()
    nv.input(key)
    screen.wait_for(lambda s: _pane_rows(s) != before, what=f"{key} scrolled")
    wall = (time.perf_counter() - t0) * 1000
    return wall, float(nv.exec_lua(CPU_LUA)) - cpu


def trips(
    nv: Any, screen: Screen, top: str, bottom: str, rounds: int = 2, pages: int = 20
) -> list[tuple[float, float]]:
    """`rounds` trips through the current window: gg, <C-d>…, G, <C-u>…, timed per key."""
    samples: list[tuple[float, float]] = []
    for _ in range(rounds):
        samples.append(_timed(nv, screen, "gg"))
        screen.wait_text(top)
        samples += [_timed(nv, screen, "<C-d>") for _ in range(pages)]
        samples.append(_timed(nv, screen, "G"))
        screen.wait_text(bottom)
        samples += [_timed(nv, screen, "<C-u>") for _ in range(pages)]
    return samples


def scroll(nv: Any, screen: Screen, turns: int) -> list[tuple[float, float]]:
    """Trips through the reopened transcript, from its window."""
    nv.input("<Esc><C-w>k")
    screen.wait_for(lambda s: s.mode == "normal", what="Normal mode in the transcript")
    win = nv.exec_lua("return vim.fn.bufname(vim.api.nvim_get_current_buf())")
    assert win == "sightline://transcript", win
    return trips(nv, screen, longconv.first_words(0), longconv.last_words(turns - 1))


def plain(nv: Any, screen: Screen, lines: int) -> list[tuple[float, float]]:
    """The same trips through a plain buffer of as many lines in the same place: the floor
    this machine and this harness give a scroll right now."""
    nv.command("1wincmd w | botright vnew")  # from the editor's window: its options, not the pane's
    text = [f"plain line {i}" for i in range(lines)]
    nv.api.buf_set_lines(0, 0, -1, False, text)
    return trips(nv, screen, text[0], text[-1])


def _p(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def _close(nv: Any, screen: Screen) -> None:
    screen.close()
    nv.exec_lua("require('sightline.host').shutdown()")
    nv.close()


def bench(runs: int = 5) -> list[Row]:
    opens: list[float] = []
    keys: list[tuple[float, float]] = []
    floor: list[tuple[float, float]] = []
    turns = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            nv, screen, turns, ms = reopen(tmp)
            try:
                opens.append(ms)
                if i == 0:  # the trips through it: once, in the first Neovim
                    keys = scroll(nv, screen, turns)
                    lines = nv.exec_lua("return vim.api.nvim_buf_line_count(0)")
                    floor = plain(nv, screen, lines)
            finally:
                _close(nv, screen)
    p50, p99 = _p([wall for wall, _ in keys])
    c50, c99 = _p([cpu for _, cpu in keys])
    f50, f99 = _p([wall for wall, _ in floor])
    med = statistics.median(opens)
    load = os.getloadavg()[0]
    return [
        {
            "bench": f"history: {TOKENS // 1000}k-token conversation ({turns} turns) reopened →"
            f" shown (median of {runs}, load {load:.1f})",
            "value": f"{med:.0f} ms (max {max(opens):.0f})",
            "target": f"≤ {OPEN_TARGET_MS:g} ms",
            "met": med <= OPEN_TARGET_MS,
        },
        {
            "bench": f"history: scrolling it, gg/<C-d>/G/<C-u> → screen ({len(keys)} keys)",
            "value": f"p50 {p50:.1f} ms · p99 {p99:.1f} ms (Neovim CPU p50 {c50:.1f} ·"
            f" p99 {c99:.1f}; a plain buffer here now: p50 {f50:.1f} · p99 {f99:.1f})",
            "target": f"p50, p99 ≤ {FRAME_MS:g} ms",
            "met": p99 <= FRAME_MS,
        },
    ]


if __name__ == "__main__":
    run_alone(bench)
