"""A scoped turn's selection, and how the model is shown it. Pure: no Neovim here."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

RANGE_KEYS = ("buffer", "start_row", "start_col", "end_row", "end_col")


@dataclass(frozen=True)
class Selection:
    buffer: int
    start_row: int
    start_col: int
    end_row: int
    end_col: int
    text: str
    name: str  # workspace-relative path, or "[No Name] (buffer N)"
    filetype: str = ""
    # How the dialog and the transcript title it (`src/app.py:12–30`, `[No Name] 1:9–1:15`):
    # made in Neovim by scope.describe, the one place the dialog also takes it from.
    title: str = ""

    def flat(self) -> dict[str, int]:
        return {k: int(getattr(self, k)) for k in RANGE_KEYS}

    def moved_to(self, rng: dict[str, Any], text: str) -> Selection:
        return replace(
            self,
            buffer=int(rng["buffer"]),
            start_row=int(rng["start_row"]),
            start_col=int(rng["start_col"]),
            end_row=int(rng["end_row"]),
            end_col=int(rng["end_col"]),
            text=text,
        )

    def lines_label(self) -> str:
        first, last = self.start_row + 1, self.end_row + 1
        return f"{first}" if first == last else f"{first}–{last}"


def has_range(params: dict[str, Any]) -> bool:
    return any(k in params for k in RANGE_KEYS)


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in the text (at least three)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def selection_block(sel: Selection) -> str:
    """The part of the user message that names the selection and carries its text."""
    fence = fence_for(sel.text)
    where = (
        f"lines {sel.lines_label()}" if "–" in sel.lines_label() else f"line {sel.lines_label()}"
    )
    return (
        f"The selection: {sel.name}, {where}. This turn may change only this text.\n"
        f"{fence}{sel.filetype}\n{sel.text}\n{fence}"
    )
