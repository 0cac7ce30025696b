"""Scoped Change-with-Agent turns: the tools the fake model calls and how a scoped send is typed."""

from __future__ import annotations

from typing import Any

SCOPED_TOOLS = [
    "read_file",
    "list_files",
    "grep",
    "get_diagnostics",
    "replace_selection",
    "reveal_editor_range",
    "reveal_attachment",
]


def scoped_send(nv: Any, buf: int, sr: int, sc: int, er: int, ec: int, msg: str = "fix") -> None:
    rng = {"buffer": buf, "start_row": sr, "start_col": sc, "end_row": er, "end_col": ec}
    assert nv.exec_lua("return {require('sightline').send(...)}", msg, rng) == [True]
