"""Every `/` command the composer offers, from each source, as one list: the menu's items
and what a sent `/name` is.

Order (and, for a name offered twice, the one that wins): built-ins, prompt files (their
folders' order, prompt_files.py), then the commands other sources add (`Extra`); but a
prompt file of a built-in's name takes the built-in's place (builtins.py says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from sightline.domain.skills import Skill
from sightline.domain.text import clean_display_text
from sightline.mentions.completion import CompletionItem, ItemKind, _tier
from sightline.slash.builtins import BUILTINS, BY_NAME, Builtin
from sightline.slash.prompt_files import PromptFile

SourceKind = Literal["builtin", "prompt", "skill", "agent", "mcp"]
_ITEM_KIND: dict[SourceKind, ItemKind] = {
    "builtin": "command",
    "prompt": "prompt",
    "skill": "skill",
    "agent": "agent_command",
    "mcp": "mcp_prompt",
}


@dataclass(frozen=True, eq=False)  # (hashed by identity: the menu caches its item)
class Command:
    name: str  # without the `/`
    kind: SourceKind
    description: str
    source: str  # where it comes from: "built-in", ".claude/commands", the agent's name…
    argument_hint: str = ""
    target: Builtin | PromptFile | object | None = None  # what runs it
    shadows: Builtin | None = None  # the built-in of its name it hides (a prompt file)

    def item(self) -> CompletionItem:
        desc = clean_display_text(self.description, 60)
        hint = f" {self.argument_hint}" if self.argument_hint else ""
        tag = "" if self.kind == "builtin" else f"[{self.source}] "
        hidden = ""
        if self.shadows is not None:
            tag = f"[{self.source}, over built-in] "
            hidden = (
                f"hides the built-in /{self.name} "
                f"(:Sightline {self.shadows.subcommand} still runs it)"
            )
        info = "\n".join(
            part
            for part in (
                f"/{self.name}{hint}",
                clean_display_text(self.description),
                f"from {self.source}",
                hidden,
            )
            if part
        )
        return CompletionItem(
            kind=_ITEM_KIND[self.kind],
            word=f"/{self.name}",
            abbr=f"/{self.name}{hint}",
            menu=f"{tag}{desc}".strip(),
            info=info,
        )


def builtin_commands() -> list[Command]:
    return list(_BUILTIN_COMMANDS)


def prompt_command(p: PromptFile) -> Command:
    """A prompt file's command; without a description, its first line describes it."""
    first = p.body.strip().split("\n", 1)[0]
    return Command(
        p.name,
        "prompt",
        p.description or first,
        p.source,
        p.argument_hint,
        p,
        BY_NAME.get(p.name),
    )


@dataclass(frozen=True)
class AgentCommand:
    """A command the ACP agent announced: sent to it as typed (the protocol's way)."""

    agent: str


def agent_commands(agent: str, announced: Sequence[tuple[str, str, str]]) -> list[Command]:
    """The agent's announced (name, description, hint) as commands marked as its own."""
    source = f"agent {agent}" if agent else "agent"
    return [
        Command(name, "agent", description, source, hint, AgentCommand(agent))
        for name, description, hint in announced
        if name and not any(c.isspace() or c == "/" for c in name)
    ]


def skill_command(skill: Skill) -> Command:
    return Command(skill.name, "skill", skill.description, f"skill, {skill.origin}", "", skill)


class Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def merge(*groups: Sequence[N]) -> list[N]:
    """The groups in order, the first of each name kept."""
    seen: set[str] = set()
    out: list[N] = []
    for group in groups:
        for command in group:
            if command.name not in seen:
                seen.add(command.name)
                out.append(command)
    return out


def rank(commands: Sequence[N], query: str) -> list[N]:
    """Commands matching what was typed after `/` (all when nothing), best first: the
    name's prefix, then a word of it, then anywhere, then its letters in order; within a
    tier the sources' order."""
    return rank_matching(commands, query)[0]


def rank_matching(commands: Sequence[N], query: str) -> tuple[list[N], list[N]]:
    """`rank`, and the matching commands in the sources' order: a longer query matches
    only among them (each tier's match implies its letters in order, which a longer query
    only narrows), so the next keystroke ranks those alone."""
    q = query.lower()
    scored: list[tuple[int, int, N]] = []
    for i, command in enumerate(commands):
        tier = _tier(command.name.lower(), q)
        if tier is not None:
            scored.append((tier, i, command))
    matching = [c for _, _, c in scored]
    scored.sort(key=lambda t: (t[0], t[1]))
    return [c for _, _, c in scored], matching


def split_command(text: str) -> tuple[str, str] | None:
    """`/name arguments…` at the start of a message: the name and the rest (which may run
    over several lines); None when the message does not start with a command."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, rest = text[1:].partition("\n")
    name, _, args = head.partition(" ")
    name = name.strip()
    if not name or any(c.isspace() for c in name):
        return None
    arguments = args.strip()
    if rest.strip():
        arguments = f"{arguments}\n{rest}".strip("\n") if arguments else rest.strip("\n")
    return name, arguments


# Made once: the menu caches an item per command (by identity).
_BUILTIN_COMMANDS = tuple(
    Command(b.name, "builtin", b.description, "built-in", b.argument_hint, b) for b in BUILTINS
)
