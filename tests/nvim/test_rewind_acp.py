"""Checkpoints of an ACP agent that writes files itself, past the review gate: found by the
before/after content scan (a `.git/hooks` file and a same-size write with its mtime put back
included), and rewound like the gate's writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim
from tests.agent_util import idle, send, wait_core_pending
from tests.conftest import transcript


def test_files_an_acp_agent_wrote_itself_are_rewound_and_its_new_hook_deleted_after_a_yes(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    app, other = isolated_env / "app.py", isolated_env / "other.py"
    app.write_text("x = 1\n")
    other.write_text("untouched\n")
    hooks = isolated_env / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (isolated_env / ".gitignore").write_text("build/\n")
    (isolated_env / "build").mkdir()
    ignored = isolated_env / "build" / "out.txt"
    ignored.write_text("old\n")
    stamp = other.stat().st_mtime_ns
    turn: list[dict[str, Any]] = [
        {"disk_write": str(app), "content": "x = 2\n", "keep_mtime": True},
        {"disk_write": str(hooks / "pre-commit"), "content": "#!/bin/sh\nevil\n"},
        {"disk_write": str(ignored), "content": "new\n"},
        {"say": "done"},
    ]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "go")
    idle(nv)
    assert app.read_text() == "x = 2\n"
    nv.input(":Sightline rewind 1<CR>")
    st = wait_core_pending(nv)
    assert st["pending"] == "delete .git/hooks/pre-commit (created by the undone turns)?"
    nv.input(":Sightline accept<CR>")
    idle(nv)
    assert app.read_text() == "x = 1\n"
    assert ignored.read_text() == "old\n"
    assert not (hooks / "pre-commit").exists()
    assert other.stat().st_mtime_ns == stamp  # a file not restored is not touched
    shown = "\n".join(transcript(nv))
    assert "restored: app.py, build/out.txt" in shown
    assert "deleted: .git/hooks/pre-commit" in shown
    assert os.listdir(hooks) == []
