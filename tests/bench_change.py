"""Issue 5's benchmark: accept → buffer changed for a replace_selection in a 10 MB buffer
whose selection moved (an edit above it) between the proposal and the accept.

Measured inside Neovim: from the moment decide('accept') is called to the on_lines callback
of the change, so RPC scheduling of the measuring client does not count, the core's does.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from tests.benchutil import child, wait  # noqa: E402
from tests.fakeapi import FakeAnthropic, text, tool_use  # noqa: E402
from tests.lua_helper import lua_helper  # noqa: E402

TARGET_MS = 50.0


def _state(nv: Any) -> str:
    return str(nv.exec_lua("return require('sightline').status().state"))


def bench(runs: int = 7) -> list[dict[str, Any]]:
    samples: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as server:
        provider = {"name": "anthropic", "base_url": server.base_url, "retries": 0}
        nv = child(tmp, {"provider": provider}, ANTHROPIC_API_KEY="bench-key")
        try:
            size = lua_helper(nv, "bench.change_setup")
            for i in range(runs):
                row = 150_000 + i * 10
                line = nv.api.buf_get_lines(0, row, row + 1, False)[0]
                server.script(tool_use("replace_selection", {"text": f"replaced {i}"}), text("ok"))
                rng = {
                    "buffer": 0,
                    "start_row": row,
                    "start_col": 0,
                    "end_row": row,
                    "end_col": len(line.encode()),
                }
                assert nv.exec_lua("return {require('sightline').send(...)}", "go", rng) == [True]
                wait(lambda: _state(nv) == "awaiting_decision")
                nv.api.buf_set_lines(0, 0, 0, False, ["moved by an edit above"])
                lua_helper(nv, "bench.change_accept")
                dt = wait(
                    lambda: nv.exec_lua("local b = _G.bench return b.t1 and (b.t1 - b.t0) / 1e6")
                )
                samples.append(float(dt))
                assert nv.api.buf_get_lines(0, row + 1, row + 2, False) == [f"replaced {i}"]
                wait(lambda: _state(nv) == "idle")
        finally:
            nv.exec_lua("require('sightline.host').shutdown()")
            nv.close()
    med = statistics.median(samples)
    return [
        {
            "bench": f"accept → buffer changed (replace_selection, moved, {size / 1e6:.1f} MB)",
            "value": f"{med:.1f} ms (median of {runs})",
            "target": f"≤ {TARGET_MS:g} ms",
            "met": med <= TARGET_MS,
        }
    ]


if __name__ == "__main__":
    for row in bench():
        sys.stdout.write(f"{row['bench']}: {row['value']} (target {row['target']})\n")
