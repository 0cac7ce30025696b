"""The core's `/`: the menu's items while a command is typed, and what a sent one does.

The candidates (built-ins, the prompt folders' file names, other sources' commands) are
listed when `/` is typed and narrowed from that list on later keystrokes; a prompt file is
read when the menu shows it (at most MAX_ITEMS are), so the first `/` costs a directory
listing and the files it shows, whatever the size of the library; the rest are read right
after it on a worker thread, so the keys typed next find them read.  A send looks
the name up in a fresh listing, so a prompt file saved a moment ago is what runs.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sightline.domain.text import clean_display_text
from sightline.mentions.completion import CompletionItem
from sightline.slash import catalog, mcp_prompts, prompt_files
from sightline.slash.builtins import BY_NAME
from sightline.slash.catalog import Command
from sightline.slash.prompt_files import Entry, PromptFile, Skipped

# Items in the `/` menu at most: more rows than a menu shows, and each shown prompt file is
# read for its description (the first `/` reads this many files).
MAX_ITEMS = 50

# How long after a `/` the files its menu did not show are read.
READ_AHEAD_DELAY_S = 0.05

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
    # The MCP servers starting now: their prompts come later (the menu asks again).
    starting: Callable[[Context], list[str]] = lambda _ctx: []
    # Changes when another source's commands changed (an ACP agent announced new ones):
    # the next keystroke lists them again.
    version: Callable[[], object] = lambda: None
    # A prompt file read names a model: the provider's model list will be wanted.
    wants_models: Callable[[], object] = lambda: None
    _library: prompt_files.PromptLibrary = field(default_factory=prompt_files.PromptLibrary)
    _listed: list[Candidate] = field(default_factory=list)
    _prompts: dict[str, tuple[PromptFile, Command]] = field(default_factory=dict)
    _items: dict[Command, CompletionItem] = field(default_factory=dict)
    _said: set[tuple[str, str]] = field(default_factory=set)
    _waiting: bool = False  # MCP servers were starting when the list was made
    _version: object = None  # `version()` when the list was made
    # Of the list: the candidates each query typed matches, in the sources' order (a longer
    # query narrows from its longest prefix here, backspace finds its query here).
    _matching: dict[str, list[Candidate]] = field(default_factory=dict)
    # One reader at a time: the menu's keystroke, a send, or the worker reading ahead.
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ahead: queue.SimpleQueue[list[Entry]] = field(default_factory=queue.SimpleQueue)
    _worker: threading.Thread | None = None

    def candidates(self, ctx: Context) -> list[Candidate]:
        """Every command's name for `ctx`, the first of each name (prompt files unread)."""
        with self._lock:  # (the worker reading ahead takes stats of this listing)
            entries = self._library.entries(prompt_files.folders(ctx.workspace, ctx.config_dir))
        prompts = {e.name for e in entries}
        # (a prompt file of a built-in's name takes its place: builtins.py)
        builtins = [c for c in catalog.builtin_commands() if c.name not in prompts]
        groups: list[Sequence[Candidate]] = [builtins, entries]
        groups.extend(source(ctx) for source in self.extra)
        return catalog.merge(*groups)

    def command(self, candidate: Candidate) -> Command | None:
        """The candidate's command, its prompt file read if need be (None: skipped); a
        skipped prompt file of a built-in's name leaves the built-in in its place."""
        if isinstance(candidate, Command):
            return candidate
        with self._lock:
            made = self._read(candidate)
        if made is None and candidate.name in BY_NAME:
            return self._builtin(candidate.name)
        return made

    @staticmethod
    def _builtin(name: str) -> Command:
        return next(c for c in catalog.builtin_commands() if c.name == name)

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
        if outcome.model:
            self.wants_models()
        return made

    def complete(self, ctx: Context, token: str) -> list[CompletionItem]:
        """Items for the text typed after `/` (the command's name so far)."""
        version = self.version()
        if token == "" or not self._listed or self._waiting or version != self._version:
            # (also while MCP servers were starting: their prompts join once they are up)
            self._version = version
            self._listed = self.candidates(ctx)  # (starts the MCP servers in the background)
            self._waiting = bool(self.starting(ctx))
            self._items = {}
            self._matching = {}
        out: list[CompletionItem] = []
        for candidate in self._ranked(token):
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
            self.warm()
            self._ahead.put([c for c in self._listed if isinstance(c, Entry)])
        return out

    def warm(self) -> None:
        """Start the worker that reads prompt files ahead (the composer opening asks: a
        thread started during the first `/` would cost that `/` its start, milliseconds on
        a loaded machine)."""
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._read_ahead_loop, name="sightline-prompts", daemon=True
                )
                self._worker.start()

    def _read_ahead_loop(self) -> None:
        while True:
            entries = self._ahead.get()
            # After the `/` that asked has been answered: reading at once would take the
            # GIL from the thread answering it.
            time.sleep(READ_AHEAD_DELAY_S)
            while not self._ahead.empty():  # (a newer listing: read that one)
                entries = self._ahead.get()
            self._read_ahead(entries)

    def _ranked(self, token: str) -> list[Candidate]:
        """The list's candidates matching `token`, best first (catalog.rank)."""
        q = token.lower()
        base = self._listed
        for i in range(len(q), 0, -1):
            narrower = self._matching.get(q[:i])
            if narrower is not None:
                base = narrower
                break
        ranked, matching = catalog.rank_matching(base, q)
        if q:
            if len(self._matching) > 256:
                self._matching.clear()  # (a long session of one list: start again)
            self._matching[q] = matching
        return ranked

    def _read_ahead(self, entries: list[Entry]) -> None:
        for entry in entries:
            self.command(entry)  # (one file per hold of the lock: a keystroke waits little)

    def complete_line(self, ctx: Context, before: str) -> tuple[int, list[CompletionItem]]:
        """Items for the composer's first line up to the cursor, which starts with `/`: the
        command's name, or after an MCP prompt's name the argument being typed.  The start
        is the character index the items replace from (-1: nothing to complete)."""
        name, space, rest = before[1:].partition(" ")
        if not space:
            if any(c.isspace() for c in name):
                return -1, []
            items = self.complete(ctx, name)
            if mcp_prompts.PREFIX.startswith(name) or name.startswith(mcp_prompts.PREFIX):
                items += self._starting_item(ctx, before)
            return 0, items
        command = next((c for c in self._listed if c.name == name), None)
        if command is None and name.startswith(mcp_prompts.PREFIX):
            command = self.find(ctx, name)
        target = command.target if isinstance(command, Command) else None
        if not isinstance(target, mcp_prompts.McpPrompt) or "\n" in rest:
            return -1, []
        current = rest.rsplit(" ", 1)[-1]
        if "=" in current:
            return -1, []
        return len(before) - len(current), mcp_prompts.argument_items(target, rest, current)

    def _starting_item(self, ctx: Context, before: str) -> list[CompletionItem]:
        names = self.starting(ctx)
        if not names:
            return []
        listed = clean_display_text(", ".join(names), 40)
        return [
            CompletionItem(
                kind="mcp_starting",
                word=before,
                abbr="starting…",
                menu=listed,
                info=f"MCP servers starting: {listed}; their prompts show here once they are up.",
            )
        ]

    def find(self, ctx: Context, name: str) -> Command | None:
        for candidate in self.candidates(ctx):
            if candidate.name == name:
                return self.command(candidate)
        return None
