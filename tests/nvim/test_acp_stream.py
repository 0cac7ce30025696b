"""The ACP stream in the pane, as the user sees it (a UI attached, keys typed): thought
chunks as the built-in provider's folded thinking, tool calls whose status line changes in
place, diffs painted as the gate's, stop during a permission, and the same transcript when
the conversation is reopened from history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.ui.transcript import THINKING_HEADER
from tests.acp_util import AgentLog, acp_nvim
from tests.agent_util import idle, wait_pending
from tests.conftest import transcript, wait_for
from tests.screen import Screen

THOUGHT = "The user wants app.py.\nI will read it first.\nThen answer."
EXECUTE: dict[str, Any] = {"permission": {"id": "p1", "title": "Run make", "kind": "execute"}}
FOLD_SUMMARY = f"{THINKING_HEADER}  ▸ 3 lines (zo shows them)"


def chosen(log: AgentLog) -> list[str]:
    return [str(r["chosen"]) for r in log.entries("permission_result")]


def pane_win(nv: Any, role: str) -> int:
    return int(
        nv.exec_lua(
            "local role = ... "
            "for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do "
            "  if vim.b[vim.api.nvim_win_get_buf(w)].sightline_role == role then return w end "
            "end return -1",
            role,
        )
    )


def type_message(nv: Any, screen: Screen, text: str) -> None:
    """What a user does: open the pane, type in the composer, send with <C-s>."""
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="Insert mode in the composer")
    nv.input(f"{text}<C-s>")


def to_normal(nv: Any) -> None:
    nv.input("<Esc>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "n", what="Normal mode")


def thinking_row(nv: Any) -> int:
    """The 1-based transcript line of the (last) thinking header."""
    rows = [i for i, line in enumerate(transcript(nv), 1) if line == THINKING_HEADER]
    assert rows, transcript(nv)
    return rows[-1]


def foldclosed(nv: Any, lnum: int) -> int:
    win = pane_win(nv, "transcript")
    return int(
        nv.exec_lua(
            "local win, lnum = ... "
            "return vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(lnum) end)",
            win,
            lnum,
        )
    )


def test_thought_chunks_stream_into_a_closed_thinking_fold_and_reopen_the_same(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    turn: list[dict[str, Any]] = [
        {"think": THOUGHT, "chunks": 5},
        EXECUTE,  # holds the turn: the thought is on screen before the turn ends
        {"say": "It defines **a** and b [write accepted].", "chunks": 3},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    screen = screen_factory(nv, 120, 40)
    type_message(nv, screen, "what is in app.py?")
    wait_pending(nv)
    # Streamed while the composer is in Insert mode: Neovim computes no folds there, so the
    # thought shows whole, dimmed; leaving Insert mode folds it, while the agent still waits.
    assert screen.group_at(*screen.wait_text("I will read it first.")) == "Comment"
    assert "▸ thinking" not in transcript(nv)  # not the old muted note
    to_normal(nv)
    row, col = screen.wait_text(FOLD_SUMMARY)
    assert screen.group_at(row, col) == "Comment"  # SightlineThinking, dimmed
    assert screen.find("I will read it first.") is None
    nv.input("ga")
    idle(nv)
    row, col = screen.wait_text("It defines")
    assert screen.group_at(row, col) != "Comment"  # the reply's text is not thinking
    # And it renders as Markdown, as any reply (its last span up to 66 ms after its text).
    screen.wait_for(lambda s: s.find("**a**") is None, what="**a** rendered")
    # Brackets that are no link read as written.
    screen.wait_text("[permission yes]It defines")
    screen.wait_text("accepted].")
    assert chosen(log) == ["yes"]
    live = transcript(nv)
    head = thinking_row(nv)
    assert live[head - 1 : head + 3] == [THINKING_HEADER, *THOUGHT.split("\n")]
    assert foldclosed(nv, head) == head
    # zo in the transcript shows the thought.
    nv.input("<C-w>k")
    transcript_win = pane_win(nv, "transcript")
    wait_for(lambda: nv.api.get_current_win().handle == transcript_win, what="transcript")
    nv.api.win_set_cursor(0, (head, 0))
    nv.input("zo")
    screen.wait_text("I will read it first.")
    assert screen.group_at(*screen.wait_text("Then answer.")) == "Comment"
    assert foldclosed(nv, head) == -1
    # Reopened from history (the new core renders the conversation's records).
    nv.command("Sightline restart")
    wait_for(lambda: transcript(nv) == live, 30, "the same transcript from history")
    head = thinking_row(nv)
    wait_for(lambda: foldclosed(nv, head) == head, 10, "the reopened thinking folded")
    assert screen.group_at(*screen.wait_text(FOLD_SUMMARY)) == "Comment"


def test_tool_call_status_changes_in_place_and_reopens_with_its_last_status(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path, isolated_env: Path
) -> None:
    (isolated_env / "app.py").write_text("a = 1\nb = 2\n")
    turn: list[dict[str, Any]] = [
        {
            "tool": {
                "id": "t1",
                "title": "Run tests",
                "kind": "execute",
                "locations": [["app.py", 2]],
            }
        },
        EXECUTE,  # the user sees the call pending
        {"update": {"id": "t1", "status": "in_progress"}},
        {"update": {"id": "t1", "status": "completed"}},
        {"tool": {"id": "t2", "title": "Lint", "kind": "execute", "status": "in_progress"}},
        {"update": {"id": "t2", "status": "failed"}},
        {
            "tool": {
                "id": "t3",
                "title": "Edit app.py",
                "kind": "edit",
                "status": "completed",
                "diff": {"path": "app.py", "old": "a = 1\nb = 2\n", "new": "a = 1\nb = 20\n"},
            }
        },
        {"plan": [["run the tests", "completed"], ["fix the lint", "pending"]]},
        {"say": "Finished."},
    ]
    nv, log = acp_nvim(nvim_factory, tmp_path, [turn])
    screen = screen_factory(nv, 120, 50)  # the two unasked-call warnings take rows
    type_message(nv, screen, "run the tests")
    wait_pending(nv)
    screen.wait_text("• Run tests (pending)")
    pending_row = transcript(nv).index("• Run tests (pending)")
    to_normal(nv)
    nv.input("ga")
    idle(nv)
    screen.wait_text("Finished.")
    shown = transcript(nv)
    # One line per call, rewritten in place: the row that said pending now says done.
    assert shown[pending_row] == "✔ Run tests (done)"
    # (This agent runs both without a permission request for them: each is named once.)
    calls = [ln for ln in shown if not ln.startswith("⚠ the agent ran")]
    assert [ln for ln in calls if "Run tests" in ln] == ["✔ Run tests (done)"]
    assert [ln for ln in calls if "Lint" in ln] == ["✗ Lint (failed)"]
    assert len([ln for ln in shown if ln.startswith("⚠ the agent ran 'Lint'")]) == 1
    assert screen.find("(pending)") is None and screen.find("(in progress)") is None
    row, col = screen.wait_text("✗ Lint (failed)")
    assert screen.group_at(row, col) in ("SightlineError", "ErrorMsg")
    # The location is a chip under its call, never a jump.
    assert shown[pending_row + 1] == "  ↳ app.py:2"
    row, col = screen.wait_text("↳ app.py:2")
    assert screen.hl_at(row, col + 2).get("underline")  # a chip (SightlineChip)
    # The plan is the built-in agent's checklist.
    row, col = screen.wait_text("▍Plan (1/2 done)")
    assert screen.group_at(row, col) == "Special"  # SightlineAssistant
    screen.wait_text("- [x] run the tests")
    screen.wait_text("- [ ] fix the lint")
    # The diff in the tool call's content is painted as the review gate's diff.
    row, col = screen.wait_text("+b = 20")
    assert screen.group_at(row, col) == "DiffAdd"
    row, col = screen.wait_text("-b = 2")
    assert screen.group_at(row, col) == "DiffDelete"
    assert chosen(log) == ["yes"]
    nv.command("Sightline restart")
    wait_for(lambda: transcript(nv) == shown, 30, "the same transcript from history")
    screen.wait_text("✔ Run tests (done)")
    assert screen.find("(pending)") is None


def test_stop_answers_a_pending_permission_cancelled_and_sends_session_cancel(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    nv, log = acp_nvim(nvim_factory, tmp_path, [[EXECUTE, {"wait_cancel": True}]])
    screen = screen_factory(nv, 120, 40)
    type_message(nv, screen, "build")
    assert wait_pending(nv)["pending"] == "allow Run make"
    to_normal(nv)
    nv.input(":Sightline stop<CR>")
    screen.wait_text("■ Stopped.")
    log.wait("cancel")
    wait_for(lambda: chosen(log) == ["cancelled"], 30, "the permission answered cancelled")
    idle(nv)
    assert not any("allowed Run make" in ln for ln in transcript(nv))


def test_checkhealth_says_change_with_agent_is_unavailable_for_a_direct_writer(
    nvim_factory: Any, tmp_path: Path
) -> None:
    nv, _ = acp_nvim(nvim_factory, tmp_path, [], client_writes=False)
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert "scripted-agent 9.9.9" in text
    assert "Change with Agent: not available with this agent" in text
