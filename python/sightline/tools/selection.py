"""replace_selection: the one edit a scoped turn (Change with Agent) can make.

It takes only the new text: the core holds the range, so there is nothing to aim
elsewhere. The selection is re-anchored when the proposal is prepared and again on accept
(inside Neovim, see lua/sightline/scope.lua); after a replace the scope moves onto the new
text, so a second call replaces what the first one wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sightline.agent.proposals import Proposal, applied_result, review
from sightline.diff import buffer_text
from sightline.errors import Refused
from sightline.tools.base import Kind, Tool, ToolResult

if TYPE_CHECKING:
    from sightline.agent.session import Turn
    from sightline.scope import Selection

SCOPE = "require('sightline.scope')"
# Buffer text comes from pynvim with bytes that are not UTF-8 as surrogate escapes; byte
# offsets and slices use the same escapes, so the selection is replaced byte for byte.
BYTES = "surrogateescape"


def _offset(lines: list[str], row: int, col: int) -> int:
    """Byte offset of (row, byte col) in the buffer text (lines joined by newlines)."""
    return sum(len(line.encode(errors=BYTES)) + 1 for line in lines[:row]) + col


def _locate(turn: Turn, sel: Selection) -> Selection:
    found = turn.editor.lua(
        f"local r, e = {SCOPE}.anchor(...) return r or {{ error = e }}", sel.flat(), sel.text
    )
    if "error" in found:
        raise Refused(
            f"refused: the selection changed since it was taken: {found['error']}. "
            "Nothing was changed."
        )
    return sel.moved_to(found, sel.text)


def _replace(turn: Turn, args: dict[str, Any]) -> ToolResult:
    text = args.get("text")
    if not isinstance(text, str):
        raise Refused("replace_selection: `text` must be a string")
    if turn.scope is None:
        raise Refused("replace_selection is only available in a turn about a selection")
    sel = _locate(turn, turn.scope)
    turn.scope = sel
    lines = list(turn.editor.lua(f"return {SCOPE}.lines(...)", sel.buffer))
    before = buffer_text(lines).encode(errors=BYTES)
    start = _offset(lines, sel.start_row, sel.start_col)
    end = _offset(lines, sel.end_row, sel.end_col)
    after = before[:start] + text.encode(errors=BYTES) + before[end:]
    prefix, suffix = before[:start].decode(errors=BYTES), before[end:].decode(errors=BYTES)
    path = str(turn.editor.lua("return vim.api.nvim_buf_get_name(...)", sel.buffer))

    def apply(turn: Turn, proposal: Proposal, accepted: str) -> ToolResult:
        # The compare view may have been edited: only text between the selection's
        # untouched surroundings can be taken, nothing outside it.
        if not (accepted.startswith(prefix) and accepted.endswith(suffix)):
            return ToolResult(
                "refused: the accepted text changes the buffer outside the selection. "
                "Nothing was changed.",
                True,
            )
        new_text = accepted[len(prefix) : len(accepted) - len(suffix)]
        current = turn.scope or sel
        res = turn.editor.lua(
            f"local r, e = {SCOPE}.replace(...) return r or {{ error = e }}",
            current.flat(),
            current.text,
            new_text,
        )
        if "error" in res:
            return ToolResult(
                f"refused: the selection changed since the proposal: {res['error']}. "
                "Nothing was changed.",
                True,
            )
        turn.scope = current.moved_to(res["range"], new_text)
        return applied_result(sel.name, res["applied"], "changed")

    proposal = Proposal(
        kind="edit",
        path=sel.name,
        abspath=path,
        before=before.decode(errors=BYTES),
        after=after.decode(errors=BYTES),
        applier=apply,
        buffer=sel.buffer,
    )
    return review(turn, proposal)


REPLACE_SELECTION = Tool(
    name="replace_selection",
    kind=Kind.SCOPED_WRITE,
    description=(
        "Replace the text the user selected for this turn with `text`. This is the only edit "
        "you can make in this turn; it names no file or position because the selection is "
        "fixed. The user reviews the change before it is applied. Calling it again replaces "
        "what the previous call wrote."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The new text for the whole selection."}
        },
        "required": ["text"],
    },
    handler=_replace,
)
