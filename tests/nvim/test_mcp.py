"""The MCP server, driven by the `mcp` SDK's own stdio client against a child Neovim that
listens on a socket (as an external agent would find it through $NVIM)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters

from tests.child import NVIM
from tests.conftest import ROOT, wait_for
from tests.mcp_util import attach, listening, server_params, text_of, with_session

__all__ = ["listening"]

MARKS = "return vim.api.nvim_buf_get_extmarks(0, require('sightline.reveal').ns, 0, -1, {})"


def test_lists_exactly_the_three_tools(listening: tuple[str, Any]) -> None:
    sock, _ = listening

    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in with_session(server_params(["--server", sock]), body)}
    assert set(tools) == {"reveal_editor_range", "reveal_attachment", "go_to_position"}
    reveal = tools["reveal_editor_range"].input_schema
    assert reveal["required"] == []  # file_path, or anchor_json
    assert set(reveal["properties"]) == {
        "file_path", "start_line", "end_line", "member_key", "syntax_scope", "duration_ms",
        "anchor_json",
    }  # fmt: skip
    assert tools["reveal_attachment"].input_schema["required"] == ["attachment_id"]
    assert tools["go_to_position"].input_schema["required"] == ["file_path", "line"]


def test_reveal_and_go_to_position_through_mcp(listening: tuple[str, Any]) -> None:
    sock, nvim = listening
    nvim.api.win_set_cursor(0, [3, 0])
    nvim.input("vj")
    wait_for(lambda: nvim.api.get_mode()["mode"] == "v")

    async def reveal(session: ClientSession) -> Any:
        ok = await session.call_tool(
            "reveal_editor_range",
            {"file_path": "code.txt", "start_line": 120, "end_line": 125, "duration_ms": 5000},
        )
        bad = await session.call_tool(
            "reveal_editor_range", {"file_path": "code.txt", "start_line": 190, "end_line": 290}
        )
        missing = await session.call_tool("reveal_editor_range", {"file_path": "nope.txt"})
        return ok, bad, missing

    ok, bad, missing = with_session(server_params(["--server", sock]), reveal)
    assert text_of(ok) == ("OK", False)
    assert nvim.api.get_mode()["mode"] == "v" and nvim.api.win_get_cursor(0) == [4, 0]
    assert [m[1] for m in nvim.exec_lua(MARKS)] == [119, 119]  # band and bar from line 120
    assert text_of(bad) == ("end_line 290 is past the end of code.txt (200 lines)", True)
    assert text_of(missing) == ("start_line is required (or give member_key)", True)

    async def goto(session: ClientSession) -> Any:
        return await session.call_tool(
            "go_to_position", {"file_path": "code.txt", "line": 50, "column": 3}
        )

    assert text_of(with_session(server_params(["--server", sock]), goto)) == ("OK", False)
    wait_for(lambda: nvim.api.win_get_cursor(0) == [50, 2] and nvim.api.get_mode()["mode"] == "n")


def test_attaches_through_the_nvim_variable(listening: tuple[str, Any]) -> None:
    sock, nvim = listening

    async def body(session: ClientSession) -> Any:
        return await session.call_tool(
            "reveal_editor_range",
            {"file_path": "code.txt", "start_line": 2, "end_line": 3, "duration_ms": 5000},
        )

    assert text_of(with_session(server_params([], {"NVIM": sock}), body)) == ("OK", False)
    assert len(nvim.exec_lua(MARKS)) == 2


def test_unreachable_neovim_is_a_tool_error(tmp_path: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return await session.call_tool("reveal_editor_range", {"file_path": "x", "start_line": 1})

    text, is_error = text_of(with_session(server_params(["--server", str(tmp_path / "no")]), body))
    assert is_error and text.startswith(f"cannot reach Neovim at {tmp_path / 'no'}")


def test_neovim_without_the_plugin(tmp_path: Path) -> None:
    sock = str(tmp_path / "bare.sock")
    proc = subprocess.Popen(
        [NVIM, "--headless", "--clean", "--listen", sock],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: attach(sock), what="the bare Neovim socket").close()

        async def body(session: ClientSession) -> Any:
            return await session.call_tool("go_to_position", {"file_path": "x", "line": 1})

        text, is_error = text_of(with_session(server_params(["--server", sock]), body))
        assert is_error and text.startswith("sightline is not installed in this Neovim")
    finally:
        proc.terminate()
        proc.wait(10)


def run_main(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "PYTHONPATH": str(ROOT / "python")},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_no_address_starts_and_explains_on_each_call() -> None:
    """Issue 9 item 18: without $NVIM or --server the server still starts (a client that saw
    only "Connection closed" could not tell why) and every call answers how to fix it."""
    env = {k: v for k, v in os.environ.items() if k != "NVIM"}

    async def body(session: ClientSession) -> Any:
        tools = (await session.list_tools()).tools
        return tools, await session.call_tool("go_to_position", {"file_path": "x", "line": 1})

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sightline.mcp"],
        env={**env, "PYTHONPATH": str(ROOT / "python")},
    )
    tools, result = with_session(params, body)
    assert len(tools) == 3
    text, is_error = text_of(result)
    assert is_error and "no Neovim to attach to" in text and "--server ADDR" in text
    assert "inspector -- sightline-mcp --server" in text


def test_missing_sdk_is_a_clear_error() -> None:
    code = "import sys; sys.modules['mcp'] = None\n"
    code += "from sightline.entry.mcp import main; raise SystemExit(main(['--server', 'x']))"
    res = run_main(code, dict(os.environ))
    assert res.returncode == 2 and "pip install 'sightline[mcp]'" in res.stderr


def test_busy_neovim_times_out_instead_of_hanging(listening: tuple[str, Any]) -> None:
    sock, _ = listening
    busy = "local t = vim.uv.hrtime() while vim.uv.hrtime() - t < 2e9 do end"
    expr = f"luaeval('vim.defer_fn(function() {busy} end, 0) and 1')"

    async def body(session: ClientSession) -> Any:
        # Another client makes Neovim busy for 2 s right after answering: API calls wait
        subprocess.run([NVIM, "--server", sock, "--remote-expr", expr], check=True, timeout=10)
        return await session.call_tool(
            "reveal_editor_range", {"file_path": "code.txt", "start_line": 1}
        )

    params = server_params(["--server", sock, "--timeout", "0.5"])
    text, is_error = text_of(with_session(params, body))
    assert is_error
    assert text == (
        "Neovim did not answer within 0.5 s (is it busy or waiting for input?); "
        "the call was dropped and will not run later"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"start_line": "5"}, 'start_line must be an integer, got the string "5"'),
        ({"start_line": "abc"}, 'start_line must be an integer, got the string "abc"'),
        ({"start_line": 2.5}, "start_line must be an integer, got the number 2.5"),
        ({"start_line": True}, "start_line must be an integer, got the boolean true"),
        ({"member_key": 3}, "member_key must be a string, got the number 3"),
        (
            {"start_line": 1, "line": 4},
            "unknown argument line (reveal_editor_range takes: file_path, start_line, "
            "end_line, member_key, syntax_scope, duration_ms, anchor_json)",
        ),
        (
            {"start_line": 1, "anchor_json": '{"file_path": "code.txt"}'},
            "give either anchor_json or file_path, start_line, not both",
        ),
        ({"anchor_json": "[1]"}, "anchor_json must be one JSON object"),
        ({"anchor_json": [1]}, "anchor_json must be one JSON object"),
        ({"anchor_json": 7}, "anchor_json must be one JSON object"),
        ({"anchor_json": {"file": "x"}}, "anchor_json: unknown field file"),
        ({"anchor_json": "{"}, "anchor_json is not valid JSON"),
        ({"anchor_json": '{"file": "x"}'}, "anchor_json: unknown field file"),
        (
            {"anchor_json": '{"file_path": "code.txt", "start_line": "7"}'},
            "anchor_json: start_line",
        ),
    ],
)
def test_bad_arguments_name_the_real_problem(
    listening: tuple[str, Any], args: dict[str, Any], error: str
) -> None:
    """Issue 9 item 18: a wrong type is named as such, unknown arguments are refused, and
    nothing is revealed."""
    sock, nvim = listening
    call = {"file_path": "code.txt", **args}
    if "anchor_json" in args and "start_line" not in args:
        call.pop("file_path")

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("reveal_editor_range", call)

    text, is_error = text_of(with_session(server_params(["--server", sock]), body))
    assert is_error and text.startswith(error), text
    assert nvim.exec_lua(MARKS) == []


def test_go_to_position_refuses_unknown_arguments(listening: tuple[str, Any]) -> None:
    sock, nvim = listening

    async def body(session: ClientSession) -> Any:
        return await session.call_tool(
            "go_to_position", {"file_path": "code.txt", "line": 9, "col": 2}
        )

    text, is_error = text_of(with_session(server_params(["--server", sock]), body))
    assert is_error and text.startswith("unknown argument col (go_to_position takes:")
    assert nvim.api.win_get_cursor(0) == [1, 0]


@pytest.mark.parametrize(
    "anchor",
    [
        '{"file_path": "code.txt", "start_line": 40, "end_line": 42}',
        {"file_path": "code.txt", "start_line": 40, "end_line": 42},  # as MCP Inspector 2.x
    ],
    ids=["JSON text", "object"],
)
def test_anchor_json_reveals_like_flat_arguments(
    listening: tuple[str, Any], anchor: str | dict[str, Any]
) -> None:
    sock, nvim = listening

    async def body(session: ClientSession) -> Any:
        return await session.call_tool(
            "reveal_editor_range", {"anchor_json": anchor, "duration_ms": 5000}
        )

    assert text_of(with_session(server_params(["--server", sock]), body)) == ("OK", False)
    assert [m[1] for m in nvim.exec_lua(MARKS)] == [39, 39]


def test_reveal_attachment_resolves_a_chip_in_neovim(listening: tuple[str, Any]) -> None:
    """The MCP server has no core: the chip ids resolve in Neovim's chips module. A message
    mentioning @code.txt makes a chip whose id the model was told."""
    sock, nvim = listening
    from sightline.ui.chips import attachment_id

    nvim.exec_lua("assert(require('sightline').send('look at @code.txt'))")
    aid = attachment_id({"file_path": "code.txt", "start_line": 1, "end_line": 1}, "file")
    probe = "return require('sightline.ui.chips').reveal_by_id({attachment_id = ...}) ~= nil"
    wait_for(lambda: nvim.exec_lua(probe, aid), what="the chip")
    nvim.exec_lua("require('sightline.reveal').clear()")

    async def body(session: ClientSession) -> Any:
        good = await session.call_tool("reveal_attachment", {"attachment_id": aid})
        bad = await session.call_tool("reveal_attachment", {"attachment_id": "sel-00000000"})
        kind = await session.call_tool("reveal_attachment", {"attachment_id": aid, "select": 1})
        return good, bad, kind

    good, bad, kind = with_session(server_params(["--server", sock]), body)
    assert text_of(good) == ("OK", False)
    assert [m[1] for m in nvim.exec_lua(MARKS)] == [0, 0]
    assert text_of(bad)[1] and text_of(bad)[0].startswith('no attachment "sel-00000000"')
    assert text_of(kind) == ("select must be a boolean, got the number 1", True)


def raw_server(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "sightline.entry.mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
    )


def rpc(proc: subprocess.Popen[bytes], msg: dict[str, Any]) -> dict[str, Any] | None:
    import json

    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")
    proc.stdin.flush()
    if "id" not in msg:
        return None
    while True:
        answer: dict[str, Any] = json.loads(proc.stdout.readline())
        if answer.get("id") == msg["id"]:
            return answer


def test_timed_out_call_never_acts_later(listening: tuple[str, Any]) -> None:
    """Issue 10 §7: while Neovim is busy a go_to_position times out; when Neovim is free
    again nothing has moved, and the server exits at once when its client leaves."""
    import time

    sock, nvim = listening
    proc = raw_server(["--server", sock, "--timeout", "1"])
    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
        assert rpc(proc, {"id": 1, "method": "initialize", "params": init})
        rpc(proc, {"method": "notifications/initialized"})
        # The server connects to Neovim on its first call: make that happen before the sleep.
        call = {"name": "reveal_editor_range",
                "arguments": {"file_path": "code.txt", "start_line": 1}}  # fmt: skip
        assert rpc(proc, {"id": 2, "method": "tools/call", "params": call})
        nvim.exec_lua("vim.defer_fn(function() vim.uv.sleep(3000) end, 0)")
        time.sleep(0.2)  # the deferred sleep has started (nothing to await from outside)
        t0 = time.monotonic()
        call = {"name": "go_to_position", "arguments": {"file_path": "code.txt", "line": 150}}
        answer = rpc(proc, {"id": 3, "method": "tools/call", "params": call})
        took = time.monotonic() - t0
        assert answer and answer["result"]["isError"] is True
        assert "did not answer within 1 s" in answer["result"]["content"][0]["text"]
        assert took < 2.0
        # Neovim is free again (this waits for the sleep) while the server still runs: the
        # call that timed out did nothing.
        assert nvim.eval("1") == 1
        nvim.command("sleep 300m")  # a late go_to_position would defer its work this long
        assert nvim.api.win_get_cursor(0) == [1, 0]
        # A later call works as usual: the connection is still good.
        call = {"name": "reveal_editor_range",
                "arguments": {"file_path": "code.txt", "start_line": 3}}  # fmt: skip
        answer = rpc(proc, {"id": 4, "method": "tools/call", "params": call})
        assert answer and answer["result"]["content"][0]["text"] == "OK"
        # The server leaves at once when its client does, even with a call stuck in Neovim.
        nvim.exec_lua("vim.defer_fn(function() vim.uv.sleep(3000) end, 0)")
        time.sleep(0.2)
        answer = rpc(proc, {"id": 5, "method": "tools/call", "params": call})
        assert answer and answer["result"]["isError"] is True
        assert proc.stdin
        proc.stdin.close()
        t0 = time.monotonic()
        proc.wait(5)
        assert time.monotonic() - t0 < 1.5  # gone while Neovim still sleeps
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert nvim.api.get_mode()["mode"] == "n"
