"""update_plan: the plan-mode tool. The plan is a checklist in the transcript, recorded in the
conversation's history so a reopened conversation shows it again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sightline.domain.errors import Refused
from sightline.domain.narrator import checklist
from sightline.gate.policy import Kind
from sightline.gate.turn_contract import ToolResult
from sightline.tools.base import Tool

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

MAX_STEPS = 50


def _steps(args: dict[str, Any]) -> list[dict[str, Any]]:
    raw = args.get("steps")
    if not isinstance(raw, list) or not raw:
        raise Refused("steps: required, a non-empty list of {text, done}")
    if len(raw) > MAX_STEPS:
        raise Refused(f"steps: at most {MAX_STEPS} steps")
    steps = []
    for i, step in enumerate(raw, 1):
        if not isinstance(step, dict) or not isinstance(step.get("text"), str):
            raise Refused(f"steps[{i}]: expected {{text: string, done: boolean}}")
        if not step["text"].strip():
            raise Refused(f"steps[{i}]: text is empty")
        steps.append({"text": step["text"].strip(), "done": bool(step.get("done", False))})
    return steps


def update_plan(turn: Turn, args: dict[str, Any]) -> ToolResult:
    steps = _steps(args)
    session = turn.session
    session.plan = steps
    session.record({"type": "plan", "steps": steps})
    session.transcript.add_lines(checklist(steps))
    done = sum(1 for s in steps if s["done"])
    return ToolResult(f"plan updated: {done} of {len(steps)} steps done")


TOOLS = [
    Tool(
        name="update_plan",
        kind=Kind.PLAN,
        description=(
            "Record the plan as a checklist the user sees in the pane. Send the whole plan each "
            "time, marking steps done as they are."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string", "description": "The step."},
                            "done": {"type": "boolean", "description": "Done already."},
                        },
                        "required": ["text", "done"],
                    },
                }
            },
            "required": ["steps"],
        },
        handler=update_plan,
    ),
]
