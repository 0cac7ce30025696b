"""`make bench`: the issues' performance targets, measured and printed as one table.

Medians and ratios, since this machine is shared and noisy. Not a test: nothing here
fails the build; the table says which targets are met.
"""

from __future__ import annotations

import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))
NVIM = str(Path(sys.executable).parent / "nvim")

from tests.benchutil import child, descendants, wait  # noqa: E402
from tests.lua_helper import lua_helper  # noqa: E402

Row = dict[str, Any]


def _startup(with_plugin: bool, log: Path) -> tuple[float, float]:
    """(total start-up ms, ms spent sourcing plugin/sightline.lua) of one headless start."""
    rtp = f"set rtp^={ROOT}" if with_plugin else "set rtp^=/nonexistent"
    log.unlink(missing_ok=True)
    subprocess.run(
        [
            NVIM,
            "--headless",
            "-n",
            "-i",
            "NONE",
            "--clean",
            "--cmd",
            rtp,
            "--cmd",
            "set loadplugins",
            "--startuptime",
            str(log),
            "+qa!",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    total, own = 0.0, 0.0
    for line in log.read_text().splitlines():
        if "NVIM STARTED" in line:
            total = float(line.split()[0])
        elif "plugin/sightline.lua" in line:
            own = float(line.split()[1])
    return total, own


def _startup_init(init: Path, log: Path) -> float:
    """Total start-up ms of one headless start with a user's init.lua."""
    log.unlink(missing_ok=True)
    subprocess.run(
        [
            NVIM,
            "--headless",
            "-n",
            "-i",
            "NONE",
            "-u",
            str(init),
            "--startuptime",
            str(log),
            "+qa!",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    for line in log.read_text().splitlines():
        if "NVIM STARTED" in line:
            return float(line.split()[0])
    return 0.0


def bench_startup_setup(runs: int = 21) -> list[Row]:
    """The README's init.lua: the plugin on the runtimepath and setup({}), against the same
    init.lua without the plugin (a runtimepath entry that does not exist)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "startup.log"
        with_setup, bare = Path(tmp) / "with.lua", Path(tmp) / "bare.lua"
        with_setup.write_text(
            f"vim.opt.runtimepath:prepend({str(ROOT)!r})\nrequire('sightline').setup({{}})\n"
        )
        bare.write_text("vim.opt.runtimepath:prepend('/nonexistent')\n")
        totals: tuple[list[float], list[float]] = ([], [])
        for _ in range(runs):  # interleaved, so drift on a shared machine hits both alike
            totals[0].append(_startup_init(with_setup, log))
            totals[1].append(_startup_init(bare, log))
    added = statistics.median(totals[0]) - statistics.median(totals[1])
    return [
        {
            "bench": f"start-up: init.lua with setup({{}}) − without the plugin (median of {runs})",
            "value": f"{added:+.3f} ms",
            "target": "≤ 1 ms",
            "met": added <= 1.0,
        }
    ]


def bench_startup(runs: int = 21) -> list[Row]:
    with_total, without_total, own = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "startup.log"
        for _ in range(runs):  # interleaved, so drift on a shared machine hits both alike
            total, sourcing = _startup(True, log)
            with_total.append(total)
            own.append(sourcing)
            without_total.append(_startup(False, log)[0])
        nv = child(tmp, {"provider": {"name": "echo"}})
        try:
            started = descendants(nv.call("getpid"))
        finally:
            nv.close()
    med_own = statistics.median(own)
    added = statistics.median(with_total) - statistics.median(without_total)
    return [
        {
            "bench": f"start-up: sourcing plugin/sightline.lua (median of {runs})",
            "value": f"{med_own:.3f} ms",
            "target": "≤ 1 ms",
            "met": med_own <= 1.0,
        },
        {
            "bench": f"start-up: total with − without the plugin (median of {runs})",
            "value": f"{added:+.3f} ms",
            "target": "≤ 1 ms",
            "met": added <= 1.0,
        },
        {
            "bench": "start-up: processes started",
            "value": str(len(started)),
            "target": "0",
            "met": not started,
        },
    ]


def _chat_once(tmp: str) -> float:
    """ms from :Sightline chat on a cold core to a typed character landing in the composer."""
    nv = child(tmp, {"provider": {"name": "echo"}})
    try:
        t0 = time.perf_counter()
        nv.command("Sightline chat")
        nv.input("x")
        buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
        wait(lambda: nv.api.buf_get_lines(buf, 0, -1, False) == ["x"])
        elapsed = (time.perf_counter() - t0) * 1000
        wait(lambda: nv.exec_lua("return require('sightline').status().state") == "idle")
        return elapsed
    finally:
        nv.exec_lua("require('sightline.host').shutdown()")
        nv.close()


def bench_chat_cold(runs: int = 11) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        samples = [_chat_once(tmp) for _ in range(runs)]
    med = statistics.median(samples)
    return [
        {
            "bench": ":Sightline chat → typed char in composer, cold core (median of 11)",
            "value": f"{med:.1f} ms",
            "target": "≤ 300 ms",
            "met": med <= 300,
        }
    ]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def bench_memory(turns: int = 200) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        nv = child(tmp, {"provider": {"name": "anthropic"}})
        try:
            ping = "return require('sightline.host').request('core.ping')"
            wait(lambda: nv.exec_lua(ping)["sdk_loaded"])
            pid = nv.exec_lua(ping)["pid"]
            rows.append(
                {
                    "bench": "core RSS after the SDK import",
                    "value": f"{_rss_mb(pid):.1f} MB",
                    "target": "(reported)",
                    "met": True,
                }
            )
        finally:
            nv.exec_lua("require('sightline.host').shutdown()")
            nv.close()
        nv = child(tmp, {"provider": {"name": "echo"}})
        try:
            rss = []
            for i in range(turns):
                nv.exec_lua("assert(require('sightline').send(...))", f"turn {i} " + "x" * 200)
                wait(lambda: nv.exec_lua("return require('sightline').status().state") == "idle")
                if i in (19, turns - 1):
                    rss.append(
                        _rss_mb(
                            nv.exec_lua("return require('sightline.host').request('core.ping').pid")
                        )
                    )
            per_turn_kb = (rss[1] - rss[0]) * 1024 / (turns - 20)
            rows.append(
                {
                    "bench": f"core RSS, echo conversation: turn 20 → turn {turns}",
                    "value": f"{rss[0]:.1f} → {rss[1]:.1f} MB ({per_turn_kb:.1f} KB/turn)",
                    "target": "≤ 8 KB/turn (the history it holds)",
                    "met": per_turn_kb <= 8,
                }
            )
        finally:
            nv.exec_lua("require('sightline.host').shutdown()")
            nv.close()
    return rows


def bench_stop_during_grep(runs: int = 7) -> list[Row]:
    """Issue 10: `:Sightline stop` → idle, and a synchronous request's round trip, while the
    model's grep runs a catastrophic pattern (`(=+)+y`: 40 `=`, then many shorter lines that
    keep the matcher busy for seconds)."""
    from tests.agent_util import API_KEY
    from tests.fakeapi import FakeAnthropic, tool_use
    from tests.processes import processes_with

    worker = str(ROOT / "python" / "sightline" / "tools" / "grep_worker.py")
    stops, requests = [], []
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as server:
        ws = Path(tmp, "ws")
        ws.mkdir()
        (ws / "log.txt").write_text("=" * 40 + "\n" + ("=" * 14 + "\n") * 3000)
        provider = {"name": "anthropic", "base_url": server.base_url, "retries": 0}
        nv = child(tmp, {"provider": provider}, "--cmd", f"cd {ws}", ANTHROPIC_API_KEY=API_KEY)
        try:
            for i in range(runs):
                server.script(tool_use("grep", {"pattern": "(=+)+y"}))
                nv.exec_lua("assert(require('sightline').send(...))", f"grep {i}")
                wait(lambda: processes_with(worker))
                requests.append(max(lua_helper(nv, "bench.status") for _ in range(5)))
                stops.append(lua_helper(nv, "bench.stop"))
                wait(lambda: not processes_with(worker))
        finally:
            nv.exec_lua("require('sightline.host').shutdown()")
            nv.close()
    stop, request = statistics.median(stops), statistics.median(requests)
    return [
        {
            "bench": f":Sightline stop → idle during a catastrophic grep (median of {runs})",
            "value": f"{stop:.1f} ms (max {max(stops):.1f})",
            "target": "≤ 200 ms",
            "met": stop <= 200,
        },
        {
            "bench": f"agent.status round trip during that grep (slowest of 5, median of {runs})",
            "value": f"{request:.1f} ms (max {max(requests):.1f})",
            "target": "≤ 100 ms",
            "met": request <= 100,
        },
    ]


def collect() -> list[Row]:
    rows = bench_startup() + bench_startup_setup() + bench_chat_cold() + bench_memory()
    rows += bench_stop_during_grep()
    for name in (
        "bench_reveal",
        "bench_completion",
        "bench_slash",
        "bench_change",
        "bench_provider",
        "bench_inline",
        "bench_acp",
        "bench_port",
        "bench_pane",
        "bench_chats",
        "bench_stream",
        "bench_history",
        "bench_checkpoints",
        "bench_images",
        "bench_sandbox",
    ):
        try:
            module = importlib.import_module(f"tests.{name}")
        except ModuleNotFoundError:
            continue
        rows += module.bench()
    return rows


def main() -> None:
    import logging

    logging.getLogger("asyncio").setLevel(logging.ERROR)  # pynvim child teardown noise
    rows = collect()
    width = max(len(r["bench"]) for r in rows)
    vwidth = max(len(str(r["value"])) for r in rows)
    out = [f"{'benchmark':<{width}}  {'measured':<{vwidth}}  target", "-" * (width + vwidth + 30)]
    for r in rows:
        mark = "✔" if r["met"] else "✘"
        out.append(f"{r['bench']:<{width}}  {r['value']!s:<{vwidth}}  {r['target']}  {mark}")
    import os

    loads = " ".join(f"{v:.1f}" for v in os.getloadavg())
    out.append(f"machine load average (1/5/15 min) at the end: {loads} on {os.cpu_count()} CPUs")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
