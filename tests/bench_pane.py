"""Benchmarks of the pane while a reply streams (issue 14, item 5).

Two measures:

* the cost of one streamed delta at transcript lengths 100, 10 000 and 100 000 lines, on
  both sides: the core's `Transcript.append_text` + `take_delta` (in this process) and the
  pane's `require('sightline.ui.pane').apply(delta)` inside a child Neovim with the pane open
  (timed there, so the RPC is left out). The transcript is prefilled through Transcript
  (user messages with Markdown, replies, folded command output), the same reply then
  streams at each length: the ratio of the medians must stay flat. On a shared, noisy
  machine: the lengths take turns in small batches (drift and other load hit all alike),
  and each side counts CPU time, not wall time (the core: this thread's, time.thread_time;
  the pane: Neovim's, os.clock), so time spent waiting for a CPU is left out;
* with a UI attached (tests/screen.py), keystroke-to-screen latency in an editor buffer
  while a 5 000-token reply streams into a transcript of 10 000 lines: a timer inside
  Neovim applies one delta every 2 ms (harsher than the core, whose pushes are 8 ms apart
  at least), and each typed character is timed from `nvim_input` to the redraw that
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

from sightline.ui.transcript import Transcript  # noqa: E402
from tests.benchutil import child, keystroke_latency, latency_row, run_alone  # noqa: E402
from tests.lua_helper import lua_helper  # noqa: E402

Row = dict[str, Any]
LENGTHS = (100, 10_000, 100_000)
DELTAS = 600  # streamed deltas timed at each length
BATCH = 5  # deltas in a row at one length before the next length's turn
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
    """`count` deltas of a reply streaming into t, and the core's CPU ms for each."""
    deltas, costs = [], []
    for k in range(offset, offset + count):
        t0 = time.thread_time_ns()
        t.append_text(token(k))
        delta = t.take_delta()
        costs.append((time.thread_time_ns() - t0) / 1e6)
        assert delta is not None
        deltas.append(delta)
    return deltas, costs


def _flat(rows: list[Row], side: str, medians: dict[int, float]) -> None:
    ratio = medians[LENGTHS[-1]] / max(medians[LENGTHS[0]], 1e-9)
    shown = " · ".join(f"{n}: {medians[n] * 1000:.0f} µs" for n in LENGTHS)
    rows.append(
        {
            "bench": f"{side}: CPU per streamed delta at 100/10k/100k lines (median of"
            f" {DELTAS}, interleaved)",
            "value": f"{shown} (ratio {ratio:.2f})",
            "target": "ratio ≤ 1.5",
            "met": ratio <= 1.5,
        }
    )


def bench_delta_cost() -> list[Row]:
    transcripts = {n: prefilled(n) for n in LENGTHS}
    core_ms: dict[int, list[float]] = {n: [] for n in LENGTHS}
    pane_ms: dict[int, list[float]] = {n: [] for n in LENGTHS}
    with tempfile.TemporaryDirectory() as tmp:
        children: dict[int, Any] = {}
        try:
            for n, t in transcripts.items():
                nv = children[n] = child(tmp, {"provider": {"name": "echo"}})
                nv.exec_lua("require('sightline.ui.pane').show()")
                t.add_user("go on")
                nv.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
            for r in range(DELTAS // BATCH):
                order = LENGTHS[r % 3 :] + LENGTHS[: r % 3]  # no length always first
                for n in order:
                    deltas, costs = stream(transcripts[n], BATCH, r * BATCH)
                    core_ms[n] += costs
                    pane_ms[n] += lua_helper(children[n], "bench.pane_apply", deltas)
        finally:
            for nv in children.values():
                nv.close()
    core = {n: statistics.median(v) for n, v in core_ms.items()}
    pane = {n: statistics.median(v) for n, v in pane_ms.items()}
    rows: list[Row] = []
    _flat(rows, "core (append_text + take_delta, thread CPU)", core)
    _flat(rows, "pane (pane.apply, Neovim CPU)", pane)
    return rows


def bench_typing(keys: int = 300, tokens: int = 5000) -> list[Row]:
    from tests.screen import Screen

    with tempfile.TemporaryDirectory() as tmp:
        nv = child(tmp, {"provider": {"name": "echo"}})
        screen = None
        try:
            screen = Screen.attach(nv, 120, 40)
            nv.exec_lua("require('sightline.ui.pane').show()")
            t = prefilled(10_000)
            t.add_user("go on")
            nv.exec_lua("require('sightline.ui.pane').apply(...)", t.full())
            deltas, _ = stream(t, tokens)
            lua_helper(nv, "bench.pane_stream", deltas)
            samples = keystroke_latency(nv, screen, keys)
            streaming = not nv.exec_lua("return _G.bench_stream_done")
        finally:
            if screen is not None:
                screen.close()
            nv.close()
    bench = f"keystroke → screen in a buffer, {tokens}-token reply streaming into 10k lines"
    return [latency_row(f"{bench} ({keys} keys)", samples, streaming)]


def bench() -> list[Row]:
    return bench_delta_cost() + bench_typing()


if __name__ == "__main__":
    run_alone(bench)
