"""The review's outcome as the user reads it: the transcript speaks to the user (which hunks
were applied, which rejected and why); the model's wording ("your edit", "the user
applied") stays in the tool result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent_util import claude, edit, only_result, send, wait_pending
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.screen import Screen

__all__ = ["fake_api"]

SOURCE = "".join(f"line {i}\n" for i in range(1, 13))
# Three hunks: a change (line 2), a deletion (line 6), an addition (after line 10).
OLD = "line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n"
NEW = "line 2 CHANGED\nline 3\nline 4\nline 5\nline 7\nline 8\nline 9\nline 10\nadded one\n"


def shown(nv: Any) -> Any:
    return nv.exec_lua("return require('sightline.ui.inline').shown()")


def start(nvim_factory: Any, fake_api: FakeAnthropic, ws: Path) -> tuple[Any, int, Path]:
    """An edit of three hunks proposed for f.txt, drawn inline in its window."""
    path = ws / "f.txt"
    path.write_text(SOURCE)
    nv = claude(nvim_factory, fake_api)
    buf = edit(nv, path)
    propose = {"path": "f.txt", "old_string": OLD, "new_string": NEW}
    fake_api.script(tool_use("propose_edit", propose), text("done"))
    send(nv)
    wait_pending(nv)
    wait_for(lambda: shown(nv), what="the proposal drawn inline")
    return nv, buf, path


MODEL_WORDS = ("your edit", "the user applied", "the user's note", "partly accepted")


def decide_hunks(nv: Any, *keys: tuple[int, str]) -> None:
    """Type each hunk's decision on its line (`\\ha` accepts, `\\hw` rejects with a note)."""
    nv.exec_lua("vim.ui.input = function(_, cb) cb('keep line 6') end")
    for done, (row, key) in enumerate(keys[:-1], 1):
        nv.api.win_set_cursor(0, [row, 0])
        nv.input(key)
        wait_for(lambda: decided(nv) == done, what=f"{done} hunks decided")  # noqa: B023
    nv.api.win_set_cursor(0, [keys[-1][0], 0])
    nv.input(keys[-1][1])


def decided(nv: Any) -> int:
    return sum(1 for h in (shown(nv) or {"hunks": []})["hunks"] if h.get("decided"))


def test_a_partial_accept_is_said_to_the_user_in_the_pane(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, _buf, path = start(nvim_factory, fake_api, isolated_env)
    screen: Screen = screen_factory(nv, 200, 30)
    nv.command("Sightline chat")
    nv.input("<Esc>")
    nv.command("wincmd p")
    decide_hunks(nv, (2, "\\ha"), (6, "\\hw"), (10, "\\ha"))
    screen.wait_text("✔ Applied hunks 1 and 3 of 3; rejected 2: keep line 6.", 30)
    assert path.read_text() != SOURCE
    said = "\n".join(transcript(nv))
    assert not [w for w in MODEL_WORDS if w in said], said
    told = only_result(fake_api)["content"]
    assert told.startswith("partly accepted: of the 3 hunks of your edit, the user applied")


def test_every_hunk_rejected_is_said_to_the_user_in_the_pane(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, screen_factory: Any
) -> None:
    nv, _buf, path = start(nvim_factory, fake_api, isolated_env)
    screen: Screen = screen_factory(nv, 200, 30)
    nv.command("Sightline chat")
    nv.input("<Esc>")
    nv.command("wincmd p")
    decide_hunks(nv, (6, "\\hw"), (2, "\\hR"))
    screen.wait_text("✗ Rejected all 3 hunks: 2: keep line 6", 30)
    assert path.read_text() == SOURCE
    said = "\n".join(transcript(nv))
    assert not [w for w in MODEL_WORDS if w in said], said
    told = only_result(fake_api)["content"]
    assert told.startswith("rejected by the user: hunk 1 (line 2); hunk 2 (line 6), the user's")
