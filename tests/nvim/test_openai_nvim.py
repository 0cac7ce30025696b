"""The openai provider end to end: a child Neovim set up as the README says, the real openai
SDK in the core, the loopback Chat Completions fake. Chat, a tool round trip through the gate,
Change with Agent's tool list, the ollama preset without a key, a model that refuses tools,
:Sightline model, tokens and cost, rules files, get_diagnostics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fakeopenai as fo
from tests.agent_util import TURN_TIMEOUT_S, decide, idle, lines, send, wait_pending
from tests.change_util import SCOPED_TOOLS, scoped_send
from tests.conftest import status, transcript, wait_for
from tests.fakeopenai import FakeOpenAI

KEY = "sk-openai-e2e-5151"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as srv:
        yield srv
    assert not srv.errors, srv.errors


def gpt(nvim_factory: Any, server: FakeOpenAI, **cfg: Any) -> Any:
    provider = {
        "name": "openai",
        "base_url": server.base_url,
        "model": "gpt-4.1-mini",
        "retries": 0,
    }
    provider.update(cfg.pop("provider", {}))
    return nvim_factory({"provider": provider, **cfg}, env={"OPENAI_API_KEY": KEY})


def body(server: FakeOpenAI, n: int) -> dict[str, Any]:
    return dict(server.wait_for_requests(n + 1, TURN_TIMEOUT_S)[n].body)


def tool_messages(server: FakeOpenAI, n: int) -> list[dict[str, Any]]:
    return [m for m in body(server, n)["messages"] if m["role"] == "tool"]


def test_a_chat_shows_the_reply_model_tokens_and_cost(
    nvim_factory: Any, server: FakeOpenAI
) -> None:
    nv = gpt(nvim_factory, server)
    nv.command("set columns=200")  # a pane wide enough for the whole bar
    nv.command("Sightline chat")
    server.script(fo.text("Hello from the fake model."))
    send(nv, "hello")
    idle(nv)
    assert any("Hello from the fake model." in line for line in transcript(nv))
    st = status(nv)
    assert st["provider"] == "openai" and st["model"] == "gpt-4.1-mini"
    assert st["tokens"]["input"] > 0 and st["tokens"]["output"] > 0
    assert st["tokens"]["turn"] == {
        k: st["tokens"][k] for k in ("input", "output", "cache_read", "cache_write")
    }
    assert st["cost"]["total"] > 0 and st["cost"]["turn"] == st["cost"]["total"]
    bar = nv.exec_lua(
        "return vim.wo[vim.fn.bufwinid(require('sightline.ui.pane').buffers().transcript)].winbar"
    )
    assert "openai gpt-4.1-mini" in bar and " in · " in bar and "$" in bar
    assert KEY not in json.dumps(body(server, 0))


def test_a_tool_round_trip_reads_then_edits_as_one_undo_step(
    nvim_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x = 1\ny = 2\n")
    nv = gpt(nvim_factory, server)
    nv.command(f"edit {path}")
    buf = nv.api.get_current_buf().number
    server.script(
        fo.tool_call("read_file", {"path": "app.py"}, chunks=4),
        fo.tool_call(
            "propose_edit", {"path": "app.py", "old_string": "y = 2", "new_string": "y = 3"}
        ),
        fo.text("Done."),
    )
    send(nv, "change y")
    wait_pending(nv)
    (result,) = tool_messages(server, 1)
    assert "x = 1" in result["content"]
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["x = 1", "y = 3"]
    nv.command("undo")
    assert lines(nv, buf) == ["x = 1", "y = 2"]
    # The history's records map to what was sent: the third request carries both answers.
    answers = tool_messages(server, 2)
    assert len(answers) == 2 and "accepted" in answers[1]["content"].lower()


def test_change_with_agent_sends_exactly_the_scoped_tools(
    nvim_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("a\nb\nc\n")
    nv = gpt(nvim_factory, server)
    nv.command(f"edit {path}")
    buf = nv.api.get_current_buf().number
    server.script(fo.tool_call("replace_selection", {"text": "B"}), fo.text("ok"))
    scoped_send(nv, buf, 1, 0, 1, 1, "upper")
    wait_pending(nv)
    sent = [t["function"]["name"] for t in body(server, 0)["tools"]]
    assert sent == SCOPED_TOOLS
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["a", "B", "c"]


def test_ollama_works_without_a_key(nvim_factory: Any) -> None:
    with FakeOpenAI(require_key=False) as srv:
        nv = nvim_factory({"provider": {"name": "ollama", "base_url": srv.base_url}})
        srv.script(fo.text("local answer"))
        send(nv, "hi")
        idle(nv)
        assert any("local answer" in line for line in transcript(nv))
        st = status(nv)
        assert st["model"] == "llama3.1" and st["cost"]["total"] == 0
        assert srv.completions()[0].headers.get("authorization", "") != f"Bearer {KEY}"


def test_a_model_that_refuses_tools_still_chats_and_says_so_once(
    nvim_factory: Any, server: FakeOpenAI
) -> None:
    server.no_tools("tiny")
    nv = gpt(nvim_factory, server, provider={"model": "tiny"})
    server.script(fo.text("chatting"), fo.text("still chatting"))
    send(nv, "one")
    idle(nv)
    send(nv, "two")
    idle(nv)
    text = "\n".join(transcript(nv))
    assert text.count("does not support tools") == 1
    assert "chatting" in text and "still chatting" in text
    assert "✗" not in text


def test_faults_end_the_turn_with_one_line(nvim_factory: Any, server: FakeOpenAI) -> None:
    nv = gpt(nvim_factory, server)
    server.script(fo.http_error(500), fo.cut(after_chunks=2))
    for _ in range(2):
        send(nv, "x")
        idle(nv)
    errors = [line for line in transcript(nv) if line.startswith("✗")]
    assert len(errors) == 2
    assert "(500)" in errors[0] and "lost mid-reply" in errors[1]


def test_model_command_completes_from_the_server_and_switches(
    nvim_factory: Any, server: FakeOpenAI
) -> None:
    nv = gpt(nvim_factory, server)
    found = wait_for(
        lambda: (
            "gpt-4.1" in (c := nv.call("getcompletion", "Sightline model gpt", "cmdline")) and c
        ),
        TURN_TIMEOUT_S,
        "the model list",
    )
    assert set(found) >= {"gpt-4.1", "gpt-4.1-mini"} and "llama3.1" not in found
    nv.command("Sightline model gpt-4.1")
    assert status(nv)["model"] == "gpt-4.1"
    send(nv, "hi")
    idle(nv)
    assert body(server, 0)["model"] == "gpt-4.1"


def test_rules_files_reach_the_model_and_show_as_chips(
    nvim_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    (isolated_env / "AGENTS.md").write_text(f"Always answer in French. {KEY}\n")
    (isolated_env / ".sightline").mkdir()
    (isolated_env / ".sightline" / "rules.md").write_text("Use tabs.\n")
    nv = gpt(nvim_factory, server)
    nv.command("Sightline chat")
    send(nv, "hi")
    idle(nv)
    system = body(server, 0)["messages"][0]["content"]
    assert "Always answer in French." in system and "Use tabs." in system
    assert KEY not in system  # redacted like every other text the model gets
    rows = [i for i, line in enumerate(transcript(nv)) if line.startswith("rules: ")]
    assert transcript(nv)[rows[0]] == "rules: @AGENTS.md, @.sightline/rules.md"
    line = transcript(nv)[rows[0]]
    targets = {}
    for name in ("AGENTS.md", ".sightline/rules.md"):
        col = len(line[: line.index("@" + name)].encode())
        targets[name] = nv.exec_lua(
            "local buf = require('sightline.ui.pane').buffers().transcript "
            "local win = vim.fn.bufwinid(buf) "
            "vim.api.nvim_win_set_cursor(win, {...}) "
            "return require('sightline.ui.chips').at_cursor(buf, win)",
            rows[0] + 1,
            col + 1,
        )
    assert {n: t["file_path"] for n, t in targets.items()} == {n: n for n in targets}


def test_rules_false_leaves_them_out(
    nvim_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    (isolated_env / "CLAUDE.md").write_text("Secret house style.\n")
    nv = gpt(nvim_factory, server, rules=False)
    send(nv, "hi")
    idle(nv)
    assert "Secret house style" not in body(server, 0)["messages"][0]["content"]
    assert not any(line.startswith("rules: ") for line in transcript(nv))


def test_get_diagnostics_reads_vim_diagnostic(
    nvim_factory: Any, server: FakeOpenAI, isolated_env: Path
) -> None:
    path = isolated_env / "bad.py"
    path.write_text("x = (\n")
    (isolated_env / "other.py").write_text("y = 1\n")
    nv = gpt(nvim_factory, server)
    nv.command(f"edit {path}")
    nv.exec_lua(
        "local ns = vim.api.nvim_create_namespace('test') "
        "vim.diagnostic.set(ns, 0, {{lnum = 0, col = 4, message = 'unclosed (', "
        "severity = vim.diagnostic.severity.ERROR, source = 'pyright'}})"
    )
    server.script(
        fo.tool_call("get_diagnostics", {"path": "bad.py"}),
        fo.tool_call("get_diagnostics", {}),
        fo.tool_call("get_diagnostics", {"path": "other.py"}),
        fo.tool_call("get_diagnostics", {"path": "../outside.py"}),
        fo.text("seen"),
    )
    send(nv, "check")
    idle(nv)
    answers = [m["content"] for m in tool_messages(server, 4)]
    assert answers[0] == "bad.py:1:5: error: unclosed ( [pyright]"
    assert answers[1] == answers[0]
    assert answers[2] == "other.py is not loaded in the editor: no diagnostics are known for it"
    assert "outside the workspace" in answers[3]
