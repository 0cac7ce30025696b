"""A headless Neovim listening on a socket and the `mcp` SDK's stdio client, for MCP tests."""

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
from tests.conftest import ROOT, wait_for


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
