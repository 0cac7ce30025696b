"""The agent's reveal_editor_range via the loopback Messages server: it flashes, moves nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import claude, idle, only_result, send
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.lua_helper import lua_helper

__all__ = ["fake_api"]


def test_model_reveals_a_range_without_moving_anything(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "long.py").write_text("".join(f"x{i} = {i}\n" for i in range(200)))
    nv = claude(nvim_factory, fake_api)
    nv.command("edit long.py")
    nv.api.win_set_cursor(0, (5, 0))
    tick = nv.api.buf_get_var(0, "changedtick")
    args = {"file_path": "long.py", "start_line": 120, "end_line": 125, "duration_ms": 60000}
    fake_api.script(tool_use("reveal_editor_range", args), text("there"))
    send(nv, "show me")
    idle(nv)
    assert only_result(fake_api)["content"].startswith("OK")
    assert lua_helper(nv, "marks.band") == [[119, 125]]
    assert nv.api.win_get_cursor(0) == [5, 0]
    assert nv.api.buf_get_var(0, "changedtick") == tick
    assert nv.api.get_mode()["mode"] == "n"


def test_invalid_reveal_is_a_tool_error(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "short.py").write_text("a\nb\n")
    nv = claude(nvim_factory, fake_api)
    args = {"file_path": "short.py", "start_line": 1, "end_line": 90}
    fake_api.script(tool_use("reveal_editor_range", args), text("sorry"))
    send(nv, "show me")
    idle(nv)
    result = only_result(fake_api)
    assert (
        result["is_error"]
        and "end_line 90 is past the end of short.py (2 lines)" in result["content"]
    )
