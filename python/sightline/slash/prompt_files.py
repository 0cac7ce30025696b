"""Prompt files: Markdown files that become `/name` commands.

Four folders, in this order (the first of a name wins):

* the workspace's `.sightline/prompts/*.md` (sightline's own format);
* the workspace's `.claude/commands/*.md` (Claude Code's: `$ARGUMENTS`, `$1`…);
* the workspace's `.github/prompts/*.prompt.md` (GitHub Copilot's: `${input:name}`,
  `${selection}`, `${file}`…);
* the user's `stdpath('config')/sightline/prompts/*.md` (sightline's format).

Subfolders are read too, down to MAX_DEPTH below the folder (hidden ones and links to
folders are not followed).  In `.claude/commands` and sightline's folders a subfolder is a
namespace, `frontend/component.md` being `/frontend:component` (so two subfolders may each
hold a `build.md`); in `.github/prompts` the file name alone is the command, as VS Code
names it (it searches that folder's subfolders too).  A name starting `mcp:` is left out:
that is the MCP prompts' namespace.

Each may start with YAML front matter (`description`, `argument-hint`, `model`; in
`.github/prompts` also `name`, the command's name in place of the file's, as VS Code reads
it), parsed with PyYAML's safe loader.  A file is skipped, with a note naming it, when its
front matter is broken (the note gives the line) or names a command no one can type, when
it is over 64 KiB, binary, a link out of its folder, or not a regular file (a FIFO would
block the read) — the rules files' bounds.

Nothing is read at start-up: the folders are listed when `/` is typed, and a file is read
when the menu shows it or it is run (a Copilot prompt file when it is listed: its `name`),
again only when its size or mtime changed.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sightline.domain.errors import Refused
from sightline.domain.front_matter import FrontMatterError, split_front_matter
from sightline.domain.workspace import Outside, within
from sightline.tools import read

Format = Literal["sightline", "claude", "copilot"]

MAX_BYTES = 64 * 1024
# Longer names are not commands anyone types; they would only widen the menu.
MAX_NAME_CHARS = 64
# How deep below a prompt folder its subfolders are read (`a/b/c/x.md` is depth 3).
MAX_DEPTH = 3
FRONT_MATTER_KEYS = ("description", "argument-hint", "model")
# Copilot's prompt files may name their command (VS Code: "if not specified, the file name").
COPILOT_KEYS = (*FRONT_MATTER_KEYS, "name")


@dataclass(frozen=True)
class Folder:
    path: Path
    format: Format
    source: str  # where its commands come from, as the menu shows it
    suffix: str  # what a prompt file's name ends with
    namespaced: bool = True  # a subfolder's name is a prefix of its files' names


@dataclass(frozen=True)
class PromptFile:
    name: str  # the command, without its `/`
    path: Path
    format: Format
    source: str
    description: str
    argument_hint: str
    model: str | None
    body: str
    shown: str = ""  # how messages name it: its folder and its path there


@dataclass(frozen=True)
class Skipped:
    path: Path
    why: str  # one line, starting with the file's name (and line, for front matter)


def folders(workspace: str, config_dir: str | None) -> list[Folder]:
    """The folders prompt files are read from, in the order their names win."""
    root = Path(workspace)
    out = [
        Folder(root / ".sightline" / "prompts", "sightline", ".sightline/prompts", ".md"),
        Folder(root / ".claude" / "commands", "claude", ".claude/commands", ".md"),
        Folder(root / ".github" / "prompts", "copilot", ".github/prompts", ".prompt.md", False),
    ]
    if config_dir:
        out.append(Folder(Path(config_dir) / "sightline" / "prompts", "sightline", "user", ".md"))
    return out


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class Entry:
    """A prompt file as its folder lists it: named, not read yet.  Its stat is taken when
    it is first read after a listing (`PromptLibrary.stat`), not by the listing."""

    __slots__ = ("_stat", "_taken", "folder", "linked", "name", "path")

    def __init__(self, name: str, folder: Folder, path: str, linked: bool) -> None:
        self.name = name
        self.folder = folder
        self.path = path
        self.linked = linked
        self._stat: os.stat_result | None = None
        self._taken = -1  # the listing its stat was taken in


# A folder whose mtime is this recent is listed again even when it did not change: a file
# made in the same tick as the last listing would not change it (as git's "racy" index).
_RACY_NS = 2_000_000_000


@dataclass
class _Listing:
    """One folder as it was last listed: its mtime then, its prompt files, its subfolders."""

    mtime_ns: int
    entries: list[Entry]
    subfolders: list[tuple[str, str]]  # (path, name)


class PromptLibrary:
    """The prompt files of the folders.  `entries` lists them (names from the file names;
    a folder whose mtime did not change is not listed again); `load` reads one, once per
    version (size, mtime, inode), taking its stat once per listing: the menu reads only
    the files it shows."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, int, int], PromptFile | Skipped]] = {}
        self._listings: dict[str, _Listing] = {}
        self._listing = 0  # how many times `entries` listed: a stat is fresh for one

    def entries(self, where: Iterable[Folder]) -> list[Entry]:
        """The first file of each name, in the folders' order."""
        self._listing += 1
        out: list[Entry] = []
        names: set[str] = set()
        seen: set[str] = set()
        listed: set[str] = set()
        for folder in where:
            for entry in self._listed(folder, str(folder.path), "", 0, listed):
                seen.add(entry.path)
                if folder.format == "copilot":
                    entry = self._named(entry)
                if entry.name not in names:
                    names.add(entry.name)
                    out.append(entry)
        for gone in set(self._known) - seen:
            del self._known[gone]  # deleted files, or a folder of another workspace
        for gone in set(self._listings) - listed:
            del self._listings[gone]
        return out

    def _named(self, entry: Entry) -> Entry:
        """A Copilot prompt file under the name its front matter gives, if it gives one (so
        these few files are read when listed; a read is kept while the file is unchanged)."""
        outcome = self.load(entry)
        if not isinstance(outcome, PromptFile) or outcome.name == entry.name:
            return entry
        named = Entry(outcome.name, entry.folder, entry.path, entry.linked)
        named._stat, named._taken = entry._stat, entry._taken
        return named

    def stat(self, entry: Entry) -> os.stat_result:
        """The entry's stat as of this listing (following a link); OSError when it is gone."""
        if entry._taken != self._listing or entry._stat is None:
            entry._stat = os.stat(entry.path)
            entry._taken = self._listing
        return entry._stat

    def load(self, entry: Entry) -> PromptFile | Skipped:
        try:
            st = self.stat(entry)
        except OSError as err:
            shown = f"{entry.folder.source}/{_rel(entry.folder, entry.path)}"
            return Skipped(Path(entry.path), f"{shown}: cannot be read ({err.strerror}); skipped")
        known = self._known.get(entry.path)
        stamp = _stamp(st)
        if known is not None and known[0] == stamp:
            return known[1]
        outcome = load(entry.folder, entry.name, Path(entry.path), entry.linked, st)
        self._known[entry.path] = (stamp, outcome)
        return outcome

    def scan(self, where: Iterable[Folder]) -> tuple[list[PromptFile], list[Skipped]]:
        """Every prompt file of `where`, read (the first of each name), and those skipped."""
        found: list[PromptFile] = []
        skipped: list[Skipped] = []
        for entry in self.entries(where):
            outcome = self.load(entry)
            if isinstance(outcome, Skipped):
                skipped.append(outcome)
            else:
                found.append(outcome)
        return found, skipped

    def _listed(
        self, folder: Folder, where: str, prefix: str, depth: int, listed: set[str]
    ) -> Iterable[Entry]:
        """The prompt files of `where` (a subfolder `prefix` of `folder`, `depth` below it),
        those of the folder itself first, each subfolder's after them, by name."""
        listing = self._listing_of(folder, where, prefix, depth)
        if listing is None:
            return
        listed.add(where)
        yield from listing.entries
        for path, name in listing.subfolders:
            inner = f"{prefix}{name}:" if folder.namespaced else ""
            yield from self._listed(folder, path, inner, depth + 1, listed)

    def _listing_of(self, folder: Folder, where: str, prefix: str, depth: int) -> _Listing | None:
        try:
            mtime = os.stat(where).st_mtime_ns
        except OSError:
            return None  # no such folder (the usual case): nothing to offer
        known = self._listings.get(where)
        if known is not None and known.mtime_ns == mtime and time.time_ns() - mtime > _RACY_NS:
            return known
        try:
            found = sorted(os.scandir(where), key=lambda e: e.name)
        except OSError:
            return None  # unreadable
        cut = len(folder.suffix)
        entries: list[Entry] = []
        subfolders: list[tuple[str, str]] = []
        for entry in found:
            if entry.name.startswith("."):
                continue
            try:
                if not entry.name.endswith(folder.suffix):
                    if depth < MAX_DEPTH and entry.is_dir(follow_symlinks=False):
                        subfolders.append((entry.path, entry.name))
                    continue
                if entry.is_dir(follow_symlinks=False):
                    continue
                linked = entry.is_symlink()  # (its target is checked when it is read)
            except OSError:
                continue
            name = prefix + entry.name[:-cut]
            if _valid_name(name):
                entries.append(Entry(name, folder, entry.path, linked))
        listing = _Listing(mtime, entries, subfolders)
        self._listings[where] = listing
        return listing


def _rel(folder: Folder, path: str) -> str:
    """`path` relative to its prompt folder (it is inside: listed from it)."""
    root = str(folder.path).rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else os.path.basename(path)


_NAME = re.compile(rf"[^\s/\\]{{1,{MAX_NAME_CHARS}}}")


def _valid_name(name: str) -> bool:
    """A name typed after `/`: no whitespace, slash or control character, and not in the
    MCP prompts' namespace."""
    return (
        _NAME.fullmatch(name) is not None
        and name.isprintable()
        and not name.startswith("mcp:")
        and ":" not in (name[0], name[-1])
    )


def load(
    folder: Folder, name: str, path: Path, linked: bool, st: os.stat_result
) -> PromptFile | Skipped:
    """Read one prompt file within the bounds; a Skipped says why it is not offered."""
    rel = _rel(folder, str(path))
    shown = f"{folder.source}/{rel}"
    if linked:
        try:
            within(folder.path, rel)
        except Outside:
            return Skipped(path, f"{shown}: a link out of its folder; skipped")
    if stat.S_ISDIR(st.st_mode):
        return Skipped(path, f"{shown}: a folder, not a prompt file; skipped")
    if not stat.S_ISREG(st.st_mode):
        return Skipped(path, f"{shown}: not a regular file; skipped")
    if st.st_size > MAX_BYTES:
        return Skipped(path, f"{shown}: over 64 KiB; skipped")
    try:
        with read.open_regular(path, shown) as fh:
            raw = fh.read(MAX_BYTES + 1)
    except Refused as why:
        return Skipped(path, f"{why.message}; skipped")
    except OSError as err:
        return Skipped(path, f"{shown}: cannot be read ({err.strerror or err}); skipped")
    if len(raw) > MAX_BYTES:
        return Skipped(path, f"{shown}: over 64 KiB; skipped")
    if read.is_binary(raw):
        return Skipped(path, f"{shown}: a binary file; skipped")
    text = raw.decode(errors="replace").replace("\r\n", "\n")
    keys = COPILOT_KEYS if folder.format == "copilot" else FRONT_MATTER_KEYS
    try:
        meta, body = split_front_matter(text, keys, raw=("argument-hint",))
    except FrontMatterError as err:
        return Skipped(path, f"{shown}:{err.line}: {err.message}; skipped")
    if "name" in meta:
        if not _valid_name(meta["name"]):
            return Skipped(
                path,
                f"{shown}: its name {meta['name']!r} cannot be typed after / (at most "
                f"{MAX_NAME_CHARS} characters, no space or slash, not starting mcp:); skipped",
            )
        name = meta["name"]
    return PromptFile(
        name=name,
        path=path,
        format=folder.format,
        source=folder.source,
        description=meta.get("description", ""),
        argument_hint=meta.get("argument-hint", ""),
        model=meta.get("model") or None,
        body=body,
        shown=shown,
    )
