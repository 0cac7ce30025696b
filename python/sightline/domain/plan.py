"""The plan as the transcript shows it (update_plan, a reopened conversation, an ACP agent's
plan)."""

from __future__ import annotations

from typing import Any

HEADER = "▍Plan"


def checklist(steps: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """The transcript lines of a plan (Markdown task list, done steps muted)."""
    done = sum(1 for s in steps if s.get("done"))
    lines: list[tuple[str, str | None]] = [
        (f"{HEADER} ({done}/{len(steps)} done)", "SightlineAssistant")
    ]
    for step in steps:
        text = " ".join(str(step.get("text", "")).split())
        if step.get("done"):
            lines.append((f"- [x] {text}", "SightlineNote"))
        else:
            lines.append((f"- [ ] {text}", None))
    return lines
