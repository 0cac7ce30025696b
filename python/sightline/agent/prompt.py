"""The system prompt: stable across turns so the prompt cache can serve it.

Workspace rules files (AGENTS.md, CLAUDE.md, .sightline/rules.md at the root) follow the
base prompt, read as the read tools read (a regular text file inside the workspace: a FIFO,
a device or a binary file is left out, said in the rules note), each bounded
(RULES_MAX_FILE_BYTES, RULES_MAX_TOTAL_BYTES: the rest is cut with a note saying so) and
redacted; `rules = false` in the config leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass

from sightline.domain import secrets
from sightline.domain.errors import Refused
from sightline.domain.workspace import Outside, within
from sightline.tools import read

BASE = """You are sightline, a coding agent inside the user's Neovim.
The workspace root is {workspace}. Paths you give and receive are relative to it.
The editor's buffers are the source of truth: tools read unsaved text, and every edit
you propose is shown to the user as a diff and applied only if they accept it.
Point at code with reveal_editor_range rather than quoting long passages.
Answer in Markdown. Be brief."""

PLAN = """
You are in plan mode: read and investigate, then record the plan with update_plan.
You cannot edit files or run commands in this mode."""

SCOPED = """
This turn is about one selection the user made. The only edit you can make is
replace_selection, which replaces exactly that selection; nothing else can change."""

RULES_FILES = ("AGENTS.md", "CLAUDE.md", ".sightline/rules.md")
RULES_MAX_FILE_BYTES = 16 * 1024
RULES_MAX_TOTAL_BYTES = 32 * 1024

RULES_HEAD = """
The workspace's rules files follow. Follow them unless the user says otherwise."""


@dataclass(frozen=True)
class RulesFile:
    path: str  # relative to the workspace root
    text: str
    cut: bool = False  # longer than the bound: only its start is included
    refused: str | None = None  # left out, and why (the read tools' rules)


def load_rules(workspace: str) -> list[RulesFile]:
    """The rules files present at the workspace root, bounded and redacted, in order.
    A file that is not a regular file inside the root (a symlink out of it) is skipped."""
    out: list[RulesFile] = []
    budget = RULES_MAX_TOTAL_BYTES
    for rel in RULES_FILES:
        try:
            full = within(workspace, rel)  # the one rule for staying inside a folder
        except Outside:
            continue
        if not full.is_file() or budget <= 0:
            continue
        limit = min(RULES_MAX_FILE_BYTES, budget)
        try:
            # The read tools' rules: a regular file (no FIFO, device…), text, bounded.
            with read.open_regular(full, rel) as fh:
                raw = fh.read(limit + 1)
            if read.is_binary(raw):
                raise Refused(f"{rel}: a binary file; not shown")
        except Refused as why:
            out.append(RulesFile(rel, "", refused=str(why).removeprefix(f"{rel}: ")))
            continue
        except OSError:
            continue
        cut = len(raw) > limit
        # Redact, then cut: the cut never leaves half a key (domain/secrets.py).
        text = raw[: secrets.cut_point(raw, limit)].decode(errors="replace")
        if not text.strip():
            continue
        budget -= min(len(raw), limit)
        out.append(RulesFile(rel, secrets.redact(text), cut))
    return out


def _rules_text(rules: list[RulesFile]) -> str:
    parts = [RULES_HEAD]
    for r in (r for r in rules if r.refused is None):
        tail = f"\n[… cut: {r.path} is longer than this]" if r.cut else ""
        parts.append(f'\n<rules file="{r.path}">\n{r.text.rstrip()}{tail}\n</rules>')
    return "\n".join(parts)


SKILLS_HEAD = """
Skills you can use follow (name: when to use it). When one fits the task, call load_skill
with its name first and follow its instructions."""


def _skills_text(skills: list[tuple[str, str]]) -> str:
    lines = [SKILLS_HEAD]
    lines.extend(f"- {name}: {' '.join(description.split())}" for name, description in skills)
    return "\n".join(lines)


def system_prompt(
    workspace: str,
    mode: str,
    scoped: bool,
    rules: list[RulesFile] | None = None,
    skills: list[tuple[str, str]] | None = None,
) -> str:
    """`skills`: the (name, description) of each skill the model may load."""
    text = BASE.format(workspace=workspace)
    if mode == "plan":
        text += PLAN
    if scoped:
        text += SCOPED
    if skills:
        text += "\n" + _skills_text(skills)
    if rules and any(r.refused is None for r in rules):
        text += "\n" + _rules_text(rules)
    return text
