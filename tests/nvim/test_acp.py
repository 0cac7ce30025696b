"""The acp provider end to end: a child Neovim, the real core, the scripted ACP agent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sightline.ui.transcript import THINKING_HEADER
from tests.acp_util import acp_nvim
from tests.agent_util import decide, edit, idle, lines, send, wait_pending
from tests.conftest import status, transcript, wait_for


def shown(nv: Any, text: str) -> list[str]:
    return list(
        wait_for(lambda: (t := transcript(nv)) and any(text in ln for ln in t) and t, 30, text)
    )


def test_stream_reaches_the_pane_and_the_session_gets_cwd_and_mcp(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("a = 1\nb = 2\n")
    turn: list[dict[str, Any]] = [
        {"think": "Let me look.\nAt the file."},
        {"say": "Hello from the agent", "chunks": 4},
        {
            "tool": {
                "id": "t1",
                "title": "Read app.py",
                "kind": "read",
                "locations": [["app.py", 2]],
            }
        },
        {"update": {"id": "t1", "status": "in_progress"}},
        {"update": {"id": "t1", "status": "completed"}},
        {"tool": {"id": "t2", "title": "Run tests", "kind": "execute", "status": "pending"}},
        {"update": {"id": "t2", "status": "failed"}},
        {"plan": [["look at app.py", "completed"], ["change b", "pending"]]},
        {"say": "All done."},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    win = nv.api.get_current_win()
    send(nv, "hi there")
    idle(nv)
    text = transcript(nv)
    assert "Hello from the agent" in text
    head = text.index(THINKING_HEADER)  # the built-in provider's folded thinking section
    assert text[head + 1 : head + 3] == ["Let me look.", "At the file."]
    # One status line per call, rewritten in place.
    assert [ln for ln in text if "Read app.py" in ln] == ["✔ Read app.py (done)"]
    assert "  ↳ app.py:2" in text
    assert "✗ Run tests (failed)" in text
    assert "▍Plan (1/2 done)" in text and "- [x] look at app.py" in text
    assert "All done." in text
    assert nv.api.get_current_win() == win  # a location is a chip, never a jump
    row = text.index("  ↳ app.py:2")
    chips = nv.exec_lua(
        "local b = require('sightline.ui.pane').buffers().transcript "
        "local ns = vim.api.nvim_create_namespace('sightline.chip') "
        "local row = ... return #vim.api.nvim_buf_get_extmarks(b, ns, {row, 0}, {row, -1}, {})",
        row,
    )
    assert chips == 1  # the location is a chip the user may follow
    (init,) = log.entries("initialize")
    fs = init["capabilities"]["fs"]
    assert fs == {"readTextFile": True, "writeTextFile": True}
    (new,) = log.entries("new_session")
    assert os.path.realpath(new["cwd"]) == os.path.realpath(isolated_env)
    (server,) = new["mcp_servers"]
    servername = nv.eval("v:servername")
    assert server["command"] == sys.executable
    assert server["args"][0] == "-c" and server["args"][2:] == ["--server", servername]
    # The server finds the package without PYTHONPATH, which agents may filter out.
    assert server["env"] == []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = [server["command"], *server["args"][:2], "--help"]
    done = subprocess.run(probe, env=env, cwd="/", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "sightline-mcp" in done.stdout, done.stderr
    (prompt,) = log.entries("prompt")
    assert prompt["blocks"] == [{"type": "text", "text": "hi there"}]
    assert status(nv)["model"] == "scripted-agent"  # its initialize answer names it


def test_a_write_is_a_proposal_accepted_as_one_undo_step(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    nv, log = acp_nvim(
        nvim_factory, tmp_path, [[{"write": str(path), "content": "a = 1\nb = 20\nc = 3\n"}]]
    )
    buf = edit(nv, path)
    tick = nv.api.buf_get_var(buf, "changedtick")
    send(nv, "change b")
    st = wait_pending(nv)
    assert st["pending"] == "edit app.py (+1 −1)"
    assert lines(nv, buf) == ["a = 1", "b = 2", "c = 3"]
    assert nv.api.buf_get_var(buf, "changedtick") == tick
    assert "+b = 20" in transcript(nv)
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["a = 1", "b = 20", "c = 3"]
    assert path.read_text() == "a = 1\nb = 20\nc = 3\n"  # saved: the buffer had no changes
    assert log.entries("write_result") == [{"kind": "write_result", "ok": True}]
    nv.command("undo")
    assert lines(nv, buf) == ["a = 1", "b = 2", "c = 3"]
    assert not any("changed on disk by the agent" in ln for ln in transcript(nv))


def test_a_rejected_write_tells_the_agent_and_changes_nothing(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x\n")
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"write": "app.py", "content": "y\n"}]])
    send(nv, "go")
    wait_pending(nv)
    decide(nv, "reject", "not like that")
    idle(nv)
    (res,) = log.entries("write_result")
    assert res["ok"] is False and "rejected by the user: not like that" in res["message"]
    assert path.read_text() == "x\n"


def test_reads_come_from_the_buffer_and_stay_in_the_workspace(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("on disk\nline 2\nline 3\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    turn: list[dict[str, Any]] = [
        {"read": "app.py"},
        {"read": "app.py", "line": 2, "limit": 1},
        {"read": str(secret)},
        {"read": "../secret.txt"},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    buf = edit(nv, path)
    nv.api.buf_set_lines(buf, 0, 1, False, ["unsaved edit"])
    send(nv, "read")
    idle(nv)
    results = [r["content"] for r in log.entries("read_result")]
    assert results == ["unsaved edit\nline 2\nline 3\n", "line 2\n"]
    errors = log.entries("read_error")
    assert len(errors) == 2 and all("outside the workspace" in e["message"] for e in errors)
    assert "top secret" not in "\n".join(transcript(nv))


def test_hostile_writes_are_refused(nvim_factory: Any, tmp_path: Path, isolated_env: Path) -> None:
    outside = tmp_path / "outside.txt"
    turn = [
        {"write": str(outside), "content": "pwned"},
        {"write": "../outside.txt", "content": "pwned"},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "go")
    idle(nv)
    results = log.entries("write_result")
    assert [r["ok"] for r in results] == [False, False]
    assert not outside.exists()
    assert any("✗ refused write" in ln for ln in transcript(nv))
