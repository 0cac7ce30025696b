"""The core's `/`: the menu's items while a command is typed, and what a sent one does.

The candidates (built-ins, the prompt folders' file names, other sources' commands) are
listed when `/` is typed and narrowed from that list on later keystrokes; a prompt file is
read when the menu shows it (at most MAX_ITEMS are), so the first `/` costs a directory
listing and the files it shows, whatever the size of the library; the rest are read right
after it on a worker thread, so the keys typed next find them read.  A send looks
the name up in a fresh listing, so a prompt file saved a moment ago is what runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sightline.mentions.completion import CompletionItem
from sightline.slash import catalog, prompt_files
from sightline.slash.catalog import Command
from sightline.slash.prompt_files import Entry, PromptFile, Skipped

# Items in the `/` menu at most: more rows than a menu shows, and each shown prompt file is
# read for its description (the first `/` reads this many files).
MAX_ITEMS = 50

Note = Callable[[str], None]
Candidate = Command | Entry


@dataclass(frozen=True)
class Context:
    """Where the command is typed: the workspace and the user's config folder
    (`stdpath('config')`, sent by Neovim)."""

    workspace: str
    config_dir: str | None = None


# Another source's commands for a context: skills, an ACP agent's, MCP prompts.
Extra = Callable[[Context], Sequence[Command]]


@dataclass
class SlashCommands:
    note: Note = lambda _text: None  # a skipped prompt file, said once per version
    extra: list[Extra] = field(default_factory=list)  # skills, agent, MCP prompts
    _library: prompt_files.PromptLibrary = field(default_factory=prompt_files.PromptLibrary)
    _listed: list[Candidate] = field(default_factory=list)
    _prompts: dict[str, tuple[PromptFile, Command]] = field(default_factory=dict)
    _items: dict[Command, CompletionItem] = field(default_factory=dict)
    _said: set[tuple[str, str]] = field(default_factory=set)
    # One reader at a time: the menu's keystroke, a send, or the worker reading ahead.
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def candidates(self, ctx: Context) -> list[Candidate]:
        """Every command's name for `ctx`, the first of each name (prompt files unread)."""
        entries = self._library.entries(prompt_files.folders(ctx.workspace, ctx.config_dir))
        groups: list[Sequence[Candidate]] = [catalog.builtin_commands(), entries]
        groups.extend(source(ctx) for source in self.extra)
        return catalog.merge(*groups)

    def command(self, candidate: Candidate) -> Command | None:
        """The candidate's command, its prompt file read if need be (None: skipped)."""
        if isinstance(candidate, Command):
            return candidate
        with self._lock:
            return self._read(candidate)

    def _read(self, candidate: Entry) -> Command | None:
        outcome = self._library.load(candidate)
        if isinstance(outcome, Skipped):
            key = (str(outcome.path), outcome.why)
            if key not in self._said:
                self._said.add(key)
                self.note(outcome.why)
            return None
        known = self._prompts.get(candidate.path)
        if known is not None and known[0] is outcome:
            return known[1]
        made = catalog.prompt_command(outcome)
        self._prompts[candidate.path] = (outcome, made)
        return made

    def complete(self, ctx: Context, token: str) -> list[CompletionItem]:
        """Items for the text typed after `/` (the command's name so far)."""
        if token == "" or not self._listed:
            self._listed = self.candidates(ctx)
            self._items = {}
        out: list[CompletionItem] = []
        for candidate in catalog.rank(self._listed, token):
            command = self.command(candidate)
            if command is None:
                continue
            item = self._items.get(command)
            if item is None:
                item = self._items[command] = command.item()
            out.append(item)
            if len(out) >= MAX_ITEMS:
                break
        if token == "":
            unread = [c for c in self._listed if isinstance(c, Entry)]
            threading.Thread(
                target=self._read_ahead, args=(unread,), name="sightline-prompts", daemon=True
            ).start()
        return out

    def _read_ahead(self, entries: list[Entry]) -> None:
        for entry in entries:
            self.command(entry)  # (one file per hold of the lock: a keystroke waits little)

    def find(self, ctx: Context, name: str) -> Command | None:
        for candidate in self.candidates(ctx):
            if candidate.name == name:
                return self.command(candidate)
        return None
