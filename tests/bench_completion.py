"""Micro-benchmark of `@` completion over a synthetic 100 000-path workspace.

Not a test: `make bench` calls `bench()`, which returns one row per measure.
Run alone with `python -m tests.bench_completion` from the repository root.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from sightline.completion import CompletionSession, FileIndex, FileListCache

Row = dict[str, Any]

N_PATHS = 100_000
EXTENSIONS = [("browser-tools", "Browser helpers"), ("docs", "Project docs"), ("k8s", None)]
_WORDS = [
    *("app", "src", "lib", "test", "tests", "core", "util", "utils", "browser", "controller"),
    *("model", "view", "render", "engine", "parser", "lexer", "token", "config", "settings"),
    *("server", "client", "api", "http", "net", "io", "fs", "path", "index", "main", "module"),
    *("component", "widget", "layout", "style", "theme", "docs", "example", "build", "script"),
    *("tool", "cmd", "internal", "pkg", "vendor", "assets", "images", "data", "schema"),
    *("migration", "handler", "service", "router", "store", "state", "hooks", "Makefile"),
    *("README", "CHANGELOG", "fixtures", "e2e", "integration", "unit", "bench", "i18n", "locale"),
]
_EXTS = (".py", ".ts", ".js", ".go", ".rs", ".md", ".json", ".tsx", ".css", ".txt", ".lua", "")
# What a user types after `@`, one character at a time (common and rare first
# letters, path-like and camel-ish queries, a miss).
TYPED = [
    "browsercontroller",
    "srcutilparser",
    "e2eindex",
    "xyz",
    "readme",
    "tests/unit/api",
    "main.go",
    "zq",
    "StateStore",
    "hooks_router",
]


def synthetic_paths(n: int = N_PATHS, seed: int = 7) -> list[str]:
    """n distinct repository-like paths, 1-7 folders deep."""
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        depth = rng.randint(0, 6)
        folders = [rng.choice(_WORDS) + (str(rng.randint(0, 40)) if rng.random() < 0.3 else "")]
        folders += [rng.choice(_WORDS) for _ in range(depth)]
        stem = rng.choice(_WORDS)
        if rng.random() < 0.5:
            stem += rng.choice(("_", "-", "", ".")) + rng.choice(_WORDS)
        if rng.random() < 0.3:
            stem += str(rng.randint(0, 99))
        out.add("/".join([*folders, stem + rng.choice(_EXTS)]))
    return sorted(out)


def _timed(fn: Callable[..., object], *args: Any) -> float:
    """Milliseconds one call takes."""
    t = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t) * 1000


def _row(name: str, samples: list[float], target: str, limit_ms: float | None = None) -> Row:
    """One measure.  Keys for `make bench` (tests/bench.py): bench, value, target, met;
    and the raw numbers: name, median_ms, p95_ms, max_ms, samples."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    median = statistics.median(samples)
    return {
        "name": name,
        "median_ms": round(median, 2),
        "p95_ms": round(p95, 2),
        "max_ms": round(ordered[-1], 2),
        "samples": len(samples),
        "target": target,
        "bench": f"@ completion: {name}",
        "value": f"median {median:.1f} ms, p95 {p95:.1f} ms (n={len(samples)})",
        "met": limit_ms is None or p95 <= limit_ms,
    }


def _first_list(index: FileIndex) -> None:
    CompletionSession(index).complete("", EXTENSIONS)


def _cold_first_list(paths: list[str]) -> None:
    _first_list(FileIndex(paths))


def _typing(index: FileIndex, word: str) -> list[float]:
    """Type `word` after `@` one key at a time, then delete it again; ms per keystroke."""
    session = CompletionSession(index)
    session.complete("", EXTENSIONS)
    prefixes = [word[:i] for i in range(1, len(word) + 1)]
    prefixes += [word[:i] for i in range(len(word) - 1, 0, -1)]
    return [_timed(session.complete, q, EXTENSIONS) for q in prefixes]


def bench(n: int = N_PATHS, repeat: int = 5, workspace: str | None = None) -> list[Row]:
    """Rows: name, median_ms, p95_ms, max_ms, samples, target.

    With `workspace` (a folder of about n files), the cold first list is also
    measured through the real listing (git ls-files or the walk).
    """
    paths = synthetic_paths(n)
    index = FileIndex(paths).prepare()
    rows = [
        _row(f"index build ({n} paths)", [_timed(FileIndex, paths) for _ in range(repeat)], "info"),
        _row(
            "index prepare (background, after the swap)",
            [_timed(FileIndex(paths).prepare) for _ in range(repeat)],
            "info",
        ),
        _row(
            "first @ list, cold (index build + list)",
            [_timed(_cold_first_list, paths) for _ in range(repeat)],
            "p95 <= 300 ms",
            300,
        ),
        _row(
            "first @ list, warm index",
            [_timed(_first_list, index) for _ in range(repeat)],
            "p95 <= 300 ms",
            300,
        ),
    ]
    if workspace:
        rows.append(
            _row(
                "first @ list, cold, listing the workspace",
                [_listed_first_list(Path(workspace)) for _ in range(repeat)],
                "p95 <= 300 ms",
                300,
            )
        )
    keys = [ms for _ in range(repeat) for word in TYPED for ms in _typing(index, word)]
    rows.append(_row("keystroke, narrowed (typing and backspace)", keys, "p95 <= 15 ms", 15))
    fresh = [
        _timed(CompletionSession(index).complete, word, EXTENSIONS)
        for _ in range(repeat)
        for word in TYPED
    ]
    rows.append(_row("whole word pasted, fresh session", fresh, "info"))
    return rows


def _listed_first_list(workspace: Path) -> float:
    """ms from starting the listing to the first `@` list (the rest of the listing,
    e.g. git's untracked files, goes on in the background and is not counted)."""
    t = time.perf_counter()
    cache = FileListCache(workspace)
    cache.refresh_async()
    cache.index(wait=60)
    CompletionSession(cache).complete("", EXTENSIONS)
    elapsed = (time.perf_counter() - t) * 1000
    cache.wait_idle()
    return elapsed


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    for row in bench(workspace=args[0] if args else None):
        sys.stdout.write(
            f"{row['name']:<48} median {row['median_ms']:>8.2f} ms  p95 {row['p95_ms']:>8.2f} ms"
            f"  max {row['max_ms']:>8.2f} ms  (n={row['samples']}, target {row['target']})\n"
        )


if __name__ == "__main__":
    main()
