"""What reveal and go_to_position refuse, and the deadline on the core's calls into Neovim:
FIFOs, /dev, /proc and /sys (issue 10 §3, §4), buffers holding the API key (§4), and a call
that waited past its deadline (§7)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sightline.editor import port as editor_mod

REVEAL = "return require('sightline.reveal').reveal(...)"
GOTO = "return require('sightline.reveal').go_to_position(...)"
BUFS = "return #vim.api.nvim_list_bufs()"
MARKS = "return #vim.api.nvim_buf_get_extmarks(0, require('sightline.reveal').ns, 0, -1, {})"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/dev/stdin", "is under /dev"),
        ("/dev/zero", "is under /dev"),
        ("/proc/self/environ", "is under /proc"),
        ("/sys/kernel/mm", "is under /sys"),
    ],
)
def test_system_trees_are_refused(nvim: Any, path: str, why: str) -> None:
    before = nvim.exec_lua(BUFS)
    res = nvim.exec_lua(REVEAL, {"file_path": path, "start_line": 1})
    assert why in res and not res.startswith("OK")
    res = nvim.exec_lua(GOTO, {"file_path": path, "line": 1})
    assert why in res and not res.startswith("OK")
    assert nvim.exec_lua(BUFS) == before


def test_fifo_and_links_to_it_are_refused_at_once(nvim: Any, isolated_env: Path) -> None:
    """A FIFO would block Neovim for good when read; a symlink to /dev/stdin too."""
    os.mkfifo(isolated_env / "pipe")
    (isolated_env / "link").symlink_to("/dev/stdin")
    before = nvim.exec_lua(BUFS)
    t0 = time.monotonic()
    res = nvim.exec_lua(REVEAL, {"file_path": "pipe", "start_line": 1})
    assert res == "pipe is not a regular file (fifo)"
    assert nvim.exec_lua(GOTO, {"file_path": "pipe", "line": 1}) == res
    linked = nvim.exec_lua(REVEAL, {"file_path": "link", "start_line": 1})
    assert linked.startswith("link ") and ("never opens" in linked or "not a regular" in linked)
    assert time.monotonic() - t0 < 2
    assert nvim.exec_lua(BUFS) == before


def test_a_buffer_holding_the_key_is_never_shown(
    nvim_factory: Callable[..., Any], isolated_env: Path
) -> None:
    key = "sk-ant-test-0123456789abcdef"
    (isolated_env / ".env").write_text(f"A=1\nANTHROPIC_API_KEY={key}\n")
    (isolated_env / "ok.txt").write_text("nothing here\n")
    nv = nvim_factory({"provider": {"name": "echo"}}, {"ANTHROPIC_API_KEY": key})
    res = nv.exec_lua(REVEAL, {"file_path": ".env", "start_line": 1})
    assert res == "refused: line 2 of .env holds an API key, and sightline never shows it"
    assert key not in res
    assert nv.exec_lua(GOTO, {"file_path": ".env", "line": 1}).startswith("refused: line 2")
    assert nv.exec_lua(MARKS) == 0
    # A key only the core knows (api_key_cmd) comes along with the call.
    other = "another-secret-4242"
    (isolated_env / "b.txt").write_text(f"x\n{other}\n")
    assert nv.exec_lua(REVEAL, {"file_path": "b.txt", "start_line": 1}).startswith("OK")
    res = nv.exec_lua(
        "local o, k = ... return require('sightline.reveal').reveal(o, {secrets = {k}})",
        {"file_path": "b.txt", "start_line": 1},
        other,
    )
    assert res == "refused: line 2 of b.txt holds an API key, and sightline never shows it"
    assert nv.exec_lua(REVEAL, {"file_path": "ok.txt", "start_line": 1}) == "OK"


def test_the_lua_side_drops_a_call_past_its_deadline(nvim: Any) -> None:
    # Every port call carries its deadline (the core's worker threads, the MCP server's calls)
    args = {"file_path": "x", "line": 1}
    call: tuple[str, str, dict[str, Any], list[Any]] = (
        editor_mod.PORT_CALL,
        "go_to_position",
        args,
        [],
    )
    late = nvim.exec_lua(call[0], time.time() - 1, *call[1:])
    assert late == editor_mod.EXPIRED
    assert nvim.exec_lua(call[0], time.time() + 30, *call[1:]) != editor_mod.EXPIRED
    assert nvim.exec_lua(call[0], None, "no_such_function") == editor_mod.NO_SUCH
