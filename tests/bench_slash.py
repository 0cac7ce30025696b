"""Benchmarks of `/` completion through the composer of a child Neovim, with 500 prompt
files on disk (the three formats and the user's folder, each with front matter).

Measured as the `@` rows are (bench_completion.py): from the key (`vim.on_key`) to the
list handed to `complete()`.  The first `/` reads every prompt file (nothing is read
before it); later keys narrow.

Not a test: `make bench` calls `bench()`.  Alone: `python -m tests.bench_slash`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from tests.bench_completion import Row, _key, _key_to_list, _row
from tests.lua_helper import lua_helper

N_PROMPTS = 500
TYPED = ["review", "explain", "fixtest", "zz", "gen-docs-3"]
_WORDS = ("review", "explain", "fix", "test", "gen", "docs", "refactor", "plan", "commit")


def make_prompts(workspace: Path, config: Path, n: int = N_PROMPTS) -> None:
    """n prompt files spread over the four folders, as a large library looks."""
    folders = [
        (workspace / ".claude" / "commands", ".md"),
        (workspace / ".github" / "prompts", ".prompt.md"),
        (workspace / ".sightline" / "prompts", ".md"),
        (config / "nvim" / "sightline" / "prompts", ".md"),
    ]
    for folder, _ in folders:
        folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        folder, suffix = folders[i % len(folders)]
        name = f"{_WORDS[i % len(_WORDS)]}-{_WORDS[(i // 9) % len(_WORDS)]}-{i}"
        (folder / f"{name}{suffix}").write_text(
            f"---\ndescription: {name.replace('-', ' ')} for the team\n"
            f"argument-hint: <file> [focus]\nmodel: some-model\n---\n"
            f"Do {name} on $ARGUMENTS.\n\n" + "Steps:\n" * 40
        )


def bench(repeat: int = 3) -> list[Row]:
    from tests.benchutil import child

    first: list[float] = []
    first_cpu: list[float] = []
    keys: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        config = Path(tmp) / "config"  # the child's XDG_CONFIG_HOME (benchutil.child_env)
        workspace.mkdir()
        make_prompts(workspace, config)
        for _ in range(repeat):
            nv = child(tmp, {"provider": {"name": "echo"}})
            try:
                lua_helper(nv, "bench.completion_on_key")
                nv.command(f"cd {workspace}")
                nv.exec_lua("require('sightline.host').ensure()")
                nv.exec_lua("return require('sightline.host').request('core.ping')")
                nv.exec_lua("require('sightline').chat()")
                # The first `/` of this core: every prompt file is read now.
                wall, cpu = _key_to_list(nv, "/", "")
                first.append(wall)
                first_cpu.append(cpu)
                # The files it did not show are read next, on a worker (well under 0.5 s):
                # the keystrokes are timed once that is done, as the `@` rows are timed
                # once the listing is.
                time.sleep(1.0)
                for word in TYPED:
                    nv.input("<C-e><C-u>")
                    _key_to_list(nv, "/", "")
                    for i in range(1, len(word) + 1):
                        keys.append(_key_to_list(nv, _key(word[i - 1]), word[:i]))
                    for i in range(len(word) - 1, 0, -1):
                        keys.append(_key_to_list(nv, "<BS>", word[:i]))
            finally:
                nv.exec_lua("require('sightline.host').shutdown()")
                nv.close()
    where = f"composer in Neovim, {N_PROMPTS} prompt files"
    load = os.getloadavg()[0]  # a shared machine's other work shows in every wall time
    rows = [
        _row(f"{where}: first / list, load {load:.1f}", first, "p95 <= 30 ms", 30),
        _row(f"{where}: first / list, the core's CPU time", first_cpu, "info"),
        _row(
            f"{where}: keystroke (typing and backspace), load {load:.1f}",
            [k[0] for k in keys],
            "p95 <= 8 ms",
            8,
        ),
        _row(f"{where}: keystroke, the core's CPU time", [k[1] for k in keys], "info"),
    ]
    for row in rows:
        row["bench"] = row["bench"].replace("@ completion", "/ completion")
    return rows


def main() -> None:
    for row in bench():
        sys.stdout.write(f"{row['bench']:<80} {row['value']}  (target {row['target']})\n")


if __name__ == "__main__":
    main()
