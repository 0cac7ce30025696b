"""The core's `/`: the menu's items while a command is typed, and what a sent one does.

The command list is built when `/` is typed (the prompt folders scanned then, re-read by
mtime) and narrowed from that list on later keystrokes; a send looks the name up in a
fresh scan, so a prompt file saved a moment ago is what runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sightline.mentions.completion import MAX_ITEMS, CompletionItem
from sightline.slash import catalog, expand, prompt_files
from sightline.slash.catalog import Command, Extra
from sightline.slash.prompt_files import PromptFile

Note = Callable[[str], None]


@dataclass(frozen=True)
class Context:
    """Where the command is typed: the workspace and the user's config folder
    (`stdpath('config')`, sent by Neovim)."""

    workspace: str
    config_dir: str | None = None


@dataclass
class SlashCommands:
    note: Note = lambda _text: None  # a skipped prompt file, said once per version
    extra: list[Extra] = field(default_factory=list)  # skills, agent, MCP prompts
    _library: prompt_files.PromptLibrary = field(default_factory=prompt_files.PromptLibrary)
    _listed: list[Command] = field(default_factory=list)
    _said: set[tuple[str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def commands(self, ctx: Context) -> list[Command]:
        """Every command for `ctx`, read now (prompt files by mtime)."""
        with self._lock:
            found, skipped = self._library.scan(prompt_files.folders(ctx.workspace, ctx.config_dir))
            for s in skipped:
                key = (str(s.path), s.why)
                if key not in self._said:
                    self._said.add(key)
                    self.note(s.why)
        groups: list[Sequence[Command]] = [
            catalog.builtin_commands(),
            catalog.prompt_commands(found),
        ]
        groups.extend(source() for source in self.extra)
        return catalog.merge(*groups)

    def complete(self, ctx: Context, token: str) -> list[CompletionItem]:
        """Items for the text typed after `/` (the command's name so far)."""
        if token == "" or not self._listed:
            self._listed = self.commands(ctx)
        return [c.item() for c in catalog.rank(self._listed, token, MAX_ITEMS)]

    def find(self, ctx: Context, name: str) -> Command | None:
        for command in self.commands(ctx):
            if command.name == name:
                return command
        return None


@dataclass(frozen=True)
class Expanded:
    text: str
    prompt: PromptFile


def prompt_needs(prompt: PromptFile, arguments: str, given: dict[str, str]) -> dict[str, Any]:
    """The inputs still missing for `prompt` ({} when none): what Neovim asks for."""
    need = expand.needs(prompt)
    typed, _ = expand.split_inputs(arguments, need.inputs)
    values = {**typed, **given}
    missing = [n for n in need.inputs if n not in values]
    return {"missing": [{"name": n, "prompt": need.prompts.get(n, "")} for n in missing]}
