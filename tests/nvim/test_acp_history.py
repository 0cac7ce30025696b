"""The acp provider's prompt parts, history and resume, and its config."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.acp_util import acp_nvim, agent_cmd
from tests.agent_util import edit, idle, send
from tests.conftest import transcript, wait_for


def test_prompt_is_text_then_selection_then_mentions_as_embedded_resources(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("def f():\n    return 1\n")
    (isolated_env / "notes.md").write_text("remember\n")
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "ok"}]], caps={"embedded": True})
    buf = edit(nv, path)
    rng = {"buffer": buf, "start_row": 1, "start_col": 0, "end_row": 1, "end_col": 12}
    text = "fix this, see @notes.md"
    assert nv.exec_lua("return {require('sightline').send(...)}", text, rng) == [True]
    idle(nv)
    (prompt,) = log.entries("prompt")
    blocks = prompt["blocks"]
    assert blocks[0] == {"type": "text", "text": text}  # the visible text, unchanged
    assert blocks[1]["type"] == "text" and blocks[1]["text"].startswith("The selection: app.py")
    resource = blocks[2]
    assert resource["type"] == "resource"
    assert resource["resource"]["uri"] == (isolated_env / "notes.md").resolve().as_uri()
    assert resource["resource"]["text"] == "remember\n"
    assert "fix this, see @notes.md" in transcript(nv)


def test_without_embedded_context_a_mention_is_a_text_part(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "notes.md").write_text("remember\n")
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "ok"}]])
    send(nv, "see @notes.md")
    idle(nv)
    (prompt,) = log.entries("prompt")
    assert [b["type"] for b in prompt["blocks"]] == ["text", "text", "text"]
    assert prompt["blocks"][1]["text"] == '<file path="notes.md">\nremember\n</file>'


@pytest.mark.parametrize("load", [True, False])
def test_history_reopens_with_session_load_or_a_new_session(
    nvim_factory: Any, tmp_path: Path, load: bool
) -> None:
    turns: list[list[dict[str, Any]]] = [
        [
            {"say": "first answer"},
            {"tool": {"id": "t1", "title": "Look around", "kind": "read", "status": "completed"}},
        ],
        [{"say": "second answer"}],
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, turns, caps={"load": load})
    send(nv, "first")
    idle(nv)
    (new,) = log.entries("new_session")
    nv.command("Sightline restart")
    # The new core reopens the conversation from history, as :Sightline history would.
    shown = wait_for(lambda: (t := transcript(nv)) and "first answer" in t and t, 30, "reload")
    assert "first answer" in shown and "✔ Look around (done)" in shown
    res = nv.exec_lua("return {require('sightline').send(...)}", "second")
    assert res == [True], res
    idle(nv)
    shown = transcript(nv)
    assert "second answer" in shown and "REPLAYED" not in shown
    if load:
        (loaded,) = log.entries("load_session")
        assert loaded["session_id"].startswith("s-")
        assert len(log.entries("new_session")) == 1
    else:
        assert log.entries("load_session") == []
        assert len(log.entries("new_session")) == 2
        assert any("does not know the conversation above" in ln for ln in shown)
    assert new


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_agent_dies_with_the_core(nvim_factory: Any, tmp_path: Path) -> None:
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "hi"}]])
    send(nv, "first")
    idle(nv)
    (entry,) = log.entries("initialize")
    pid = int(entry["pid"])
    assert alive(pid)
    nv.command("Sightline restart")
    wait_for(lambda: not alive(pid), 30, "the old agent to exit")
    assert entry


def test_setup_validates_the_agent_in_lua(nvim_factory: Any, tmp_path: Path) -> None:
    cmd, _ = agent_cmd(tmp_path, [])
    nv = nvim_factory({"provider": {"name": "acp", "agent": {"cmd": cmd}}})
    bad = nv.exec_lua(
        "return {require('sightline.config').build({provider = {name = 'acp', agent = 'vim'}})}"
    )
    assert bad[0] is None and "provider.agent" in bad[1]
    ok = nv.exec_lua(
        "return {require('sightline.config').build({provider = {name = 'acp', agent = 'gemini'}})}"
    )
    assert ok[0]["provider"]["agent"] == "gemini"


def test_checkhealth_shows_the_agent(nvim_factory: Any, tmp_path: Path) -> None:
    cmd, _ = agent_cmd(tmp_path, [])
    nv = nvim_factory({"provider": {"name": "acp", "agent": {"cmd": cmd, "client_writes": True}}})
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "scripted-agent 9.9.9" in text
    assert "embeddedContext no" in text and "loadSession no" in text
    assert "Change with Agent: available" in text


def test_checkhealth_names_a_missing_agent(nvim_factory: Any, tmp_path: Path) -> None:
    nv = nvim_factory({"provider": {"name": "acp", "agent": "codex"}}, env={"PATH": str(tmp_path)})
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "ACP agent codex: not found" in text
    assert "npm install -g @zed-industries/codex-acp@0.16.0" in text
