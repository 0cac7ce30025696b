"""The MCP client end to end: a child Neovim, the real anthropic SDK against tests/fakeapi.py,
and the SDK-written server tests/mcp_servers/demo.py (stdio and Streamable HTTP)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import (
    API_KEY,
    TURN_TIMEOUT_S,
    decide,
    idle,
    only_result,
    send,
    tool_names,
    wait_pending,
)
from tests.child import ROOT
from tests.conftest import capture_notify, status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.lua_helper import lua_helper
from tests.processes import processes_with

__all__ = ["fake_api"]

DEMO = ROOT / "tests" / "mcp_servers" / "demo.py"
RAW = ROOT / "tests" / "mcp_servers" / "raw.py"
DEMO_TOOLS = ["lookup", "touch", "env_value", "slow", "crash", "picture", "flood"]


def demo(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(DEMO)], **extra}


def _claude_env(nvim_factory: Any, api: FakeAnthropic, env: dict[str, str], **cfg: Any) -> Any:
    """A child Neovim with the anthropic provider against `api` and more environment."""
    provider = {"name": "anthropic", "base_url": api.base_url, "retries": 0}
    return nvim_factory({"provider": provider, **cfg}, env={"ANTHROPIC_API_KEY": API_KEY, **env})


def mcp_names(names: list[str]) -> list[str]:
    return sorted(n for n in names if n.startswith("mcp_"))


def test_tools_are_listed_by_kind_and_an_exec_tool_runs_after_approval(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    out = isolated_env / "touched.txt"
    nv = _claude_env(
        nvim_factory,
        fake_api,
        {},
        mcp={"servers": {"demo": demo(env={"DEMO_OUT": str(out)}, tools={"lookup": "read"})}},
    )
    fake_api.script(tool_use("mcp__demo__touch", {"text": "hello"}), text("done"))
    send(nv)
    st = wait_pending(nv)
    assert st["pending"] == "MCP demo/touch"
    shown = transcript(nv)
    assert any("MCP demo/touch" in line for line in shown)
    assert any('"text": "hello"' in line for line in shown)  # the arguments, before deciding
    assert not out.exists()
    decide(nv, "accept")
    idle(nv)
    assert out.read_text() == "hello"
    assert only_result(fake_api)["content"] == "wrote 5 characters"
    names = tool_names(fake_api, 0)
    assert mcp_names(names) == sorted(f"mcp__demo__{t}" for t in DEMO_TOOLS)
    assert "run_command" in names
    # The tool reached the model with its schema and says where it comes from.
    spec = next(t for t in fake_api.requests[0].body["tools"] if t["name"] == "mcp__demo__touch")
    assert spec["input_schema"]["type"] == "object" and "text" in spec["input_schema"]["properties"]
    assert "server demo" in spec["description"]


def test_a_rejected_call_does_not_run(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    out = isolated_env / "touched.txt"
    nv = _claude_env(
        nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(env={"DEMO_OUT": str(out)})}}
    )
    fake_api.script(tool_use("mcp__demo__touch", {"text": "no"}), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "reject", "not now")
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and "denied by the user: not now" in result["content"]
    assert not out.exists()


def test_a_read_tool_runs_without_asking_and_images_are_summarised(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(
        nvim_factory,
        fake_api,
        {},
        mcp={"servers": {"demo": demo(tools={"lookup": "read", "picture": "read"})}},
    )
    fake_api.script(
        tool_use("mcp__demo__lookup", {"word": "gate"}),
        tool_use("mcp__demo__picture", {}),
        text("done"),
    )
    send(nv)
    idle(nv)
    # The call's line names its arguments, as a built-in tool's names its path.
    assert '• mcp__demo__lookup word="gate"' in transcript(nv)
    assert only_result(fake_api, 1)["content"] == "definition of gate: a demo word"
    assert only_result(fake_api, 2)["content"] == "here it is\n[image: image/png, 32 bytes]"


def test_plan_and_scoped_turns_get_only_read_tools(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(
        nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(tools={"lookup": "read"})}}
    )
    nv.command("Sightline plan on")
    send(nv, "plan it")
    idle(nv)
    assert mcp_names(tool_names(fake_api, 0)) == ["mcp__demo__lookup"]
    nv.command("Sightline plan off")
    path = isolated_env / "app.py"
    path.write_text("def f():\n    return 1\n")
    nv.command(f"edit {path}")
    buf = int(nv.api.get_current_buf().number)
    rng = {"buffer": buf, "start_row": 0, "start_col": 0, "end_row": 1, "end_col": 12}
    assert nv.exec_lua("return {require('sightline').send(...)}", "fix", rng) == [True]
    idle(nv)
    assert mcp_names(tool_names(fake_api, 1)) == ["mcp__demo__lookup"]
    send(nv, "normal")
    idle(nv)
    assert len(mcp_names(tool_names(fake_api, 2))) == len(DEMO_TOOLS)


def test_annotations_are_trusted_only_when_the_user_opts_in(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(
        nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(trust_annotations=True)}}
    )
    nv.command("Sightline plan on")
    send(nv)
    idle(nv)
    # readOnlyHint: lookup, slow and picture say they only read.
    expected = ["mcp__demo__lookup", "mcp__demo__picture", "mcp__demo__slow"]
    assert mcp_names(tool_names(fake_api, 0)) == expected
    listing = nv.exec_lua("return require('sightline.mcp_client').list()")
    (server,) = listing
    touch = next(t for t in server["tools"] if t["name"] == "touch")
    lookup = next(t for t in server["tools"] if t["name"] == "lookup")
    assert touch["kind"] == "exec" and lookup["kind"] == "read"
    assert lookup["annotations"] == "readOnlyHint=true"


def test_a_plan_turn_does_not_start_a_server_of_exec_tools_only(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo()}})
    nv.command("Sightline plan on")
    send(nv)
    idle(nv)
    assert mcp_names(tool_names(fake_api, 0)) == []
    (server,) = nv.exec_lua("return require('sightline.mcp_client').list()")
    assert server["state"] == "stopped"


def test_a_resource_mention_reaches_the_model_after_the_typed_text(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo()}})
    fake_api.script(text("read it"))
    send(nv, "see @mcp:demo:demo://notes and @mcp:demo:demo://notes, not @mcp:demo:demo://nope")
    idle(nv)
    content = fake_api.wait_for_requests(1, TURN_TIMEOUT_S)[0].body["messages"][0]["content"]
    texts = [b["text"] for b in content if b.get("type") == "text"]
    assert texts[0].startswith("see @mcp:demo:demo://notes")
    parts = [t for t in texts[1:] if "mcp_resource" in t]
    assert len(parts) == 1  # deduplicated; the unknown one skipped silently
    assert parts[0].startswith('<mcp_resource uri="demo:demo://notes">')
    assert "NOTES-RESOURCE-TEXT" in parts[0]


def test_a_disabled_server_is_not_started_and_its_resource_not_read(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(enabled=False)}})
    send(nv, "see @mcp:demo:demo://notes")
    idle(nv)
    req = fake_api.wait_for_requests(1, TURN_TIMEOUT_S)[0].body
    assert mcp_names([t["name"] for t in req["tools"]]) == []
    assert not any("NOTES-RESOURCE" in json.dumps(m) for m in req["messages"])
    nv.command("Sightline mcp enable demo")
    send(nv, "again")
    idle(nv)
    assert len(mcp_names(tool_names(fake_api, 1))) == len(DEMO_TOOLS)


def test_the_composer_offers_resources_after_at(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo()}})
    assert nv.exec_lua("return require('sightline').chat()") is True
    nv.input("@")  # starts the enabled servers in the background
    wait_for(
        lambda: (
            nv.exec_lua("return require('sightline.mcp_client').list()")[0]["state"] == "running"
        ),
        TURN_TIMEOUT_S,
        "the server to start",
    )
    nv.input("mcp:no")

    def words() -> list[str]:
        items = nv.exec_lua("return vim.fn.complete_info({'items'}).items")
        return [i["word"] for i in items]

    wait_for(lambda: words() == ["@mcp:demo:demo://notes"], 10, "the resource in the menu")


def _gated(nvim_factory: Any, gate: Path) -> Any:
    server = demo(env={"DEMO_START_GATE": str(gate)})
    return nvim_factory({"provider": {"name": "echo"}, "mcp": {"servers": {"demo": server}}})


def test_mcp_says_starting_then_offers_the_resources_when_up(
    nvim_factory: Any, isolated_env: Path, screen_factory: Any
) -> None:
    gate = isolated_env.parent / "let-demo-start"
    nv = _gated(nvim_factory, gate)
    screen = screen_factory(nv, 160, 45)
    assert nv.exec_lua("return require('sightline').chat()") is True
    nv.input("@mcp:")  # the first `@mcp:` after start: the server is still starting
    row, col = screen.wait_text("starting…")
    assert screen.row(row)[col:].split() == ["starting…", "mcp", "demo"]
    items = nv.exec_lua("return vim.fn.complete_info({'items'}).items")
    assert [i["word"] for i in items] == ["@mcp:"]  # taking it inserts nothing new
    gate.write_text("")
    # No key typed: the menu asks again and shows the resource once the server is up.
    row, col = screen.wait_text("@mcp:demo:demo://notes", TURN_TIMEOUT_S)
    assert screen.row(row)[col:].split()[:3] == ["@mcp:demo:demo://notes", "mcp", "demo"]
    assert not screen.find("starting…")
    assert nv.exec_lua("return vim.api.nvim_get_current_line()") == "@mcp:"


def test_blink_shows_starting_then_the_resources(nvim_factory: Any, isolated_env: Path) -> None:
    gate = isolated_env.parent / "let-demo-start"
    nv = _gated(nvim_factory, gate)
    lua_helper(nv, "engines.fake_blink")
    nv.exec_lua("require('blink.cmp').setup({})")
    assert nv.exec_lua("return require('sightline').chat()") is True
    for char in "@mcp:":
        nv.input(char)
    menu = "return _G.fake_blink.menu"
    wait_for(lambda: nv.exec_lua(menu) == ["@mcp:"], 10, "the starting… item")
    gate.write_text("")
    # blink.cmp appends what a source sends later: a new list is asked for (show()).
    wait_for(lambda: nv.exec_lua(menu) == ["@mcp:demo:demo://notes"], TURN_TIMEOUT_S, "refresh")


def test_cmp_is_asked_again_once_the_servers_are_up(nvim_factory: Any, isolated_env: Path) -> None:
    gate = isolated_env.parent / "let-demo-start"
    nv = _gated(nvim_factory, gate)
    lua_helper(nv, "engines.fake_cmp")
    nv.exec_lua("require('cmp').setup({ sources = { { name = 'buffer' } } })")
    assert nv.exec_lua("return require('sightline').chat()") is True
    nv.input("@mcp:")
    wait_for(lambda: nv.exec_lua("return vim.api.nvim_get_current_line()") == "@mcp:", 10, "@mcp:")
    nv.exec_lua("_G.fake_cmp.visible = true")  # cmp's menu shows what the source answered

    def labels() -> list[str]:
        items = lua_helper(nv, "engines.cmp_complete", "@mcp:")["response"]["items"]
        return [i["label"] for i in items]

    assert wait_for(labels, 10, "the starting… item") == ["starting…"]
    gate.write_text("")
    # cmp.complete() asks again (each time it is still starting) until the server is up.
    last = "local r = _G.fake_cmp.last; return r and r.items[1] and r.items[1].label"
    wait_for(lambda: nv.exec_lua(last) == "@mcp:demo:demo://notes", TURN_TIMEOUT_S, "refresh")


def test_a_crashing_server_is_reported_once_and_dropped(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(
        nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(tools={"crash": "read"})}}
    )
    fake_api.script(tool_use("mcp__demo__crash", {}), text("hm"), text("second turn"))
    send(nv)
    idle(nv)
    result = only_result(fake_api, 1)
    assert result["is_error"] and "MCP server demo failed" in result["content"]
    assert mcp_names(tool_names(fake_api, 1)) == []  # gone from the next request
    send(nv, "again")
    idle(nv)
    assert mcp_names(tool_names(fake_api, 2)) == []
    stopped = "MCP server demo (mcp.servers.demo) stopped"
    notes = [line for line in transcript(nv) if stopped in line]
    assert len(notes) == 1, transcript(nv)
    (server,) = nv.exec_lua("return require('sightline.mcp_client').list()")
    assert server["state"] == "failed"
    nv.command("Sightline mcp restart demo")
    wait_for(
        lambda: (
            nv.exec_lua("return require('sightline.mcp_client').list()")[0]["state"] == "running"
        ),
        TURN_TIMEOUT_S,
        "the restart",
    )


def test_a_server_that_cannot_start_is_reported_once(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    missing = {"command": str(isolated_env / "no-such-server")}
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"gone": missing}})
    send(nv)
    idle(nv)
    send(nv, "again")
    idle(nv)
    (note,) = [line for line in transcript(nv) if "MCP server gone" in line]
    # One line: the server, where its command was configured, the stderr tail once.
    head = "✗ MCP server gone (mcp.servers.gone) did not start: it exited; its stderr: "
    assert note.startswith(head) and note.endswith("; its tools are left out"), note
    assert note.count(missing["command"]) == 1 and note.count("its stderr") == 1, note
    assert mcp_names(tool_names(fake_api, 1)) == []


def test_a_workspace_server_that_fails_names_the_mcp_json_and_its_stderr_once(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    failing = "import sys; sys.stderr.write('warming up\\nbad token in config\\n'); sys.exit(3)"
    carried = {"command": sys.executable, "args": ["-c", failing]}
    (isolated_env / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": carried}}))
    nv = _claude_env(nvim_factory, fake_api, {})
    nv.command("Sightline mcp enable repo")
    send(nv)
    idle(nv)
    notes = [line for line in transcript(nv) if "MCP server repo" in line]
    assert notes == [
        "✗ MCP server repo (.mcp.json) did not start: it exited; its stderr: bad token in "
        "config; its tools are left out"
    ], transcript(nv)


def test_a_tool_with_a_schema_too_large_is_refused_once(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    raw = {"command": sys.executable, "args": [str(RAW), "big"]}
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"raw": raw}})
    send(nv)
    idle(nv)
    send(nv, "again")
    idle(nv)
    assert mcp_names(tool_names(fake_api, 1)) == ["mcp__raw__good"]
    notes = [line for line in transcript(nv) if "not offered" in line]
    assert notes == [
        "⚠ MCP server raw: tool bad not offered (its input schema is larger than 65536 bytes)"
    ], transcript(nv)


def test_servers_whose_tool_names_met_get_one_name_each(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # `a` + `b__c` and `a__b` + `c` were both mcp__a__b__c: the API refused every turn.
    first = {"command": sys.executable, "args": [str(RAW), "name", "b__c", "from a"]}
    second = {"command": sys.executable, "args": [str(RAW), "name", "c", "from a__b"]}
    servers = {"a": {**first, "kind": "read"}, "a__b": {**second, "kind": "read"}}
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": servers})
    fake_api.script(text("listed"))
    send(nv)
    idle(nv)
    names = mcp_names(tool_names(fake_api, 0))
    assert len(names) == 2 and len(set(names)) == 2, names
    listed = {
        s["name"]: s["tools"][0]["api_name"]
        for s in nv.exec_lua("return require('sightline.mcp_client').list()")
    }
    fake_api.script(tool_use(listed["a__b"], {}), text("done"))
    send(nv, "call it")
    idle(nv)
    assert only_result(fake_api, 2)["content"] == "from a__b"


def test_a_listing_with_a_non_object_schema_fails_the_server_once(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # The SDK (2.3) refuses the whole listing: the server is reported, its tools left out.
    raw = {"command": sys.executable, "args": [str(RAW), "string"]}
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"raw": raw}})
    send(nv)
    idle(nv)
    send(nv, "again")
    idle(nv)
    assert mcp_names(tool_names(fake_api, 1)) == []
    failed = "MCP server raw (mcp.servers.raw) did not start"
    notes = [line for line in transcript(nv) if failed in line]
    assert len(notes) == 1 and "inputSchema" in notes[0], transcript(nv)


def test_a_slow_tool_times_out_without_hanging_the_turn(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(
        nvim_factory,
        fake_api,
        {},
        mcp={"servers": {"demo": demo(tools={"slow": "read"})}, "call_timeout_ms": 1000},
    )
    fake_api.script(tool_use("mcp__demo__slow", {"seconds": 60}), text("ok"))
    started = time.monotonic()
    send(nv)
    idle(nv)
    assert time.monotonic() - started < 30
    result = only_result(fake_api)
    assert result["is_error"] and "timed out after 1 s (mcp.call_timeout_ms)" in result["content"]


def test_stop_during_a_call_ends_the_turn_at_once(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(kind="read")}})
    fake_api.script(tool_use("mcp__demo__slow", {"seconds": 60}))
    send(nv)
    wait_for(lambda: any("mcp__demo__slow" in ln for ln in transcript(nv)), TURN_TIMEOUT_S)
    stopped_at = time.monotonic()
    nv.command("Sightline stop")
    wait_for(lambda: status(nv)["state"] == "idle", 5, "the stop")
    assert time.monotonic() - stopped_at < 5
    fake_api.script(tool_use("mcp__demo__lookup", {"word": "w"}), text("fine"))
    send(nv, "go on")
    idle(nv)
    assert "definition of w" in only_result(fake_api, 2)["content"]


@pytest.fixture
def http_demo() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(DEMO), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def up() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    try:
        wait_for(up, 20, "the HTTP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_streamable_http_server_with_a_secret_header(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, http_demo: str
) -> None:
    token = "tok-" + "9" * 20
    server = {
        "url": http_demo,
        "headers": {"Authorization": "Bearer ${env:DEMO_TOKEN}"},
        "tools": {"lookup": "read"},
    }
    nv = _claude_env(
        nvim_factory, fake_api, {"DEMO_TOKEN": token}, mcp={"servers": {"web": server}}
    )
    fake_api.script(tool_use("mcp__web__lookup", {"word": token}), text("ok"))
    send(nv)
    idle(nv)
    content = only_result(fake_api)["content"]
    assert content == "definition of [REDACTED]: a demo word"  # the header's token is a secret
    (listed,) = nv.exec_lua("return require('sightline.mcp_client').list()")
    assert listed["transport"] == "http" and listed["state"] == "running"


def test_env_values_from_the_environment_never_reach_the_model_or_history(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    token = "sekrit-" + "7" * 16
    nv = _claude_env(
        nvim_factory,
        fake_api,
        {"DEMO_TOKEN": token},
        mcp={"servers": {"demo": demo(env={"TOKEN": "${env:DEMO_TOKEN}"}, kind="read")}},
    )
    fake_api.script(tool_use("mcp__demo__env_value", {"name": "TOKEN"}), text("ok"))
    send(nv)
    idle(nv)
    assert only_result(fake_api)["content"] == "TOKEN=[REDACTED]"
    for path in (isolated_env.parent / "xdg").rglob("*"):
        if path.is_file():
            assert token not in path.read_text(errors="replace"), path


def test_a_workspace_mcp_json_is_disabled_until_enabled_and_never_read_only(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    carried = {
        "command": sys.executable,
        "args": [str(DEMO)],
        "kind": "read",
        "tools": {"touch": "read"},
        "trust_annotations": True,
    }
    (isolated_env / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": carried}}))
    nv = _claude_env(nvim_factory, fake_api, {})
    notes = capture_notify(nv)
    send(nv)
    idle(nv)
    assert mcp_names(tool_names(fake_api, 0)) == []
    (listed,) = nv.exec_lua("return require('sightline.mcp_client').list()")
    assert listed["state"] == "disabled" and listed["source"] == "workspace"
    nv.command("Sightline mcp enable repo")
    assert any("enabled for this workspace" in n["msg"] for n in notes())
    nv.command("Sightline plan on")
    send(nv, "plan")
    idle(nv)
    assert mcp_names(tool_names(fake_api, 1)) == []  # its own `kind = read` is ignored
    nv.command("Sightline plan off")
    send(nv, "normal")
    idle(nv)
    assert len(mcp_names(tool_names(fake_api, 2))) == len(DEMO_TOOLS)


def test_an_enabled_workspace_server_whose_command_changed_asks_again(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # Issue 20 §9: the enable was remembered by name, so a `git pull` that changed the
    # server's command ran the new command unasked.
    marker = f"changed-{os.getpid()}-{time.monotonic_ns()}"
    mcp_json = isolated_env / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"repo": demo()}}))
    nv = _claude_env(nvim_factory, fake_api, {})
    nv.command("Sightline mcp enable repo")
    send(nv)
    idle(nv)
    assert len(mcp_names(tool_names(fake_api, 0))) == len(DEMO_TOOLS)
    mcp_json.write_text(json.dumps({"mcpServers": {"repo": demo(args=[str(DEMO), marker])}}))
    send(nv, "after the pull")
    idle(nv)
    assert mcp_names(tool_names(fake_api, 1)) == [] and not processes_with(marker)
    said = [line for line in transcript(nv) if "MCP server repo of .mcp.json" in line]
    assert said == [
        "⚠ MCP server repo of .mcp.json: its args changed since you enabled it; it stays off "
        "until you enable it again (:Sightline mcp enable repo)"
    ], transcript(nv)
    (listed,) = nv.exec_lua("return require('sightline.mcp_client').list()")
    assert listed["state"] == "changed" and "its args changed" in listed["error"]
    nv.command("Sightline mcp enable repo")
    send(nv, "enabled again")
    idle(nv)
    assert len(mcp_names(tool_names(fake_api, 2))) == len(DEMO_TOOLS)
    assert processes_with(marker)


def test_mcp_list_checkhealth_and_completion(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = _claude_env(
        nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(tools={"lookup": "read"})}}
    )
    send(nv)
    idle(nv)
    nv.command("Sightline mcp list")
    shown = nv.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert "demo  stdio · setup() · running · 1 resources" in shown
    assert "mcp__demo__lookup" in shown and "server says: readOnlyHint=true" in shown
    assert nv.call("getcompletion", "Sightline mcp ", "cmdline") == [
        "list",
        "enable",
        "disable",
        "restart",
    ]
    assert nv.call("getcompletion", "Sightline mcp restart ", "cmdline") == ["demo"]
    nv.command("checkhealth sightline")
    health = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "MCP server demo (stdio, setup()): running with 7 tools" in health
    assert "mcp__demo__lookup: read [server says: readOnlyHint=true]" in health
    assert "mcp__demo__touch: exec" in health


def test_the_server_dies_with_the_core_even_on_sigkill(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    marker = f"marker-{os.getpid()}-{time.monotonic_ns()}"
    nv = _claude_env(
        nvim_factory, fake_api, {}, mcp={"servers": {"demo": demo(args=[str(DEMO), marker])}}
    )
    send(nv)
    idle(nv)
    assert processes_with(marker)
    pid = nv.exec_lua("return require('sightline.host').request('core.ping').pid")
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not processes_with(marker), 10, "the server to die with the core")
