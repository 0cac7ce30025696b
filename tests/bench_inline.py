"""Drawing an edit proposal inline: 1 000 hunks (changes, deletions, additions) in a 4 000-line
buffer, with a UI attached, timed inside Neovim from the core's call to the redraw done.
Target: median ≤ 50 ms. The hunks are computed once in Python beforehand (not timed here:
the core does that before the proposal is shown).

Run alone: python -m tests.bench_inline (or through `make bench`)."""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from sightline.domain import diff  # noqa: E402
from tests.lua_helper import lua_helper  # noqa: E402

HUNKS = 1000
RUNS = 15
TARGET_MS = 50.0


def texts() -> tuple[str, str]:
    """Before and after with HUNKS hunks, each separated by unchanged lines."""
    before, after = [], []
    for i in range(HUNKS):
        kept = [f"    kept line {i}.{k} = compute({i}, {k})" for k in range(3)]
        old = f"    value_{i} = old_value({i})"
        before += [*kept, old]
        after += kept
        if i % 3 == 0:
            after.append(f"    value_{i} = new_value({i})  # changed")
        elif i % 3 == 1:
            pass  # deleted
        else:
            after += [old, f"    extra_{i} = added({i})"]
    return "\n".join(before) + "\n", "\n".join(after) + "\n"


def bench() -> list[dict[str, Any]]:
    from tests import child
    from tests.screen import Screen

    before, after = texts()
    hunks = diff.hunks(before, after)
    assert len(hunks) == HUNKS, len(hunks)
    spec: dict[str, Any] = {"id": 1, "path": "big.py", "hunks": [h.as_data() for h in hunks]}
    times: list[float] = []
    with tempfile.TemporaryDirectory() as ws:
        path = Path(ws, "big.py")
        path.write_text(before)
        nvim = child.start({}, extra_argv=("--cmd", f"cd {ws}"))
        screen = Screen.attach(nvim, 120, 40)
        try:
            nvim.command("edit big.py | setlocal number")
            spec["buffer"] = nvim.current.buffer.handle
            for _ in range(3):  # warm up: module loads, highlight groups
                lua_helper(nvim, "bench.inline_timed", spec)
            times = [float(lua_helper(nvim, "bench.inline_timed", spec)) for _ in range(RUNS)]
        finally:
            screen.close()
            nvim.close()
    med = statistics.median(times)
    return [
        {
            "bench": f"inline diff of a {HUNKS}-hunk proposal drawn (UI attached)",
            "value": f"{med:.1f} ms median (max {max(times):.1f} ms)",
            "target": f"≤ {TARGET_MS:g} ms",
            "met": med <= TARGET_MS,
            "name": "inline_draw",
            "median": med,
        }
    ]


def main() -> None:
    for row in bench():
        mark = "✔" if row["met"] else "✘"
        sys.stdout.write(f"{row['bench']}: {row['value']}  ({row['target']}) {mark}\n")


if __name__ == "__main__":
    main()
