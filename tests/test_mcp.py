"""The MCP server, driven by the `mcp` SDK's own stdio client against a child Neovim that
listens on a socket (as an external agent would find it through $NVIM)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests import child
from tests.child import NVIM
from tests.conftest import ROOT, wait_for

MARKS = "return vim.api.nvim_buf_get_extmarks(0, require('sightline.reveal').ns, 0, -1, {})"


def attach(sock: str) -> Any:
    """A connection, or None while Neovim is not yet listening (the socket file comes first)."""
    if not os.path.exists(sock):
        return None
    try:
        return pynvim.attach("socket", path=sock)
    except OSError:
        return None


@pytest.fixture
def listening(isolated_env: Path, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """(socket, pynvim connection) of a headless Neovim with code.txt open."""
    (isolated_env / "code.txt").write_text("".join(f"line {i}\n" for i in range(1, 201)))
    sock = str(tmp_path / "nvim.sock")
    init = child.write_init(child.init_lua({"provider": {"name": "echo"}}), tmp_path)
    proc = subprocess.Popen(
        child.argv(init, "--listen", sock, "code.txt", embed=False),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    nvim = wait_for(lambda: attach(sock), what="the Neovim socket")
    try:
        yield sock, nvim
    finally:
        nvim.close()
        proc.terminate()
        proc.wait(10)


def server_params(args: list[str], env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sightline.mcp", *args],
        env={"PYTHONPATH": str(ROOT / "python"), **(env or {})},
    )


def with_session(
    params: StdioServerParameters, body: Callable[[ClientSession], Awaitable[Any]]
) -> Any:
    async def run() -> Any:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await body(session)

    return asyncio.run(run())


def text_of(result: Any) -> tuple[str, bool]:
    assert len(result.content) == 1
    return result.content[0].text, bool(result.is_error)


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


def test_no_address_is_a_clear_error() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NVIM"}
    res = run_main("from sightline.mcp import main; raise SystemExit(main([]))", env)
    assert res.returncode == 2 and "no Neovim to attach to" in res.stderr and res.stdout == ""


def test_missing_sdk_is_a_clear_error() -> None:
    code = "import sys; sys.modules['mcp'] = None\n"
    code += "from sightline.mcp import main; raise SystemExit(main(['--server', 'x']))"
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
    assert text == "Neovim did not answer within 0.5 s (is it busy or waiting for input?)"
