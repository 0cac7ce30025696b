"""Benchmarks of `@` completion over a synthetic 100 000-path workspace.

Two kinds of rows: the ranking alone (CompletionSession in this process), and
end to end through the composer of a child Neovim (`bench_composer`): a real
tree of 100 000 files on disk, the core listing it in the background when
the composer opens, keys typed with `nvim_input`, and the time taken inside
Neovim from the key (`vim.on_key`) to the list handed to `complete()`
(`require('sightline.complete').last_list.at`).  That span holds the key's
insertion, TextChangedI/P, the RPC round trip to the core, ranking and
setting the menu; it leaves out drawing, which a headless Neovim does not do.

Not a test: `make bench` calls `bench()`, which returns one row per measure.
Run alone with `python -m tests.bench_completion` from the repository root.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from sightline.mentions.completion import CompletionSession, FileIndex, FileListCache
from tests.lua_helper import lua_helper

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
    return rows + bench_composer(n)


def tree_paths(n: int = N_PATHS, seed: int = 11) -> list[str]:
    """n paths for a tree on disk: the same words as synthetic_paths, about ten files a
    folder like a real repository (one folder per path would mean 300 000 folders)."""
    rng = random.Random(seed)
    folders = sorted({p.rsplit("/", 1)[0] for p in synthetic_paths(n // 10, seed)})
    out: set[str] = set()
    while len(out) < n:
        stem = rng.choice(_WORDS)
        if rng.random() < 0.5:
            stem += rng.choice(("_", "-", "", ".")) + rng.choice(_WORDS)
        if rng.random() < 0.3:
            stem += str(rng.randint(0, 99))
        out.add(f"{rng.choice(folders)}/{stem}{rng.choice(_EXTS[:-1])}")
    return sorted(out)


def make_tree(root: Path, paths: list[str]) -> None:
    """The files of `paths`, empty, under root (a few seconds for 100 000)."""
    made: set[str] = set()
    for rel in paths:
        folder = os.path.dirname(rel)
        if folder not in made:
            os.makedirs(root / folder, exist_ok=True)
            made.add(folder)
        os.close(os.open(root / rel, os.O_CREAT | os.O_WRONLY, 0o644))


def _short(token: str) -> str:
    return f"{len(token)}:{token[-20:]}" if len(token) > 200 else token


def _key_to_list(nv: Any, key: str, token: str, timeout: float = 10) -> tuple[float, float]:
    """(ms from typing `key` to the composer's list for `token` being handed to Neovim,
    the core's CPU ms for that list)."""
    before = lua_helper(nv, "bench.completion_last")[0]
    nv.input(key)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        key_at, list_at, listed, cpu_ms = lua_helper(nv, "bench.completion_last")
        if key_at > before and list_at > key_at and listed == _short(token):
            return float(list_at - key_at) / 1e6, float(cpu_ms)
        time.sleep(0.001)
    raise TimeoutError(f"no list for @{token} after typing {key!r}")


def _wait_listed(nv: Any, workspace: Path, timeout: float = 120) -> tuple[float, int]:
    """(seconds, files) until the core has listed the workspace completely."""
    t = time.perf_counter()
    warm = "return require('sightline.host').request('complete.warm', {workspace = ...})"
    while time.perf_counter() - t < timeout:
        res = nv.exec_lua(warm, str(workspace))
        if not res["listing"] and res["files"] is not None:
            return time.perf_counter() - t, int(res["files"])
        time.sleep(0.005)
    raise TimeoutError("the core did not finish listing the workspace")


def bench_composer(n: int = N_PATHS, repeat: int = 3) -> list[Row]:
    """End to end through the composer of a child Neovim (see the module docstring)."""
    from tests.benchutil import child

    # Not on /dev/shm, however much faster the files are made there: the core lists no
    # workspace under /dev (domain/workspace.py system_path), and the rows would time an
    # empty list.
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        make_tree(workspace, tree_paths(n))
        cold: list[float] = []
        first: list[float] = []
        keys: list[tuple[float, float]] = []
        listing: list[float] = []
        long_keys: list[tuple[float, float]] = []
        for _ in range(repeat):
            nv = child(tmp, {"provider": {"name": "echo"}})
            try:
                lua_helper(nv, "bench.completion_on_key")
                nv.command(f"cd {workspace}")
                nv.exec_lua("require('sightline.host').ensure()")
                nv.exec_lua("return require('sightline.host').request('core.ping')")
                # `@` right as the composer opens: the listing has only just started.
                nv.exec_lua("require('sightline').chat()")
                cold.append(_key_to_list(nv, "@", "")[0])
                seconds, files = _wait_listed(nv, workspace)
                listing.append(seconds * 1000)
                for word in TYPED:
                    nv.input("<C-e><C-u>")
                    first.append(_key_to_list(nv, "@", "")[0])
                    for i in range(1, len(word) + 1):
                        keys.append(_key_to_list(nv, _key(word[i - 1]), word[:i]))
                    for i in range(len(word) - 1, 0, -1):
                        keys.append(_key_to_list(nv, "<BS>", word[:i]))
                long_keys.extend(_long_token_keys(nv))
            finally:
                nv.exec_lua("require('sightline.host').shutdown()")
                nv.close()
    where = f"composer in Neovim, {files} files"
    load = os.getloadavg()[0]  # a shared machine's other work shows in every wall time
    return [
        _row(f"{where}: background listing (walk)", listing, "info"),
        _row(f"{where}: @ as the composer opens (listing running)", cold, "info"),
        _row(f"{where}: first @ list", first, "p95 <= 300 ms", 300),
        _row(
            f"{where}: keystroke (typing and backspace), load {load:.1f}",
            [k[0] for k in keys],
            "p95 <= 8 ms",
            8,
        ),
        _row(f"{where}: keystroke, the core's CPU time", [k[1] for k in keys], "info"),
        _row(
            f"{where}: keystroke on a 50 kB @ token, the core's CPU time",
            [k[1] for k in long_keys],
            "p95 <= 15 ms",
            15,
        ),
        _row(f"{where}: keystroke on a 50 kB @ token", [k[0] for k in long_keys], "info"),
        {
            "name": "machine load average (1 min) after the composer runs",
            "bench": f"@ completion: machine load average (1 min), {os.cpu_count()} CPUs",
            "value": f"{load:.1f}",
            "target": "info",
            "met": True,
        },
    ]


LONG_TOKEN = ("src/app/" * 6400)[:50_000]  # a 50 kB paste after `@`, path-like


def _long_token_keys(nv: Any) -> list[tuple[float, float]]:
    """Type on at the end of a pasted 50 kB `@` token, then delete again (issue 10: this
    froze Neovim for seconds a key)."""
    nv.input("<C-e><Esc>")
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    nv.api.buf_set_lines(buf, 0, -1, False, ["@" + LONG_TOKEN])
    nv.command("startinsert!")
    out = []
    token = LONG_TOKEN
    for char in "browser.py":
        token += char
        out.append(_key_to_list(nv, _key(char), token))
    for _ in range(5):
        token = token[:-1]
        out.append(_key_to_list(nv, "<BS>", token))
    nv.input("<C-e><C-u>")
    return out


def _key(char: str) -> str:
    return "<lt>" if char == "<" else char


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
        if "p95_ms" not in row:
            sys.stdout.write(f"{row['name']:<70} {row['value']}\n")
            continue
        sys.stdout.write(
            f"{row['name']:<70} median {row['median_ms']:>8.2f} ms  p95 {row['p95_ms']:>8.2f} ms"
            f"  max {row['max_ms']:>8.2f} ms  (n={row['samples']}, target {row['target']})\n"
        )


if __name__ == "__main__":
    main()
