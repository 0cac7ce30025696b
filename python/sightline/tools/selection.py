"""replace_selection: the one edit a scoped turn (Change with Agent) can make.

It takes only the new text: the core holds the range, so there is nothing to aim elsewhere;
the gate re-anchors it and proposes the edit (gate/selection.py)."""

from __future__ import annotations

from sightline.gate import selection
from sightline.gate.policy import Kind
from sightline.tools.base import Tool

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
    handler=selection.replace,
)
