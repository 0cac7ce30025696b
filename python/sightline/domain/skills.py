"""Agent Skills: folders holding a `SKILL.md` (front matter `name`, `description`, then the
instructions) and whatever files it refers to.

Read from `~/.agents/skills/`, `stdpath('config')/sightline/skills/` (the user's: on) and
the workspace's `.agents/skills/` (off until enabled for that workspace, like `.mcp.json`
servers: a cloned repository must not instruct the model by itself).  An enable is tied to
the folder's content: a hash over its files' names and bytes, so a changed skill needs a
new enable.  `SKILL.md` has the prompt files' bounds (64 KiB, text, a regular file, no link
out of its folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sightline.domain import paths
from sightline.domain.extensions import atomic_write_text, workspace_key
from sightline.domain.front_matter import FrontMatterError, split_front_matter
from sightline.domain.workspace import Outside, within

Source = Literal["user", "workspace"]
MAX_SKILL_BYTES = 64 * 1024
# The files a skill lists and hashes at most (a skill is instructions and a few scripts).
MAX_FILES = 200
MAX_HASHED_BYTES = 8 << 20
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # the Agent Skills name rule


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    root: Path  # the skill's folder (its real path)
    source: Source
    origin: str  # the folder it was found in, as shown
    body: str  # SKILL.md after its front matter
    digest: str  # a hash of the folder's content
    files: tuple[str, ...]  # relative to root, SKILL.md first


@dataclass(frozen=True)
class SkippedSkill:
    where: str
    why: str


def folders(workspace: str, config_dir: str | None) -> list[tuple[Path, Source, str]]:
    out: list[tuple[Path, Source, str]] = [
        (Path.home() / ".agents" / "skills", "user", "~/.agents/skills")
    ]
    if config_dir:
        out.append((Path(config_dir) / "sightline" / "skills", "user", "sightline/skills"))
    out.append((Path(workspace) / ".agents" / "skills", "workspace", ".agents/skills"))
    return out


def discover(workspace: str, config_dir: str | None) -> tuple[list[Skill], list[SkippedSkill]]:
    """Every skill found (the first of each name), and those skipped with the reason."""
    found: list[Skill] = []
    skipped: list[SkippedSkill] = []
    names: set[str] = set()
    for folder, source, origin in folders(workspace, config_dir):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            outcome = _load(folder, entry.name, source, origin)
            if isinstance(outcome, SkippedSkill):
                skipped.append(outcome)
            elif outcome.name not in names:
                names.add(outcome.name)
                found.append(outcome)
    return found, skipped


def _load(folder: Path, dirname: str, source: Source, origin: str) -> Skill | SkippedSkill:
    where = f"{origin}/{dirname}/SKILL.md"
    try:
        root = within(folder, dirname)
        path = within(root, "SKILL.md")
    except Outside:
        return SkippedSkill(where, "a link out of its folder; skipped")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return SkippedSkill(where, "no SKILL.md; skipped")
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return SkippedSkill(where, "not a regular file; skipped")
        raw = fh.read(MAX_SKILL_BYTES + 1)
    if len(raw) > MAX_SKILL_BYTES:
        return SkippedSkill(where, "over 64 KiB; skipped")
    if b"\0" in raw:
        return SkippedSkill(where, "a binary file; skipped")
    try:
        meta, body = split_front_matter(
            raw.decode(errors="replace").replace("\r\n", "\n"), ("name", "description")
        )
    except FrontMatterError as err:
        return SkippedSkill(f"{where}:{err.line}", f"{err.message}; skipped")
    name = meta.get("name") or dirname
    if not _NAME.fullmatch(name):
        return SkippedSkill(where, f"name {name[:40]!r}: lower-case letters, digits, -; skipped")
    description = meta.get("description", "")
    if not description:
        return SkippedSkill(where, "no description in its front matter; skipped")
    files, digest = content(root)
    return Skill(name, description, root, source, origin, body.strip("\n"), digest, files)


def content(root: Path) -> tuple[tuple[str, ...], str]:
    """The folder's files (relative, SKILL.md first, at most MAX_FILES) and a hash of its
    names and bytes (links are hashed as their text, never followed)."""
    digest = hashlib.sha256()
    files: list[str] = []
    budget = MAX_HASHED_BYTES
    for rel in _walk(root):
        full = root / rel
        digest.update(rel.encode(errors="surrogateescape") + b"\0")
        try:
            if full.is_symlink():
                digest.update(b"link:" + os.readlink(full).encode(errors="surrogateescape"))
            elif full.is_file():
                with open(full, "rb") as fh:
                    data = fh.read(max(0, budget))
                budget -= len(data)
                digest.update(data)
        except OSError:
            digest.update(b"unreadable")
        digest.update(b"\0")
        if len(files) < MAX_FILES:
            files.append(rel)
    ordered = sorted(files, key=lambda f: (f != "SKILL.md", f))
    return tuple(ordered), digest.hexdigest()[:32]


def _walk(root: Path) -> Iterable[str]:
    for top, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(top) / name
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                yield path.relative_to(root).as_posix()


# --- enables of workspace skills -----------------------------------------------------------


def state_file() -> Path:
    return paths.data_dir() / "skills.json"


def _load_state() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(state_file().read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(ws): {str(k): str(v) for k, v in names.items()}
        for ws, names in data.items()
        if isinstance(names, dict)
    }


Status = Literal["on", "off", "changed"]


def status(skill: Skill, workspace: str) -> Status:
    """A user skill is on; a workspace skill is on once enabled for the content it has now
    (`changed`: enabled, but its files changed since)."""
    if skill.source == "user":
        return "on"
    enabled = _load_state().get(workspace_key(workspace), {}).get(skill.name)
    if enabled is None:
        return "off"
    return "on" if enabled == skill.digest else "changed"


def set_enabled(skill: Skill, enabled: bool, workspace: str) -> None:
    state = _load_state()
    per_ws = state.setdefault(workspace_key(workspace), {})
    if enabled:
        per_ws[skill.name] = skill.digest
    else:
        per_ws.pop(skill.name, None)
    atomic_write_text(state_file(), json.dumps(state, indent=2, sort_keys=True) + "\n")


def active(workspace: str, config_dir: str | None) -> list[Skill]:
    """The skills the model may use in this workspace."""
    found, _ = discover(workspace, config_dir)
    return [s for s in found if status(s, workspace) == "on"]
