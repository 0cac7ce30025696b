"""Change with Agent: entry points, the wire's refusals, and the user message the model sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sightline.domain.scope import fence_for
from tests.agent_util import claude
from tests.conftest import status, wait_for, wait_idle
from tests.fakeapi import FakeAnthropic, fake_api, hold

__all__ = ["fake_api"]


def open_file(nv: Any, path: Path, content: str) -> int:
    path.write_text(content)
    nv.command(f"edit {path}")
    return int(nv.api.get_current_buf().number)


def send_range(nv: Any, msg: str, **rng: Any) -> list[Any]:
    return list(nv.exec_lua("return {require('sightline').send(...)}", msg, rng))


def user_parts(server: FakeAnthropic) -> list[str]:
    (req,) = server.wait_for_requests(1)
    texts = [p["text"] for p in req.body["messages"][0]["content"]]
    # The part naming the chips for reveal_attachment is checked in tests/unit/test_chips.py.
    return [t for t in texts if not t.startswith("Code references in this message")]


def test_scoped_message_is_instruction_then_named_fenced_block(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    (isolated_env / "src").mkdir()
    buf = open_file(nv, isolated_env / "src" / "app.py", "a = 1\ndef f():\n    return 2\nb = 3\n")
    res = send_range(nv, "make it 3", buffer=buf, start_row=1, start_col=0, end_row=2, end_col=12)
    assert res == [True]
    assert status(nv)["scope"] == {
        "buffer": buf,
        "start_row": 1,
        "start_col": 0,
        "end_row": 2,
        "end_col": 12,
    }
    instruction, block = user_parts(fake_api)
    assert instruction == "make it 3"
    assert block.startswith("The selection: src/app.py, lines 2–3.")
    assert block.endswith("```python\ndef f():\n    return 2\n```")
    wait_idle(nv)
    assert status(nv).get("scope") is None


@pytest.mark.parametrize(
    ("content", "fence"),
    [("x = '```'", "````"), ("a ```` b ``` c", "`````"), ("# Title\n\n* item", "```")],
)
def test_fence_is_longer_than_any_backtick_run(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, content: str, fence: str
) -> None:
    assert fence_for(content) == fence
    nv = claude(nvim_factory, fake_api)
    buf = open_file(nv, isolated_env / "notes.md", content + "\n")
    last = content.split("\n")
    send_range(
        nv,
        "tidy",
        buffer=buf,
        start_row=0,
        start_col=0,
        end_row=len(last) - 1,
        end_col=len(last[-1]),
    )
    block = user_parts(fake_api)[1]
    assert block.endswith(f"{fence}markdown\n{content}\n{fence}")


def test_untitled_buffer_is_named_by_number(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api)
    nv.command("enew")
    nv.api.buf_set_lines(0, 0, -1, False, ["scratch text"])
    buf = nv.api.get_current_buf().number
    assert send_range(nv, "x", buffer=0, start_row=0, start_col=0, end_row=0, end_col=7) == [True]
    assert user_parts(fake_api)[1].startswith(f"The selection: [No Name] (buffer {buf}), line 1.")
    assert "```\nscratch\n```" in user_parts(fake_api)[1]


REFUSALS = [
    ({"buffer": 999, "start_row": 0, "start_col": 0, "end_row": 0, "end_col": 1}, "does not exist"),
    (
        {"buffer": 0, "start_row": 0, "start_col": 0, "end_row": 5, "end_col": 0},
        "end_row 5 is outside",
    ),
    (
        {"buffer": 0, "start_row": 0, "start_col": 0, "end_row": 0, "end_col": 9},
        "end_col 9 is outside",
    ),
    ({"buffer": 0, "start_row": 1, "start_col": 2, "end_row": 1, "end_col": 2}, "empty"),
    ({"buffer": 0, "start_row": 1, "start_col": 2, "end_row": 0, "end_col": 0}, "ends before"),
    (
        {"buffer": 0, "start_row": -1, "start_col": 0, "end_row": 0, "end_col": 1},
        "start_row: expected a whole number",
    ),
    (
        {"buffer": 0, "start_row": 0.5, "start_col": 0, "end_row": 0, "end_col": 1},
        "start_row must be an integer",  # refused by send()'s own check, before the core
    ),
]


@pytest.mark.parametrize(("rng", "expected"), REFUSALS)
def test_bad_ranges_are_refused_before_any_turn(
    nvim_factory: Any,
    fake_api: FakeAnthropic,
    isolated_env: Path,
    rng: dict[str, Any],
    expected: str,
) -> None:
    nv = claude(nvim_factory, fake_api)
    open_file(nv, isolated_env / "a.txt", "line one\nline two\n")
    ok, err = send_range(nv, "do it", **rng)
    assert ok is None and expected in err
    assert fake_api.requests == []
    # No turn: the core is idle, starting, or not even started (send()'s own check refused).
    assert status(nv)["state"] in ("idle", "starting", "stopped")
    assert not list((isolated_env.parent / "xdg" / "data").rglob("*.jsonl")) or all(
        "do it" not in p.read_text()
        for p in (isolated_env.parent / "xdg" / "data").rglob("*.jsonl")
    )


def test_unloaded_buffer_and_running_turn_are_refused(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    (isolated_env / "other.txt").write_text("zzz\n")
    unloaded = nv.call("bufadd", str(isolated_env / "other.txt"))
    ok, err = send_range(nv, "x", buffer=unloaded, start_row=0, start_col=0, end_row=0, end_col=1)
    assert ok is None and "not loaded" in err
    buf = open_file(nv, isolated_env / "a.txt", "abc\n")
    fake_api.script(hold(after_events=3))
    assert nv.exec_lua("return {require('sightline').send('busy')}") == [True]
    ok, err = send_range(nv, "x", buffer=buf, start_row=0, start_col=0, end_row=0, end_col=1)
    assert ok is None and "already running" in err
    fake_api.release()
    wait_idle(nv)


def test_unchangeable_buffer_is_refused(nvim_factory: Any, fake_api: FakeAnthropic) -> None:
    nv = claude(nvim_factory, fake_api)
    nv.api.buf_set_lines(0, 0, -1, False, ["fixed"])
    nv.command("setlocal nomodifiable")
    ok, err = send_range(nv, "x", buffer=0, start_row=0, start_col=0, end_row=0, end_col=5)
    assert ok is None and "not modifiable" in err


def visual_range(nv: Any, keys: str) -> dict[str, Any]:
    nv.input(keys)
    wait_for(lambda: nv.api.get_mode()["mode"] in ("v", "V", "\x16"))
    return dict(
        nv.exec_lua(
            "local r, e = require('sightline.ui.change').current_selection()"
            " return r or {error = e}"
        )
    )


def test_selection_shapes(nvim: Any) -> None:
    nvim.api.buf_set_lines(0, 0, -1, False, ["héllo wörld", "second line", "ünï"])
    nvim.api.win_set_cursor(0, (1, 1))  # on the é (2 bytes)
    r = visual_range(nvim, "v")
    assert (r["start_col"], r["end_col"]) == (1, 3)  # the whole é, not half of it
    nvim.input("<Esc>")
    nvim.api.win_set_cursor(0, (1, 0))
    r = visual_range(nvim, "v$")
    assert (r["start_row"], r["end_row"], r["end_col"]) == (0, 0, len("héllo wörld".encode()))
    nvim.input("<Esc>")
    nvim.api.win_set_cursor(0, (2, 3))
    r = visual_range(nvim, "Vj")
    assert r == {
        "buffer": 1,
        "start_row": 1,
        "start_col": 0,
        "end_row": 2,
        "end_col": len("ünï".encode()),
    }
    nvim.input("<Esc>")
    nvim.api.win_set_cursor(0, (3, 0))
    r = visual_range(nvim, "vl")
    assert (r["start_col"], r["end_col"]) == (0, len("ün".encode()))
    nvim.input("<Esc>")
    r = visual_range(nvim, "<C-v>j")
    assert "blockwise" in r["error"]
