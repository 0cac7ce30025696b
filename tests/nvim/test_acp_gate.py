"""The acp provider's guarantees against a hostile scripted agent: permissions, plan mode,
stop, a crash mid-turn, writes past the client, unsaved buffers, Change with Agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim
from tests.agent_util import decide, edit, idle, lines, send, wait_core_pending, wait_pending
from tests.conftest import capture_notify, transcript, wait_for

EXECUTE = {"permission": {"id": "p1", "title": "Run make", "kind": "execute"}}
EDIT_PERM = {
    "permission": {
        "id": "p2",
        "title": "Edit app.py",
        "kind": "edit",
        "paths": ["app.py"],
        "diff": {"path": "app.py", "old": "x\n", "new": "y\n"},
    }
}


def chosen(log: Any) -> list[str]:
    return [r["chosen"] for r in log.entries("permission_result")]


def scoped_send(nv: Any, buf: int, sr: int, sc: int, er: int, ec: int, msg: str = "fix") -> Any:
    rng = {"buffer": buf, "start_row": sr, "start_col": sc, "end_row": er, "end_col": ec}
    return nv.exec_lua("return {require('sightline').send(...)}", msg, rng)


def test_permission_goes_to_the_gate_with_the_agents_options(
    nvim_factory: Any, tmp_path: Path
) -> None:
    nv, log = acp_nvim(nvim_factory, tmp_path, [[EXECUTE, EXECUTE, EXECUTE]])
    send(nv, "build")
    st = wait_pending(nv)
    assert st["pending"] == "allow Run make"
    decide(nv, "accept")
    wait_for(lambda: len(chosen(log)) == 1, 30, "first answer")
    wait_core_pending(nv)
    decide(nv, "accept", "always")
    # The agent's "always" is kept in sightline's store too (:help sightline-approvals): the
    # same request asked again is allowed without asking.
    idle(nv)
    assert chosen(log) == ["yes", "always", "yes"]
    listed = nv.exec_lua("return require('sightline.approvals').list()")
    assert listed == ["1. allow agent request Run make (always in this workspace)"]


def test_edit_permission_of_a_direct_writer_is_reviewed_as_the_whole_file_it_makes(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("head\nx\ntail\n")
    nv, log = acp_nvim(nvim_factory, tmp_path, [[EDIT_PERM]], client_writes=False)
    send(nv, "edit")
    assert wait_pending(nv)["pending"] == "edit app.py (+1 −1)"
    view = nv.exec_lua("return require('sightline.host').request('agent.compare')")["proposal"]
    assert view["before"] == "head\nx\ntail\n" and view["after"] == "head\ny\ntail\n"
    decide(nv, "reject", "not y")
    idle(nv)
    assert chosen(log) == ["no"]
    assert (isolated_env / "app.py").read_text() == "head\nx\ntail\n"


def test_edit_permission_whose_diff_is_ambiguous_is_asked_whole_with_its_diff(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("x\nx\n")  # the piece to replace occurs twice
    nv, log = acp_nvim(nvim_factory, tmp_path, [[EDIT_PERM]], client_writes=False)
    send(nv, "edit")
    assert wait_pending(nv)["pending"] == "allow Edit app.py"
    view = nv.exec_lua("return require('sightline.host').request('agent.compare')")["proposal"]
    assert view["before"] == "x\n" and view["after"] == "y\n"
    decide(nv, "reject")
    idle(nv)
    assert chosen(log) == ["no"]


def test_autoaccept_covers_edits_only(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("x\n")
    nv, log = acp_nvim(
        nvim_factory, tmp_path, [[EDIT_PERM, EXECUTE]], client_writes=False, autoaccept=True
    )
    send(nv, "go")
    wait_pending(nv)  # the command still asks
    assert chosen(log) == ["yes"]
    decide(nv, "reject")
    idle(nv)
    assert chosen(log) == ["yes", "no"]


def test_plan_mode_sets_the_read_only_mode_and_refuses_writes_and_permissions(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x\n")
    turn: list[dict[str, Any]] = [EXECUTE, EDIT_PERM, {"write": "app.py", "content": "pwned\n"}]
    nv, log = acp_nvim(
        nvim_factory, tmp_path, [turn, [{"say": "ok"}]], caps={"modes": ["default", "plan"]}
    )
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    send(nv, "plan it")
    idle(nv)
    assert log.entries("set_mode") == [{"kind": "set_mode", "mode_id": "plan"}]
    assert chosen(log) == ["no", "no"]
    (res,) = log.entries("write_result")
    assert res["ok"] is False and "plan mode" in res["message"]
    assert path.read_text() == "x\n"
    assert nv.exec_lua("return {require('sightline').plan('off')}") == [True]
    send(nv, "now do it")
    idle(nv)
    assert [r["mode_id"] for r in log.entries("set_mode")] == ["plan", "default"]


def test_stop_sends_cancel_and_rejects_the_pending_write(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x\n")
    turn: list[dict[str, Any]] = [{"write": "app.py", "content": "y\n"}, {"wait_cancel": True}]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "go")
    wait_pending(nv)
    assert nv.exec_lua("return {require('sightline').stop()}") == [True]
    idle(nv)
    log.wait("cancel")
    (res,) = log.wait("write_result")
    assert res["ok"] is False
    assert path.read_text() == "x\n"
    assert "■ Stopped." in transcript(nv)


def test_a_crash_mid_turn_is_reported_and_the_next_send_restarts_the_agent(
    nvim_factory: Any, tmp_path: Path
) -> None:
    nv, log = acp_nvim(
        nvim_factory, tmp_path, [[{"say": "half"}, {"crash": 3}], [{"say": "back again"}]]
    )
    send(nv, "one")
    idle(nv)
    text = "\n".join(transcript(nv))
    assert "exited (code 3)" in text and "restarted on the next send" in text
    send(nv, "two")
    idle(nv)
    assert "back again" in transcript(nv)
    assert len(log.entries("initialize")) == 2


def test_a_disk_write_past_the_client_is_named_and_the_turn_marked(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("x\n")
    turn = [{"disk_write": str(isolated_env / "app.py"), "content": "sneaky\n"}]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    nv.exec_lua(
        "_G.bypass = nil vim.api.nvim_create_autocmd('User', { pattern = 'SightlineAcpBypass', "
        "callback = function(ev) _G.bypass = ev.data end })"
    )
    send(nv, "go")
    idle(nv)
    assert "⚠ changed on disk by the agent, not through the review gate: app.py" in transcript(nv)
    got = wait_for(lambda: nv.exec_lua("return _G.bypass"), 10, "the bypass event")
    assert got["paths"] == ["app.py"]


def test_a_write_to_a_buffer_with_unsaved_changes_never_saves_it(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("one\ntwo\nthree\n")
    # The agent read the buffer first (unsaved text included) and writes on top of it.
    turn = [{"read": "app.py"}, {"write": "app.py", "content": "ONE (mine)\ntwo\nTHREE\n"}]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    buf = edit(nv, path)
    nv.api.buf_set_lines(buf, 0, 1, False, ["ONE (mine)"])
    send(nv, "go")
    st = wait_pending(nv)
    assert st["pending"] == "edit app.py (+1 −1)"  # the diff is against the buffer
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["ONE (mine)", "two", "THREE"]
    assert path.read_text() == "one\ntwo\nthree\n"
    assert nv.api.get_option_value("modified", {"buf": buf})


def test_direct_writer_may_not_touch_a_buffer_with_unsaved_changes(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x\n")
    nv, log = acp_nvim(nvim_factory, tmp_path, [[EDIT_PERM]], client_writes=False, autoaccept=True)
    buf = edit(nv, path)
    nv.api.buf_set_lines(buf, 0, 1, False, ["mine"])
    send(nv, "go")
    idle(nv)
    assert chosen(log) == ["no"]
    assert any("unsaved changes of yours" in ln for ln in transcript(nv))


SCOPED = "header\ndef f():\n    return 1\nfooter\n"


def test_scoped_write_inside_the_selection_is_accepted_outside_refused(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SCOPED)
    turn: list[dict[str, Any]] = [
        {"write": "app.py", "content": "HEADER\ndef f():\n    return 1\nfooter\n"},
        {"write": "other.py", "content": "new\n"},
        EXECUTE,
        EDIT_PERM,
        {"write": "app.py", "content": "header\ndef f():\n    return 2\nfooter\n"},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    buf = edit(nv, path)
    assert scoped_send(nv, buf, 1, 0, 2, 12) == [True]
    st = wait_pending(nv)
    assert st["scope"]["start_row"] == 1
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["header", "def f():", "    return 2", "footer"]
    results = log.entries("write_result")
    assert [r["ok"] for r in results] == [False, False, True]
    assert "outside the selection" in results[0]["message"]
    assert "only the selection" in results[1]["message"]
    # The command is refused; the edit permission names the selection's file: allowed, its
    # write held to the selection (the last write, inside it, is the one taken).
    assert chosen(log) == ["no", "yes"]
    assert not (isolated_env / "other.py").exists()


def test_change_with_agent_refuses_an_agent_that_writes_past_the_client(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SCOPED)
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "never"}]], client_writes=False)
    buf = edit(nv, path)
    res = scoped_send(nv, buf, 1, 0, 2, 12)
    assert res[0] is None and "writes files to disk itself" in res[1]
    idle(nv)
    assert log.entries("prompt") == []


def test_a_missing_agent_command_is_refused_with_how_to_install(
    nvim_factory: Any, tmp_path: Path
) -> None:
    nv = nvim_factory({"provider": {"name": "acp", "agent": "claude"}}, env={"PATH": str(tmp_path)})
    notes = capture_notify(nv)
    send(nv, "hi")
    idle(nv)
    text = "\n".join(transcript(nv))
    assert "'claude-agent-acp', which is not on PATH" in text
    assert "npm install -g @zed-industries/claude-agent-acp@0.23.1" in text
    assert not [n for n in notes() if "Traceback" in n["msg"]]
