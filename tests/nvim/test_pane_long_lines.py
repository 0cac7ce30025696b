"""A line of megabytes with no newline (an ACP agent's message chunk) reaches the pane as
rows of at most ROW_BYTES bytes: Neovim answers while it is drawn, no row is longer, a key
across a row's end shows in no row, `gY` yanks the whole line, and the conversation
reopened from history shows the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.domain.secrets import REDACTED
from sightline.ui.rows import ROW_BYTES
from tests.acp_util import agent_cmd
from tests.agent_util import idle, wait_pending
from tests.conftest import status, transcript, wait_for

KEY = "sk-ant-api03-" + "k3y" * 12
# 3 MB in one line; the key straddles the end of a row (rows are cut after a space).
HEAD = "word " * (ROW_BYTES // 5 * 7) + "x" * (ROW_BYTES - 10)
LINE = HEAD + KEY + " tail " + "lorem ipsum " * 250_000
SHOWN = HEAD + REDACTED + " tail " + "lorem ipsum " * 250_000
EXECUTE: dict[str, Any] = {"permission": {"id": "p1", "title": "Run make", "kind": "execute"}}


def drawn(nv: Any) -> int:
    """Rows in the transcript now (one request)."""
    return int(
        nv.exec_lua(
            "return vim.api.nvim_buf_line_count(require('sightline.ui.pane').buffers().transcript)"
        )
    )


def test_a_line_of_megabytes_streams_in_bounded_rows_and_yanks_whole(
    nvim_factory: Any, screen_factory: Any, tmp_path: Path
) -> None:
    cmd, _log = agent_cmd(tmp_path, [[{"say": LINE, "chunks": 30}, EXECUTE]])
    provider = {"name": "acp", "agent": {"cmd": cmd, "client_writes": True}}
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": KEY})
    screen = screen_factory(nv, 120, 40)
    nv.input(":Sightline chat<CR>")
    screen.wait_for(lambda s: s.mode == "insert", what="Insert mode in the composer")
    nv.input("go<C-s>")
    # Neovim answers requests while the line is drawn: some answer sees part of it.
    seen: set[str] = set()
    while status(nv)["state"] != "awaiting_decision":
        size = drawn(nv)
        seen.add("part" if 10 < size < len(SHOWN) // ROW_BYTES else "other")
    assert "part" in seen
    wait_pending(nv)
    nv.input("<Esc>ga")  # the agent goes on after its permission, and the turn ends
    idle(nv)
    rows = transcript(nv)
    assert max(len(row.encode()) for row in rows) <= ROW_BYTES
    assert len(rows) > len(LINE) // ROW_BYTES
    assert not any(KEY[i : i + 8] in row for row in rows for i in range(len(KEY) - 7))
    # gY on any of its rows yanks the whole line, its rows joined, into the register given.
    nv.input("<C-w>k")
    wait_for(lambda: nv.eval("b:sightline_role") == "transcript", what="the transcript")
    middle = next(i for i, row in enumerate(rows, 1) if REDACTED in row) + 100
    nv.api.win_set_cursor(0, (middle, 0))
    nv.input('"agY')
    wait_for(lambda: len(nv.funcs.getreg("a")) > len(HEAD), what="the line yanked")
    assert nv.funcs.getreg("a") == SHOWN + "\n"
    assert nv.funcs.getregtype("a") == "V"
    # Reopened from history, the conversation shows the same rows.
    nv.command("Sightline restart")
    wait_for(lambda: transcript(nv) == rows, 30, "the same rows from history")
