"""Issue 26: "a sandboxed `true` costs ≤ 20 ms over an unsandboxed one".

`true` run the way run_command runs it (tools/command.py `execute`: /bin/sh under the
watchdog of domain/spawn.py, output read, the group killed at its end), once in the sandbox
(bubblewrap, the default rules) and once without, interleaved so that the machine's load
falls on both alike; the row is the difference of the medians.

Not a test: `make bench` calls `bench()`. Alone: `python -m tests.bench_sandbox`.
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

from sightline.domain import sandbox  # noqa: E402
from sightline.tools.command import execute  # noqa: E402

Row = dict[str, Any]
TARGET_MS = 20.0


def _ms(ws: str, box: tuple[sandbox.SandboxConfig, sandbox.Status] | None) -> float:
    started = time.perf_counter()
    ran = execute("true", ws, 10.0, box=box)
    assert ran.code == 0, ran.output
    return (time.perf_counter() - started) * 1000


def bench(runs: int = 40) -> list[Row]:
    cfg = sandbox.SandboxConfig()
    status = sandbox.probe(cfg)
    if not status.sandboxed:
        return [
            {
                "bench": "sandbox: `true` sandboxed over unsandboxed",
                "value": f"not measured ({status.why})",
                "target": f"≤ {TARGET_MS:g} ms",
                "met": False,
            }
        ]
    bare: list[float] = []
    boxed: list[float] = []
    with tempfile.TemporaryDirectory() as ws:
        for _ in range(3):  # warm: the first runs page bwrap and sh in
            _ms(ws, None)
            _ms(ws, (cfg, status))
        for _ in range(runs):
            bare.append(_ms(ws, None))
            boxed.append(_ms(ws, (cfg, status)))
    over = statistics.median(boxed) - statistics.median(bare)
    load = os.getloadavg()[0]
    return [
        {
            "bench": f"sandbox: `true` sandboxed over unsandboxed (run_command's way, median of"
            f" {runs}, load {load:.1f})",
            "value": f"+{over:.1f} ms ({statistics.median(boxed):.1f} vs"
            f" {statistics.median(bare):.1f})",
            "target": f"≤ {TARGET_MS:g} ms",
            "met": over <= TARGET_MS,
        }
    ]


if __name__ == "__main__":
    for row in bench():
        sys.stdout.write(f"{row['bench']}: {row['value']} (target {row['target']})\n")
