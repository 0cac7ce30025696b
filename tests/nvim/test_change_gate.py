"""Change with Agent through the gate: only the selection can change, whatever the model does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import (
    claude,
    decide,
    idle,
    lines,
    only_result,
    tool_names,
    tool_results,
    wait_pending,
)
from tests.change_util import SCOPED_TOOLS, scoped_send
from tests.conftest import status
from tests.fakeapi import FakeAnthropic, fake_api, reply, text, tool_use

__all__ = ["fake_api"]

SCOPED_PLAN_TOOLS = [
    "read_file",
    "list_files",
    "grep",
    "get_diagnostics",
    "update_plan",
    "reveal_editor_range",
    "reveal_attachment",
]
CONTENT = "header\nkeep above\ndef f():\n    return 1\nkeep below\n"


def open_app(nv: Any, ws: Path, content: str = CONTENT) -> tuple[int, Path]:
    path = ws / "app.py"
    path.write_text(content)
    nv.command(f"edit {path}")
    return int(nv.api.get_current_buf().number), path


def test_scoped_tool_lists_exactly(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    buf, _ = open_app(nv, isolated_env)
    scoped_send(nv, buf, 2, 0, 3, 12)
    idle(nv)
    assert sorted(tool_names(fake_api, 0)) == sorted(SCOPED_TOOLS)
    nv.command("Sightline plan on")
    scoped_send(nv, buf, 2, 0, 3, 12)
    idle(nv)
    assert sorted(tool_names(fake_api, 1)) == sorted(SCOPED_PLAN_TOOLS)
    nv.command("Sightline plan off")
    assert nv.exec_lua("return {require('sightline').send('ordinary')}") == [True]
    idle(nv)
    normal = tool_names(fake_api, 2)
    assert "replace_selection" not in normal and "propose_edit" in normal


def test_accept_replaces_only_the_selection_one_undo_step_and_saves(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    buf, path = open_app(nv, isolated_env)
    fake_api.script(tool_use("replace_selection", {"text": "def f():\n    return 2"}), text("done"))
    scoped_send(nv, buf, 2, 0, 3, 12)
    st = wait_pending(nv)
    assert st["pending"].startswith("edit app.py")
    decide(nv, "accept")
    idle(nv)
    assert path.read_text() == "header\nkeep above\ndef f():\n    return 2\nkeep below\n"
    assert "accepted: app.py was changed and saved" in only_result(fake_api)["content"]
    nv.command("undo")
    assert lines(nv, buf) == CONTENT.splitlines()


def test_second_replace_replaces_the_first_ones_text(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    buf, _ = open_app(nv, isolated_env)
    fake_api.script(
        tool_use("replace_selection", {"text": "one\ntwo\nthree"}),
        tool_use("replace_selection", {"text": "final"}),
        text("ok"),
    )
    scoped_send(nv, buf, 2, 4, 2, 5)  # "f"
    idle(nv)
    assert lines(nv, buf) == ["header", "keep above", "def final():", "    return 1", "keep below"]
    assert status(nv).get("scope") is None


def test_reject_changes_nothing_and_tells_the_model(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    buf, path = open_app(nv, isolated_env)
    fake_api.script(tool_use("replace_selection", {"text": "nope"}), text("ok"))
    scoped_send(nv, buf, 2, 0, 3, 12)
    wait_pending(nv)
    decide(nv, "reject", "keep it")
    idle(nv)
    assert lines(nv, buf) == CONTENT.splitlines() and path.read_text() == CONTENT
    result = only_result(fake_api)
    assert result["is_error"] and "keep it" in result["content"]


def test_adversarial_model_cannot_touch_anything_outside(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    other = isolated_env / "other.py"
    other.write_text("untouched\n")
    marker = isolated_env / "ran"
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    buf, path = open_app(nv, isolated_env)
    fake_api.script(
        reply(
            tool_use(
                "propose_edit",
                {"path": "other.py", "old_string": "untouched", "new_string": "x"},
                id="t1",
            ),
            tool_use("propose_create", {"path": "new.py", "content": "x"}, id="t2"),
            tool_use("run_command", {"command": f"touch {marker}"}, id="t3"),
            tool_use("go_to_position", {"file_path": "other.py", "line": 1}, id="t4"),
            tool_use("delete_everything", {}, id="t5"),
            tool_use("replace_selection", {"text": "Z" * 300_000}, id="t6"),
        ),
        text("done"),
    )
    cursor = nv.api.win_get_cursor(0)
    scoped_send(nv, buf, 2, 0, 3, 12)
    idle(nv)
    results = {r["tool_use_id"]: r for r in tool_results(fake_api, 1)}
    for refused in ("t1", "t2", "t3", "t4", "t5"):
        assert results[refused]["is_error"] and "not available" in results[refused]["content"]
    assert not results["t6"].get("is_error")
    assert other.read_text() == "untouched\n"
    assert not (isolated_env / "new.py").exists() and not marker.exists()
    assert nv.api.win_get_cursor(0) == cursor
    got = path.read_text()
    assert got == "header\nkeep above\n" + "Z" * 300_000 + "\nkeep below\n"
    assert sorted(os.listdir(isolated_env)) == ["app.py", "other.py"]


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        ("moved", None),
        ("duplicated", "more than once"),
        ("edited", "no longer in the buffer"),
        ("deleted", "no longer in the buffer"),
    ],
)
def test_reanchoring_between_proposal_and_accept(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, change: str, expect: str | None
) -> None:
    nv = claude(nvim_factory, fake_api)
    buf, _ = open_app(nv, isolated_env)
    fake_api.script(tool_use("replace_selection", {"text": "def g():\n    return 9"}), text("ok"))
    scoped_send(nv, buf, 2, 0, 3, 12)
    wait_pending(nv)
    if change == "moved":
        nv.api.buf_set_lines(buf, 0, 0, False, ["# inserted", "# above"])
    elif change == "duplicated":
        nv.api.buf_set_lines(buf, 0, 0, False, ["def f():", "    return 1"])
    elif change == "edited":
        nv.api.buf_set_text(buf, 3, 11, 3, 12, ["5"])
    else:
        nv.api.buf_set_lines(buf, 2, 4, False, [])
    before = lines(nv, buf)
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)
    if expect is None:
        assert lines(nv, buf) == [
            "# inserted",
            "# above",
            "header",
            "keep above",
            "def g():",
            "    return 9",
            "keep below",
        ]
        assert not result.get("is_error")
    else:
        assert lines(nv, buf) == before
        assert result["is_error"] and expect in result["content"]


def test_untitled_buffer_is_changed_and_never_saved(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    nv.command("enew")
    nv.api.buf_set_lines(0, 0, -1, False, ["scratch one", "scratch two"])
    buf = nv.api.get_current_buf().number
    fake_api.script(tool_use("replace_selection", {"text": "ONE"}), text("ok"))
    scoped_send(nv, buf, 0, 8, 0, 11)
    idle(nv)
    assert lines(nv, buf) == ["scratch ONE", "scratch two"]
    assert "no file" in only_result(fake_api)["content"]
    assert os.listdir(isolated_env) == []


def test_buffer_with_unsaved_user_changes_stays_modified(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api, autoaccept=True)
    buf, path = open_app(nv, isolated_env)
    nv.api.buf_set_lines(buf, 0, 1, False, ["user edit"])
    fake_api.script(tool_use("replace_selection", {"text": "X"}), text("ok"))
    scoped_send(nv, buf, 4, 0, 4, 4)
    idle(nv)
    assert path.read_text() == CONTENT
    assert nv.api.buf_get_option(buf, "modified") is True
    assert lines(nv, buf)[4] == "X below"
