"""The tool list the model is sent, the read tools, and tools the turn does not have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import claude, edit, idle, send, tool_names, tool_results
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, reply, text, tool_use
from tests.tool_policy import expected

__all__ = ["fake_api"]


def test_request_tools_follow_the_policy_table_in_normal_and_plan_mode(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    send(nv, "normal turn")
    idle(nv)
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    assert status(nv)["mode"] == "plan"
    send(nv, "plan turn")
    idle(nv)
    normal, plan = tool_names(fake_api, 0), tool_names(fake_api, 1)
    # No skill in this workspace: load_skill is not offered.
    assert set(normal) == expected(0, skills=False) and len(normal) == len(set(normal))
    assert set(plan) == expected(1, skills=False) and len(plan) == len(set(plan))
    assert {"propose_edit", "run_command"} <= set(normal)
    assert "update_plan" in plan and "propose_edit" not in plan
    # Every tool is sent with its schema; the system prompt says plan mode.
    body = fake_api.requests[1].body
    assert all(t["input_schema"]["type"] == "object" for t in body["tools"])
    assert "plan mode" in body["system"][0]["text"]


def test_read_file_sees_unsaved_buffer_text_and_disk_files(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "open.py").write_text("saved = 1\n")
    (isolated_env / "closed.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, isolated_env / "open.py")
    nv.api.buf_set_lines(buf, 0, -1, False, ["unsaved = 2"])
    fake_api.script(
        reply(
            tool_use("read_file", {"path": "open.py"}),
            tool_use("read_file", {"path": "closed.txt", "start_line": 3, "end_line": 4}),
            tool_use("read_file", {"path": "missing.txt"}),
        ),
        text("ok"),
    )
    send(nv)
    idle(nv)
    opened, closed, missing = tool_results(fake_api, 1)
    assert "unsaved = 2" in opened["content"] and "saved = 1" not in opened["content"]
    assert "unsaved changes" in opened["content"]
    assert closed["content"].splitlines()[1:] == ["     3\tline 3", "     4\tline 4"]
    assert missing["is_error"] and "no such file" in missing["content"]
    # Reading loads nothing into the editor.
    assert nv.call("bufexists", str(isolated_env / "closed.txt")) == 0


def test_long_file_is_cut_with_a_note_saying_how_to_read_on(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "long.txt").write_text("".join(f"{i}\n" for i in range(5000)))
    nv = claude(nvim_factory, fake_api)
    fake_api.script(tool_use("read_file", {"path": "long.txt"}), text("ok"))
    send(nv)
    idle(nv)
    (result,) = tool_results(fake_api, 1)
    assert "read on with start_line=2001" in result["content"]
    assert len(result["content"].splitlines()) == 2002


def test_confinement_escapes_are_refused(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    outside = isolated_env.parent / "outside.txt"
    outside.write_text("secret\n")
    (isolated_env / "link.txt").symlink_to(outside)
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        reply(
            tool_use("read_file", {"path": "../outside.txt"}),
            tool_use("read_file", {"path": "/etc/passwd"}),
            tool_use("read_file", {"path": "link.txt"}),
            tool_use("grep", {"pattern": "secret", "glob": "*.txt"}),
            tool_use("propose_edit", {"path": "link.txt", "old_string": "s", "new_string": "t"}),
        ),
        text("ok"),
    )
    send(nv)
    idle(nv)
    *escapes, grep, write = tool_results(fake_api, 1)
    for result in [*escapes, write]:
        assert result["is_error"] and "outside the workspace" in result["content"]
        assert "secret" not in result["content"] and "root:" not in result["content"]
    assert "no matches" in grep["content"]  # the link out is not listed, so not searched
    assert outside.read_text() == "secret\n"


def test_list_files_and_grep(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "src").mkdir()
    (isolated_env / "src" / "app.py").write_text("def main():\n    return 42\n")
    (isolated_env / "README.md").write_text("# main project\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        reply(
            tool_use("list_files", {}),
            tool_use("list_files", {"glob": "*.py"}),
            tool_use("grep", {"pattern": r"\bmain\b"}),
            tool_use("grep", {"pattern": "main", "glob": "src/**"}),
            tool_use("grep", {"pattern": "("}),
        ),
        text("ok"),
    )
    send(nv)
    idle(nv)
    every, py, grep_all, grep_src, bad = tool_results(fake_api, 1)
    assert every["content"].splitlines() == ["README.md", "src/app.py"]
    assert py["content"] == "src/app.py"
    assert grep_all["content"].splitlines() == [
        "README.md:1: # main project",
        "src/app.py:1: def main():",
    ]
    assert grep_src["content"] == "src/app.py:1: def main():"
    assert bad["is_error"] and "regular expression" in bad["content"]
    assert "• grep src/**" not in transcript(nv)  # the label names the pattern first
    assert "• grep main" in transcript(nv)


def test_tools_outside_the_turns_list_are_refused_and_run_nothing(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    target = isolated_env / "keep.txt"
    target.write_text("keep\n")
    marker = isolated_env / "ran"
    nv = claude(nvim_factory, fake_api)
    nv.exec_lua("require('sightline').plan('on')")
    fake_api.script(
        reply(
            tool_use("propose_edit", {"path": "keep.txt", "old_string": "keep", "new_string": "x"}),
            tool_use("propose_create", {"path": "new.txt", "content": "x"}),
            tool_use("run_command", {"command": f"touch {marker}"}),
            tool_use("made_up_tool", {"path": "keep.txt"}),
        ),
        text("ok"),
    )
    send(nv)
    idle(nv)
    results = tool_results(fake_api, 1)
    assert len(results) == 4
    for result in results:
        assert result["is_error"] and "not available in this turn" in result["content"]
    assert target.read_text() == "keep\n"
    assert not marker.exists() and not (isolated_env / "new.txt").exists()
    assert nv.call("bufexists", str(target)) == 0  # not even loaded
    refused = [line for line in transcript(nv) if line.startswith("✗ refused tool")]
    assert len(refused) == 4
    wait_for(lambda: status(nv)["state"] == "idle")
