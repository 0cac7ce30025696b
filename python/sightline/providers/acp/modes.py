"""An agent's own modes, sorted by whether they ask: no turn runs in a mode that never asks
before it writes or runs commands (so that nothing reaches the review gate) unless the user
named that mode (`provider.agent_mode`). Claude's adapter, for one, may start in `auto`.

Data and pure functions; names are compared without case, `-`, `_` or spaces.
"""

from __future__ import annotations

from dataclasses import dataclass

# Modes agents use for "do it without asking": Claude's adapter (auto, acceptEdits,
# bypassPermissions, dontAsk), Gemini CLI (autoEdit, yolo), codex-acp (auto, full-access).
BYPASSING = frozenset(
    {"auto", "acceptedits", "autoedit", "bypasspermissions", "dontask", "yolo", "fullaccess"}
)


def _norm(name: str) -> str:
    return "".join(c for c in name.lower() if c not in "-_ ")


def bypasses(mode_id: str, name: str = "") -> bool:
    return _norm(mode_id) in BYPASSING or (bool(name) and _norm(name) in BYPASSING)


@dataclass(frozen=True)
class Mode:
    id: str
    name: str


def normal_mode(
    current: str | None, available: list[Mode], chosen: str | None, read_only: str | None
) -> tuple[str | None, str | None]:
    """(the mode for a normal turn, or None to stay; why no turn can run, or None).

    The user's chosen mode when the agent has it; else the agent's own when it asks; else
    the first that asks and is not the read-only one (plan mode's).
    """
    ids = [m.id for m in available]
    if chosen:
        if chosen in ids:
            return chosen, None
        return None, unknown_mode_words(chosen, ids)
    names = {m.id: m.name for m in available}
    if current is None or not bypasses(current, names.get(current, "")):
        return current, None
    for mode in available:
        if not bypasses(mode.id, mode.name) and mode.id != read_only:
            return mode.id, None
    return None, no_asking_mode_words(current, ids)


def unknown_mode_words(chosen: str, ids: list[str]) -> str:
    return (
        f"provider.agent_mode is {chosen!r}, which this agent does not have "
        f"(its modes: {', '.join(ids) or 'none'})"
    )


def no_asking_mode_words(current: str, ids: list[str]) -> str:
    return (
        f"the agent starts in its mode {current!r}, which writes files or runs commands "
        "without asking, and it has no mode that asks "
        f"(its modes: {', '.join(ids)}); to run it anyway, name the mode: "
        f"provider.agent_mode = {current!r}"
    )
