"""Kept approvals as a user keeps them: typed keys in the pane, `:Sightline accept always`,
`:Sightline approvals` and its `revoke`; what a kept approval covers (each simple command,
parsed, never a text prefix), where it lives (never in the workspace), and when it ends."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.agent_util import claude, core_status, idle, send, tool_results, wait_pending
from tests.child import ROOT
from tests.conftest import status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.screen import Screen

__all__ = ["fake_api"]

DEMO = ROOT / "tests" / "mcp_servers" / "demo.py"


def run(command: str) -> Any:
    return tool_use("run_command", {"command": command})


def open_pane(nv: Any, screen: Screen) -> None:
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert")


def in_transcript(nv: Any) -> None:
    """Normal mode in the pane's transcript, where the review keys are typed."""
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")


def results(server: FakeAnthropic, request: int) -> list[str]:
    return [r["content"].splitlines()[0] for r in tool_results(server, request)]


def approvals_files(isolated_env: Path) -> list[Path]:
    return sorted((isolated_env.parent / "xdg" / "data" / "sightline" / "approvals").glob("*.json"))


def test_ga_allows_once_and_ga_always_keeps_each_simple_command_of_it(
    nvim_factory: Any, screen_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    screen = screen_factory(nv, 160, 40)
    open_pane(nv, screen)
    fake_api.script(
        run("echo one && echo 'two'"),
        run("echo one && echo 'two'"),  # asked again: ga allowed it once only
        run('echo two; "echo" one'),  # each simple command kept: runs without asking
        run("echo two; echo three"),  # echo three was never allowed: asked
        text("done"),
    )
    nv.input("go<C-s>")
    wait_pending(nv)
    screen.wait_text("allowing it keeps: `echo one` · `echo two`")
    screen.wait_text("allow ga/gc/gA  deny gr/gC/gR")  # once, this chat, always (composer bar)
    in_transcript(nv)
    nv.input("ga")
    wait_for(lambda: fake_api.wait_for_requests(2, 30), what="the second request")
    wait_pending(nv)
    nv.input("gA")
    wait_pending(nv)  # the third ran without asking; the fourth waits
    assert status(nv)["pending"] == "run: echo two; echo three"
    nv.input("gr")
    idle(nv)
    assert results(fake_api, 1) == ["exit code 0"]
    assert results(fake_api, 2) == ["exit code 0"]
    assert results(fake_api, 3) == ["exit code 0"]
    assert results(fake_api, 4)[0].startswith("denied by the user")
    shown = transcript(nv)
    assert "⊕ kept: allow `echo one`, `echo two` always in this workspace" in shown
    assert "✔ allowed by your kept approval `echo two`, `echo one`" in shown
    # Kept in the user's data dir, never in the workspace.
    (kept,) = approvals_files(isolated_env)
    assert json.loads(kept.read_text())["workspace"] == str(isolated_env.resolve())
    assert sorted(p.name for p in isolated_env.iterdir()) == []


def test_always_outlives_the_core_and_revoke_asks_again(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(run("echo kept"), text("ok"))
    send(nv)
    wait_pending(nv)
    nv.command("Sightline accept always")
    idle(nv)
    nv.command("Sightline restart")
    fake_api.script(run("echo kept"), text("ok"), run("echo kept"), text("ok"))
    send(nv)
    idle(nv)
    assert results(fake_api, 3) == ["exit code 0"]  # not asked: the new core kept it
    listing = nv.exec_lua("return require('sightline.approvals').list()")
    assert listing == ["1. allow command echo kept (always in this workspace)"]
    assert nv.call("getcompletion", "Sightline approvals revoke ", "cmdline") == ["1"]
    nv.command("Sightline approvals revoke 1")
    assert nv.exec_lua("return require('sightline.approvals').list()") == []
    send(nv)
    st = wait_pending(nv)
    assert st["pending"] == "run: echo kept"
    nv.command("Sightline reject")
    idle(nv)


def test_for_this_conversation_ends_with_it_and_deny_always_refuses_without_asking(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    marker = isolated_env / "ran"
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        run("echo chat"),
        run("echo chat"),
        run(f"touch {marker}"),
        text("ok"),
    )
    send(nv)
    wait_pending(nv)
    assert nv.exec_lua("return {require('sightline').decide('accept', 'conversation')}") == [True]
    wait_pending(nv)  # the second echo ran without asking; the touch waits
    nv.command("Sightline reject always")
    idle(nv)
    assert results(fake_api, 2) == ["exit code 0"]
    assert not marker.exists()
    fake_api.script(run(f"touch  '{marker}'"), text("ok"))  # the same, parsed
    send(nv)
    idle(nv)
    assert results(fake_api, 5)[0].startswith("denied by the user (a rule they kept")
    assert not marker.exists()
    nv.command("Sightline reset")
    fake_api.script(run("echo chat"), text("ok"))
    send(nv)
    st = wait_pending(nv)  # a new conversation: asked again
    assert st["pending"] == "run: echo chat"
    nv.command("Sightline reject")
    idle(nv)


def test_what_cannot_be_parsed_is_never_kept_and_the_ask_says_why(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(run("echo $(id -u)"), text("ok"))
    send(nv)
    wait_pending(nv)
    assert core_status(nv)["pending_scopes"] == []
    assert any("asked each time: it holds a command substitution" in li for li in transcript(nv))
    ok, err = nv.exec_lua("return {require('sightline').decide('accept', 'always')}")
    assert ok is None and "cannot be kept" in err
    assert status(nv)["state"] == "awaiting_decision"  # nothing was decided
    nv.command("Sightline accept")
    idle(nv)
    assert approvals_files(isolated_env) == []


def test_a_repository_file_cannot_create_or_widen_an_approval(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    # A kept approval of another checkout, and that file carried inside this repository
    # where a cloned repo could put it: neither applies here.
    other = tmp_path / "other"
    other.mkdir()
    nv = claude(nvim_factory, fake_api)
    nv.command(f"cd {other}")
    fake_api.script(run("echo hi"), text("ok"))
    send(nv)
    wait_pending(nv)
    nv.command("Sightline accept always")
    idle(nv)
    (kept,) = approvals_files(isolated_env)
    for inside in (".sightline/approvals", ".sightline", "."):
        (isolated_env / inside).mkdir(parents=True, exist_ok=True)
        shutil.copy(kept, isolated_env / inside / kept.name)
    (isolated_env / ".sightline" / "approvals.json").write_text(kept.read_text())
    nv.command(f"cd {isolated_env}")
    nv.command("Sightline reset")
    fake_api.script(run("echo hi"), text("ok"))
    send(nv)
    st = wait_pending(nv)
    assert st["pending"] == "run: echo hi"
    nv.command("Sightline reject")
    idle(nv)


def test_an_mcp_tool_kept_always_asks_again_once_its_server_changed(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    out = isolated_env / "touched.txt"
    server = {"command": sys.executable, "args": [str(DEMO)], "env": {"DEMO_OUT": str(out)}}
    nv = claude(nvim_factory, fake_api, mcp={"servers": {"demo": server}})
    touch = tool_use("mcp__demo__touch", {"text": "one"})
    fake_api.script(touch, tool_use("mcp__demo__touch", {"text": "two"}), text("ok"))
    send(nv)
    wait_pending(nv)
    assert any("allowing it keeps: `demo/touch (any arguments" in li for li in transcript(nv))
    nv.command("Sightline accept always")
    idle(nv)  # the second call, with other arguments, ran without asking
    assert out.read_text() == "two"
    assert "✔ allowed by your kept approval `demo/touch`" in transcript(nv)
    # The same server started another way (here: one more argument) is another server.
    changed = {**server, "args": [str(DEMO), "--changed"]}
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv.exec_lua(
        "require('sightline').setup(...)",
        {"provider": provider, "mcp": {"servers": {"demo": changed}}},
    )
    fake_api.script(tool_use("mcp__demo__touch", {"text": "three"}), text("ok"))
    send(nv)
    st = wait_pending(nv)
    assert st["pending"] == "MCP demo/touch" and out.read_text() == "two"
    nv.command("Sightline reject")
    idle(nv)
