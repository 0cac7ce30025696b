"""How replace_selection, the one edit a scoped turn (Change with Agent) can make, lands.

It takes only the new text: the core holds the range, so there is nothing to aim
elsewhere. The selection is re-anchored when the proposal is prepared and again on accept
(inside Neovim, see lua/sightline/port/scope.lua); after a replace the scope moves onto the new
text, so a second call replaces what the first one wrote. The tool (tools/selection.py) and
an ACP agent's write of the selected file (providers/acp/client.py) both come here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from sightline.domain.diff import buffer_text
from sightline.domain.errors import Refused
from sightline.editor.port import FlatRange
from sightline.gate.proposals import Proposal, applied_result, review
from sightline.gate.turn_contract import ToolResult

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

# Buffer text comes from pynvim with bytes that are not UTF-8 as surrogate escapes; byte
# offsets and slices use the same escapes, so the selection is replaced byte for byte.
BYTES = "surrogateescape"
# Lines around the selection that cross RPC with the proposal (the diff shows 2).
CONTEXT_LINES = 3

# How the port's codes for a selection that cannot be re-anchored are told.
_LOST = {
    "gone": "the buffer of the selection is gone",
    "missing": (
        "the selected text is no longer in the buffer (edited or deleted since the proposal)"
    ),
    "ambiguous": (
        "the selected text now occurs more than once; the edit is refused rather than guessed"
    ),
}


def lost(res: dict[str, Any]) -> str:
    code = str(res.get("error"))
    if code == "unchangeable":
        return f"the buffer {res.get('detail', 'cannot be changed')}"
    return _LOST.get(code, code)


def offset(lines: list[str], row: int, col: int) -> int:
    """Byte offset of (row, byte col) in the text of `lines` (joined by newlines)."""
    return sum(len(line.encode(errors=BYTES)) + 1 for line in lines[:row]) + col


def replace(turn: Turn, args: dict[str, Any]) -> ToolResult:
    text = args.get("text")
    if not isinstance(text, str):
        raise Refused("replace_selection: `text` must be a string")
    if turn.scope is None:
        raise Refused("replace_selection is only available in a turn about a selection")
    sel = turn.scope
    # One round trip: the selection re-anchored, with only the lines around it.
    found = turn.editor.reanchor_range(cast(FlatRange, sel.flat()), sel.text, CONTEXT_LINES)
    if "error" in found:
        raise Refused(
            f"refused: the selection changed since it was taken: {lost(dict(found))}. "
            "Nothing was changed."
        )
    sel = sel.moved_to(dict(found["range"]), sel.text)
    turn.scope = sel
    first = int(found["first_line"])
    lines = list(found["lines"])
    before = buffer_text(lines).encode(errors=BYTES)
    start = offset(lines, sel.start_row - first, sel.start_col)
    end = offset(lines, sel.end_row - first, sel.end_col)
    after = before[:start] + text.encode(errors=BYTES) + before[end:]
    before_text = before.decode(errors=BYTES)

    def apply(turn: Turn, proposal: Proposal, accepted: str) -> ToolResult:
        # The compare view may have been edited: only text between the selection's
        # untouched surroundings can be taken, nothing outside it (the proposal may have
        # been widened to the whole buffer for that view: its anchor moved with it).
        prefix = proposal.before[: proposal.anchor_start]
        suffix = proposal.before[proposal.anchor_end :]
        if not (accepted.startswith(prefix) and accepted.endswith(suffix)):
            return ToolResult(
                "refused: the accepted text changes the buffer outside the selection. "
                "Nothing was changed.",
                True,
            )
        new_text = accepted[len(prefix) : len(accepted) - len(suffix)]
        current = turn.scope or sel
        res = turn.editor.replace_range(cast(FlatRange, current.flat()), current.text, new_text)
        if "error" in res:
            return ToolResult(
                f"refused: the selection changed since the proposal: {lost(dict(res))}. "
                "Nothing was changed.",
                True,
            )
        turn.scope = current.moved_to(dict(res["range"]), new_text)
        return applied_result(sel.name, res["applied"], "changed")

    proposal = Proposal(
        kind="edit",
        path=sel.name,
        abspath=str(found.get("path", "")),
        before=before_text,
        after=after.decode(errors=BYTES),
        anchor_start=len(before[:start].decode(errors=BYTES)),
        anchor_end=len(before[:end].decode(errors=BYTES)),
        applier=apply,
        first_line=first,
        excerpt=True,
        source=sel.buffer,
        buffer=sel.buffer,
    )
    return review(turn, proposal)
