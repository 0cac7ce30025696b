"""Benchmarks of the pane while a reply streams (issue 14, item 5).

Two measures:

* the cost of one streamed delta at transcript lengths 100, 10 000 and 100 000 lines, on
  both sides: the core's `Transcript.append_text` + `take_delta` (in this process) and the
  pane's `require('sightline.pane').apply(delta)` inside a child Neovim with the pane open
  (timed there with vim.uv.hrtime, so the RPC is left out). The transcript is prefilled
  through Transcript (user messages with Markdown, replies, folded command output), the
  same reply then streams at each length: the ratio of the medians must stay flat;
* with a UI attached (tests/screen.py), keystroke-to-screen latency in an editor buffer
  while a 5 000-token reply streams into a transcript of 10 000 lines: a timer inside
  Neovim applies one delta every 2 ms (harsher than the core, which coalesces its pushes
  every 30 ms), and each typed character is timed from `nvim_input` to the redraw that
  shows it.

Not a test: `make bench` calls `bench()`. Alone: `python -m tests.bench_pane`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from sightline.transcript import Transcript  # noqa: E402
from tests.benchutil import child  # noqa: E402
from tests.lua_helper import lua_helper  # noqa: E402

Row = dict[str, Any]
LENGTHS = (100, 10_000, 100_000)
DELTAS = 300  # streamed deltas timed at each length
WORDS = ("the", "**pane**", "never", "slows", "`typing`", "while", "a", "reply", "streams")


def prefilled(n: int) -> Transcript:
    """A transcript of at least n lines: turns of Markdown prose, a fence and command output."""
    t = Transcript()
    i = 0
    while len(t.lines) < n:
        t.add_user(f"question {i} about `src/mod{i}.py` and **this**")
        t.append_text(f"Answer {i}:\n\n- one\n- two\n\n```lua\nlocal x = {i}\n```\n")
        t.end_reply()
        t.add_output("\n".join(f"out {k}" for k in range(12)))
        i += 1
    return t


def token(k: int) -> str:
    """The k-th streamed token: words, a new line now and then, a new paragraph rarely."""
    word = WORDS[k % len(WORDS)] + " "
    if k % 50 == 49:
        return word + "\n\n"
    if k % 12 == 11:
        return word + "\n"
    return word


def stream(t: Transcript, count: int, offset: int = 0) -> tuple[list[dict[str, Any]], list[float]]:
    """`count` deltas of a reply streaming into t, and the core's ms for each."""
    deltas, costs = [], []
    for k in range(offset, offset + count):
        t0 = time.perf_counter()
        t.append_text(token(k))
        delta = t.take_delta()
        costs.append((time.perf_counter() - t0) * 1000)
        assert delta is not None
        deltas.append(delta)
    return deltas, costs


def _flat(rows: list[Row], side: str, medians: dict[int, float]) -> None:
    ratio = medians[LENGTHS[-1]] / max(medians[LENGTHS[0]], 1e-9)
    shown = " · ".join(f"{n}: {medians[n] * 1000:.0f} µs" for n in LENGTHS)
    rows.append(
        {
            "bench": f"{side}: cost per streamed delta at 100/10k/100k lines (median of {DELTAS})",
            "value": f"{shown} (ratio {ratio:.2f})",
            "target": "ratio ≤ 1.5",
            "met": ratio <= 1.5,
        }
    )


def bench_delta_cost() -> list[Row]:
    core: dict[int, float] = {}
    pane: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in LENGTHS:
            nv = child(tmp, {"provider": {"name": "echo"}})
            try:
                nv.exec_lua("require('sightline.pane').show()")
                t = prefilled(n)
                t.add_user("go on")
                nv.exec_lua("require('sightline.pane').apply(...)", t.full())
                deltas, costs = stream(t, DELTAS)
                core[n] = statistics.median(costs)
                pane[n] = statistics.median(lua_helper(nv, "bench.pane_apply", deltas))
            finally:
                nv.close()
    rows: list[Row] = []
    _flat(rows, "core (append_text + take_delta)", core)
    _flat(rows, "pane (pane.apply in Neovim)", pane)
    return rows


def bench_typing(keys: int = 300, tokens: int = 5000) -> list[Row]:
    from tests.screen import Screen

    with tempfile.TemporaryDirectory() as tmp:
        nv = child(tmp, {"provider": {"name": "echo"}})
        screen = None
        try:
            screen = Screen.attach(nv, 120, 40)
            nv.exec_lua("require('sightline.pane').show()")
            t = prefilled(10_000)
            t.add_user("go on")
            nv.exec_lua("require('sightline.pane').apply(...)", t.full())
            deltas, _ = stream(t, tokens)
            nv.command("startinsert")
            screen.wait_for(lambda s: s.mode == "insert", what="Insert mode")
            lua_helper(nv, "bench.pane_stream", deltas)
            samples: list[float] = []
            typed = ""
            for k in range(keys):
                if len(typed) >= 50:  # a fresh line, not timed
                    nv.input("<C-u>")

                    def cleared(s: Screen, old: str = typed) -> bool:
                        return not s.row(0).startswith(old)

                    screen.wait_for(cleared, what="cleared")
                    typed = ""
                char = "abcdefghijklmnopqrstuvwxyz"[k % 26]
                typed += char
                want = typed
                t0 = time.perf_counter()
                nv.input(char)

                def shown(s: Screen, w: str = want) -> bool:
                    return s.row(0).startswith(w)

                screen.wait_for(shown, what=f"{want!r} typed")
                samples.append((time.perf_counter() - t0) * 1000)
            streaming = not nv.exec_lua("return _G.bench_stream_done")
        finally:
            if screen is not None:
                screen.close()
            nv.close()
    samples.sort()
    p50 = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    note = "" if streaming else ", the stream ended first"
    return [
        {
            "bench": f"keystroke → screen in a buffer, {tokens}-token reply streaming into"
            f" 10k lines ({keys} keys)",
            "value": f"p50 {p50:.1f} ms · p99 {p99:.1f} ms{note}",
            "target": "p99 ≤ 16 ms",
            "met": p99 <= 16 and streaming,
        }
    ]


def bench() -> list[Row]:
    return bench_delta_cost() + bench_typing()


if __name__ == "__main__":
    import logging

    logging.getLogger("asyncio").setLevel(logging.ERROR)
    for row in bench():
        mark = "✔" if row["met"] else "✘"
        sys.stdout.write(f"{row['bench']}  {row['value']}  {row['target']}  {mark}\n")
