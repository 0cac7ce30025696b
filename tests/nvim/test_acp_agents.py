"""What the published ACP agents need of a client (issue 25 item 1), against the scripted agent
(tests/acp_agent.py): `authenticate` with an advertised method, the agent's mode in the bar,
side messages kept out of the reply, the tokens an agent reports, an edit permission in a
Change with Agent turn."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from tests.acp_util import acp_nvim, agent_cmd
from tests.agent_util import core_status, decide, edit, idle, lines, send, wait_pending
from tests.conftest import capture_notify, transcript, wait_for
from tests.screen import Screen

OPENAI_KEY = "sk-openai-test-fedcba9876543210"
CODEX_METHODS = [
    {"id": "chatgpt", "name": "Login with ChatGPT"},
    {
        "type": "env_var",
        "id": "openai-api-key",
        "name": "Use OPENAI_API_KEY",
        "vars": [{"name": "OPENAI_API_KEY"}],
    },
]


def preset_on_path(tmp_path: Path, command: str, cmd: list[str]) -> str:
    """The scripted agent as a preset's command on PATH, as npm would put it; the new PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / command
    wrapper.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(c) for c in cmd) + "\n")
    wrapper.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def bar(nv: Any, screen: Screen) -> str:
    """The pane's top bar as drawn: the first row of the transcript window (its winbar)."""
    win = nv.exec_lua("return vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)")
    row, col = nv.call("win_screenpos", win)
    width = nv.api.win_get_width(win)
    return str(screen.lines()[row - 1][col - 1 : col - 1 + width])


def test_an_agent_that_needs_a_login_is_authenticated_with_the_key_it_advertises(
    nvim_factory: Any, tmp_path: Path
) -> None:
    cmd, log = agent_cmd(tmp_path, [[{"say": "logged in"}]], caps={"auth": CODEX_METHODS})
    path = preset_on_path(tmp_path, "codex-acp", cmd)
    nv = nvim_factory(
        {"provider": {"name": "acp", "agent": "codex"}},
        env={"PATH": path, "OPENAI_API_KEY": OPENAI_KEY},
    )
    send(nv, "hi")
    idle(nv)
    (auth,) = log.entries("authenticate")
    assert auth["method_id"] == "openai-api-key" and auth["vars"] == {"OPENAI_API_KEY": True}
    assert len(log.entries("new_session")) == 2  # refused, then accepted once logged in
    text = "\n".join(transcript(nv))
    assert "logged in" in text
    assert OPENAI_KEY not in text


def test_an_agent_that_needs_a_terminal_login_says_which_command_to_run(
    nvim_factory: Any, tmp_path: Path
) -> None:
    methods = [
        {"type": "terminal", "id": "claude-login", "name": "Log in with Claude", "args": ["--cli"]},
        {"type": "env_var", "id": "key", "name": "Use a key", "vars": [{"name": "ACME_KEY"}]},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "never"}]], caps={"auth": methods})
    send(nv, "hi")
    idle(nv)
    text = " ".join(" ".join(transcript(nv)).split())
    assert "needs you to log in" in text
    assert "set ACME_KEY" in text
    assert "acp_agent.py --script" in text and "--cli` (Log in with Claude)" in text
    assert log.entries("authenticate") == [] and log.entries("prompt") == []


def test_the_bar_shows_the_agents_mode_and_follows_its_changes(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    turns: list[list[dict[str, Any]]] = [[{"say": "one"}], [{"mode_update": "plan"}]]
    caps = {"modes": ["auto", "default", "plan"]}
    nv, log = acp_nvim(nvim_factory, tmp_path, turns, caps=caps)
    screen = screen_factory(nv, 120, 24)
    nv.input(":Sightline chat<CR>")
    send(nv, "hi")
    idle(nv)
    # It started in `auto`, which never asks: the first turn ran in `default`, and says so.
    assert [r["mode_id"] for r in log.entries("set_mode")] == ["default"]
    assert core_status(nv)["agent_mode"] == {"id": "default", "name": "Default", "bypasses": False}
    wait_for(lambda: "mode Default" in bar(nv, screen), 10, "the agent's mode in the bar")
    send(nv, "plan")
    idle(nv)
    wait_for(lambda: "mode Plan" in bar(nv, screen), 10, "the mode the agent switched to")


def test_a_side_message_of_the_agent_is_not_glued_to_the_reply(
    nvim_factory: Any, tmp_path: Path
) -> None:
    turn = [{"say": "[MODE_UPDATE] plan"}, {"say": "The answer."}]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn], caps={"modes": ["default", "plan"]})
    send(nv, "hi")
    idle(nv)
    shown = transcript(nv)
    assert not any("MODE_UPDATE" in line for line in shown)
    assert any(line.strip() == "The answer." for line in shown)
    assert core_status(nv)["agent_mode"]["id"] == "plan"


def test_the_tokens_an_agent_reports_reach_the_bar_and_the_footer(
    nvim_factory: Any, tmp_path: Path
) -> None:
    usage = {"inputTokens": 1200, "outputTokens": 34, "cachedReadTokens": 10, "totalTokens": 1244}
    nv, _ = acp_nvim(nvim_factory, tmp_path, [[{"say": "hi"}, {"usage": usage}]])
    send(nv, "hi")
    idle(nv)
    st = core_status(nv)
    assert st["tokens"]["input"] == 1200 and st["tokens"]["output"] == 34
    assert st["usage_parts"]["tokens"][:2] == ["1200 in", "34 out"]
    assert any("1200 in · 34 out · 10 from cache" in line for line in transcript(nv))


SCOPED = "header\ndef f():\n    return 1\nfooter\n"


def test_change_with_agent_allows_an_edit_permission_for_the_selections_file(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text(SCOPED)
    (isolated_env / "other.py").write_text("x\n")

    def ask(pid: str, name: str) -> dict[str, Any]:
        return {"permission": {"id": pid, "title": f"Edit {name}", "kind": "edit", "paths": [name]}}

    turn: list[dict[str, Any]] = [
        ask("p1", "app.py"),  # Gemini CLI asks before it writes: allowed, the write is held
        {"write": "app.py", "content": "header\ndef f():\n    return 2\nfooter\n"},
        ask("p2", "other.py"),  # another file: refused, as before
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    buf = edit(nv, path)
    rng = {"buffer": buf, "start_row": 1, "start_col": 0, "end_row": 2, "end_col": 12}
    assert nv.exec_lua("return {require('sightline').send(...)}", "fix", rng) == [True]
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    assert [r["chosen"] for r in log.entries("permission_result")] == ["yes", "no"]
    assert lines(nv, buf) == ["header", "def f():", "    return 2", "footer"]
    assert (isolated_env / "other.py").read_text() == "x\n"


SOURCE = "".join(f"line {i}\n" for i in range(1, 13))
WRITTEN = SOURCE.replace("line 2\n", "line 2 CHANGED\n").replace("line 10\n", "line 10\nadded\n")


def test_an_acp_write_is_reviewed_hunk_by_hunk_in_its_buffer_and_the_agent_told_which(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / "f.txt"
    path.write_text(SOURCE)
    turns: list[list[dict[str, Any]]] = [[{"write": "f.txt", "content": WRITTEN}], [{"say": "ok"}]]
    nv, log = acp_nvim(nvim_factory, tmp_path, turns)
    buf = edit(nv, path)
    send(nv, "edit")
    wait_pending(nv)
    shown = "return require('sightline.ui.inline').shown()"
    wait_for(lambda: nv.exec_lua(shown), 10, "the write drawn in its buffer")
    keys = {m["lhs"] for m in nv.api.buf_get_keymap(buf, "n")}
    assert {"]h", "\\ha", "\\hw"} <= keys
    nv.exec_lua("vim.ui.input = function(_, cb) cb('keep it short') end")
    nv.api.win_set_cursor(0, [2, 0])
    nv.input("\\ha")
    wait_for(lambda: nv.exec_lua(shown)["hunks"][0].get("decided") == "accept")
    nv.api.win_set_cursor(0, [10, 0])
    nv.input("\\hw")  # the last hunk: rejected with a note, which decides the write
    idle(nv)
    assert lines(nv, buf) == SOURCE.replace("line 2\n", "line 2 CHANGED\n").splitlines()
    send(nv, "next")
    idle(nv)
    told = log.entries("prompt")[1]["blocks"][0]["text"]
    assert "partly accepted" in told and "hunk 1" in told and "keep it short" in told


EDIT_APP = {
    "permission": {
        "id": "e1",
        "title": "Edit app.py",
        "kind": "edit",
        "paths": ["app.py"],
        "diff": {"path": "app.py", "old": "x\n", "new": "y\n"},
    }
}


def test_an_allowed_edit_of_a_direct_writer_closes_its_view_and_is_not_called_a_bypass(
    nvim_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text("x\n")
    turn: list[dict[str, Any]] = [EDIT_APP, {"disk_write": str(app), "content": "y\n"}]
    nv, _ = acp_nvim(nvim_factory, tmp_path, [turn], client_writes=False)
    buf = edit(nv, app)
    send(nv, "edit")
    wait_pending(nv)
    tabs = len(nv.api.list_tabpages())
    assert nv.exec_lua("return require('sightline').compare()") is True
    assert len(nv.api.list_tabpages()) == tabs + 1
    decide(nv, "accept")
    idle(nv)
    assert len(nv.api.list_tabpages()) == tabs  # no view left saying "edit it, then accept"
    assert lines(nv, buf) == ["y"]  # the buffer shows what the agent wrote
    text = "\n".join(transcript(nv))
    assert "review gate" not in text, text


def test_a_rejections_note_reaches_the_agents_model_with_the_next_message(
    nvim_factory: Any, tmp_path: Path
) -> None:
    run = {"permission": {"id": "p1", "title": "Run make", "kind": "execute"}}
    nv, log = acp_nvim(nvim_factory, tmp_path, [[run], [{"say": "ok"}]])
    send(nv, "build")
    wait_pending(nv)
    decide(nv, "reject", "use ninja, not make")
    idle(nv)
    assert [r["chosen"] for r in log.entries("permission_result")] == ["no"]
    send(nv, "go on")
    idle(nv)
    first = log.entries("prompt")[1]["blocks"][0]["text"]
    assert "rejected Run make: use ninja, not make" in first
    assert "[object Object]" not in first


def test_a_call_reported_running_then_asked_for_is_not_called_unasked(
    nvim_factory: Any, tmp_path: Path
) -> None:
    """codex-acp reports a call in progress, then asks its permission: that is asking."""
    turn: list[dict[str, Any]] = [
        {"tool": {"id": "c1", "title": "Run make", "kind": "execute", "status": "in_progress"}},
        {"permission": {"id": "c1", "title": "Run make", "kind": "execute"}},
        {"update": {"id": "c1", "status": "completed"}},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    send(nv, "build")
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    assert [r["chosen"] for r in log.entries("permission_result")] == ["yes"]
    assert not any("without asking" in line for line in transcript(nv))


def _select(oid: str, name: str, category: str, values: list[str], current: str) -> dict[str, Any]:
    return {
        "id": oid,
        "name": name,
        "category": category,
        "type": "select",
        "currentValue": current,
        "options": [{"value": v, "name": v.title()} for v in values],
    }


OPTIONS = [
    _select("mode", "Mode", "mode", ["default", "plan"], "default"),
    _select("model", "Model", "model", ["alpha", "beta"], "alpha"),
    _select("effort", "Effort", "thought_level", ["low", "high"], "low"),
]


def test_the_agents_options_are_in_the_bar_listed_set_and_followed(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    turns: list[list[dict[str, Any]]] = [
        [{"say": "one"}],
        [{"option_update": {"effort": "high"}}, {"say": "two"}],
    ]
    caps = {"modes": ["default", "plan"], "options": OPTIONS}
    nv, log = acp_nvim(nvim_factory, tmp_path, turns, caps=caps)
    screen = screen_factory(nv, 160, 24)
    nv.input(":Sightline chat<CR>")
    send(nv, "hi")
    idle(nv)
    wait_for(lambda: "Alpha · thought Low" in bar(nv, screen), 10, "the options in the bar")
    # :Sightline model lists the agent's models and switches at once, in its session
    assert nv.call("getcompletion", "Sightline model ", "cmdline") == ["alpha", "beta"]
    nv.command("Sightline model beta")
    assert log.entries("set_config_option") == [
        {"kind": "set_config_option", "config_id": "model", "value": "beta"}
    ]
    wait_for(lambda: "Beta · thought Low" in bar(nv, screen), 10, "the new model in the bar")
    # :Sightline mode lists its modes and switches to one by name
    assert nv.call("getcompletion", "Sightline mode ", "cmdline") == ["default", "plan"]
    nv.command("Sightline mode plan")
    assert log.entries("set_config_option")[-1]["config_id"] == "mode"
    wait_for(lambda: "mode Plan" in bar(nv, screen), 10, "the chosen mode in the bar")
    # the agent changes an option itself: shown at once
    send(nv, "again")
    idle(nv)
    wait_for(lambda: "thought High" in bar(nv, screen), 10, "the agent's own change")
    # a value the agent does not offer is refused, nothing changed
    notes = capture_notify(nv)
    nv.command("Sightline model gamma")
    said = wait_for(lambda: notes(), 10, "the refusal")
    assert "no 'gamma' (it offers: alpha, beta)" in said[-1]["msg"], said
    assert [r["value"] for r in log.entries("set_config_option")] == ["beta", "plan"]


def test_an_agent_session_sightline_did_not_start_is_listed_and_resumed_with_its_history(
    nvim_factory: Any, tmp_path: Path
) -> None:
    caps = {
        "load": True,
        "sessions": [
            {
                "sessionId": "old-1",
                "cwd": "/w",
                "title": "Fix the parser",
                "updatedAt": "2026-11-30",
            }
        ],
        "replay": [{"user": "why does it crash?"}, {"say": "Because of the "}, {"say": "None."}],
    }
    nv, log = acp_nvim(nvim_factory, tmp_path, [[{"say": "continued"}]], caps=caps)
    nv.exec_lua(
        "vim.ui.select = function(items, opts, cb) "
        "_G.offered = vim.tbl_map(opts.format_item, items) cb(items[1]) end"
    )
    nv.command("Sightline sessions")
    wait_for(lambda: "None." in "\n".join(transcript(nv)), 30, "the replayed history")
    assert nv.exec_lua("return _G.offered") == ["Fix the parser · 2026-11-30"]
    shown = transcript(nv)
    assert "why does it crash?" in shown and "Because of the None." in shown
    send(nv, "go on")
    idle(nv)
    assert "continued" in transcript(nv)
    loads = log.entries("load_session")
    assert [r["session_id"] for r in loads] == ["old-1", "old-1"]  # resumed, then continued
    assert log.entries("new_session") == []
    assert "REPLAYED" not in "\n".join(transcript(nv))
