"""What the benchmarks share: a child Neovim with isolated dirs, polling, and keystroke →
screen latency with a UI attached (bench_pane.py and bench_acp.py measure it the same way)."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from tests import child as _child

ROOT = _child.ROOT
NVIM = _child.NVIM


def child_env(tmp: str, **extra: str) -> dict[str, str]:
    """Environment for a child Neovim: XDG dirs in tmp, plus `extra`."""
    env = {"SIGHTLINE_ROOT": str(ROOT), **extra}
    for name in ("DATA", "CONFIG", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = os.path.join(tmp, name.lower())
        os.makedirs(env[f"XDG_{name}_HOME"], exist_ok=True)
    return env


def child(tmp: str, config: dict[str, Any], *extra_argv: str, **extra_env: str) -> Any:
    """An embedded headless Neovim in tmp's XDG dirs whose init.lua calls setup(config),
    as the README says (tests/child.py)."""
    env = child_env(tmp, **extra_env)
    return _child.start(config, env, extra_argv=extra_argv, init_dir=env["XDG_CONFIG_HOME"])


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (read from /proc: children of each of its threads)."""
    out, todo = [], [pid]
    while todo:
        top = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{top}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{top}/task/{task}/children") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def close(nv: Any, timeout: float = 10.0) -> None:
    """Quit the child Neovim and wait until the processes it started (the core, an agent)
    are gone too: until then they may still write into the bench's temporary folder."""
    tree = descendants(int(nv.call("getpid")))
    nv.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_running(p) for p in tree):
        time.sleep(0.01)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie writes nothing
    except (OSError, IndexError):
        return False


def wait(pred: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.002)
    raise TimeoutError


def keystroke_latency(nv: Any, screen: Any, keys: int) -> list[float]:
    """Type `keys` characters in Insert mode in the current window, each timed from
    `nvim_input` to the redraw that shows it (ms); the line is cleared every 50 characters,
    untimed. The caller has attached `screen` (tests/screen.py) and started what loads
    Neovim meanwhile."""
    nv.command("startinsert")
    screen.wait_for(lambda s: s.mode == "insert", what="Insert mode")
    samples: list[float] = []
    typed = ""
    for k in range(keys):
        if len(typed) >= 50:  # a fresh line, not timed
            nv.input("<C-u>")
            screen.wait_for(lambda s, old=typed: not s.row(0).startswith(old), what="cleared")
            typed = ""
        char = "abcdefghijklmnopqrstuvwxyz"[k % 26]
        typed += char
        want = typed
        t0 = time.perf_counter()
        nv.input(char)
        screen.wait_for(lambda s, w=want: s.row(0).startswith(w), what=f"{want!r} typed")
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


LATENCY_TARGET_MS = 16.0


def latency_row(bench: str, samples: list[float], streaming: bool) -> dict[str, Any]:
    """The table's row for keystroke latencies: p50 and p99 against one frame (16 ms); not
    met when the load ended before the last key (the keys were then not all under load)."""
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    note = "" if streaming else ", the stream ended first"
    return {
        "bench": bench,
        "value": f"p50 {p50:.1f} ms · p99 {p99:.1f} ms{note}",
        "target": f"p99 ≤ {LATENCY_TARGET_MS:g} ms",
        "met": p99 <= LATENCY_TARGET_MS and streaming,
        "p50": p50,
        "p99": p99,
    }


def run_alone(bench: Callable[[], list[dict[str, Any]]]) -> None:
    """A bench module run by itself (`python -m tests.bench_x`): its rows, one per line."""
    import logging
    import sys

    logging.getLogger("asyncio").setLevel(logging.ERROR)  # pynvim child teardown noise
    for row in bench():
        mark = "✔" if row["met"] else "✘"
        sys.stdout.write(f"{row['bench']}  {row['value']}  {row['target']}  {mark}\n")
