"""No Lua the core calls ever calls the core: an external agent's reveal of a Python member is
resolved by the MCP server itself (pyresolve) and never starts a core in Neovim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession

from tests.mcp_util import listening, server_params, text_of, with_session

__all__ = ["listening"]

PY_SRC = "import os\n\n\nclass Parser:\n    def parse(self):\n        return 1\n\n\nx = 2\n"


def children(pid: int) -> list[str]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return path.read_text().split() if path.exists() else []


def test_mcp_reveal_of_a_python_member_starts_no_core(
    listening: tuple[str, Any], isolated_env: Path
) -> None:
    sock, nvim = listening
    (isolated_env / "a.py").write_text(PY_SRC)
    pid = nvim.eval("getpid()")
    assert children(pid) == []

    async def body(session: ClientSession) -> Any:
        args = {"file_path": "a.py", "member_key": "Parser.parse"}
        return await session.call_tool("reveal_editor_range", args)

    text, is_error = text_of(with_session(server_params(["--server", sock]), body))
    assert (text, is_error) == ("OK", False)
    last = nvim.exec_lua(
        "local l = require('sightline.reveal').last return {l.start_line, l.end_line}"
    )
    assert last == [5, 6]
    assert children(pid) == []  # no core process was started
    assert nvim.exec_lua("return package.loaded['sightline.resolve.python'] == nil") is True
