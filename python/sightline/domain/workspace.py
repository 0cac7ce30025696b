"""The workspace: which files it holds, and staying inside a folder. One home for both, so the
model's list_files/grep, `@` completion, `@path` mentions, chips, rules files and extension
context files see one tree and one confinement.

Confinement: every path goes through real_path (joined to its folder, normalised, every
symlink followed) and must still lie inside the (resolved) folder, never in /proc, /sys or
/dev. So `..`, an absolute path elsewhere and a symlink that leads out are all refused alike.
`resolve` is the workspace's rule (tools, mentions, chips); `within` a folder's own relative
names (rules files, an extension's context files).

Listing (what a user expects a project's files to be):
* in git — the workspace, or any folder inside a repository (`git -C`) — git's view: tracked
  files, then with the untracked ones its ignore rules let through, less those deleted (unless
  git sees no file there at all: a folder it ignores is walked);
* elsewhere a breadth-first walk (shallow files first, bounded) that skips VCS folders,
  dependencies, tool caches and build outputs (SKIP_DIRS) and never follows a linked folder.
Either way only regular files whose real path stays in the workspace (outside the system
trees) are listed, judged without a stat per file (a walk's entry types, git's modes):
10 µs a stat here would cost a second at 100 000 files.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sightline.domain.errors import Refused
from sightline.domain.globs import glob_match

log = logging.getLogger(__name__)

# Folders a walk never enters (outside git, nothing says what is ignored); `*.egg-info` too.
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".jj", ".bzr",
        "node_modules", "bower_components",
        ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", ".direnv",
        ".idea", ".gradle", ".terraform", "target", "dist", "build", ".next",
    }
)  # fmt: skip
GIT_TIMEOUT_S = 10.0
WALK_MAX_FILES = 300_000
# Never files of the project, even when the workspace holds them (a workspace at `/`): their
# "files" are a process's environment (the key), devices and FIFOs that block a reader.
# lua/sightline/port/buffers.lua SYSTEM_TREES says the same for Neovim (a test holds them
# equal): the Lua-only reveal needs it with no core, the core's disk reads with no Neovim.
SYSTEM_DIRS = ("/proc", "/sys", "/dev")
_SYMLINK, _GITLINK = "120000", "160000"


def real_path(path: str | Path) -> Path:
    """The path with every symlink followed.

    os.path.realpath, not Path.resolve: on a symlink loop the latter raises RuntimeError in
    Python 3.11, and a looping link must be an unreadable file, not a crash."""
    return Path(os.path.realpath(path))


def inside(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)


def system_path(real: Path | str) -> bool:
    """Whether a real (resolved) path lies in /proc, /sys or /dev."""
    text = str(real)
    return any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS)


# --- confinement ----------------------------------------------------------------------------


def resolve(workspace: str, path: str) -> Path:
    """The real path of `path` (relative to the workspace, or absolute inside it); Refused
    when it leads outside the workspace."""
    if not isinstance(path, str) or not path.strip():
        raise Refused("path: expected a non-empty path relative to the workspace root")
    if "\0" in path:
        raise Refused("path: contains a NUL byte")
    root = real_path(workspace)
    # `~` means the home directory, as in a shell and in reveal's file_path: the path the
    # transcript shows (`create ~/x`) is then the path used, inside the workspace or refused.
    full = os.path.expanduser(path) if path.startswith("~") else path
    candidate = Path(full) if os.path.isabs(full) else Path(workspace) / full
    real = real_path(candidate)
    if not inside(root, real):
        shown = path if full == path else f"{path} ({full})"
        raise Refused(f"{shown}: outside the workspace ({workspace}); only files in it are allowed")
    if system_path(real):
        raise Refused(f"{path}: a system file ({real}); /proc, /sys and /dev are never read")
    return real


class Outside(ValueError):
    """A name that does not stay in its folder: `why` is 'absolute' (not even relative),
    'unusable' (NUL, too long: no file system takes it) or 'outside' (it leads out)."""

    def __init__(self, message: str, why: Literal["absolute", "unusable", "outside"]) -> None:
        super().__init__(message)
        self.why = why


def within(folder: Path | str, rel: str) -> Path:
    """The real path of `rel`, a name relative to `folder` that must stay inside it once every
    `..` and symlink is followed (and out of the system trees). Outside otherwise; a name no
    file system takes (NUL, too long) is Outside too. The file need not exist."""
    if os.path.isabs(rel) or rel.startswith("~"):
        raise Outside(f"{rel} is not relative to {folder}", "absolute")
    try:
        root = real_path(folder)
        target = real_path(root / rel)
    except (OSError, ValueError):
        raise Outside(f"{rel} is not a usable file name", "unusable") from None
    if not inside(root, target) or (system_path(target) and not system_path(root)):
        raise Outside(f"{rel} resolves outside {root}", "outside")
    return target


def relative(workspace: str, path: Path) -> str:
    """How a path is shown to the model and the user: relative to the root."""
    root = real_path(workspace)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else "."


# --- listing --------------------------------------------------------------------------------


@dataclass
class Listing:
    files: list[str]
    complete: bool  # False when the listing stopped at its limit


def list_files(workspace: str, glob: str | None = None, limit: int = 50_000) -> Listing:
    """The workspace's files (relative, sorted), as iter_files lists them, matching `glob`;
    at most `limit` of them."""
    names = last(iter_files(workspace, max_files=limit + 1))
    complete = len(names) <= limit
    files = sorted(n for n in names if not glob or glob_match(glob, n))
    if len(files) > limit:
        files, complete = files[:limit], False
    return Listing(files, complete)


def iter_files(
    workspace: Path | str, *, git_timeout: float = GIT_TIMEOUT_S, max_files: int = WALK_MAX_FILES
) -> Iterator[list[str]]:
    """Successive, growing lists of the workspace's files (see the module's note), the last
    one complete. In git: the tracked files first (git reads them from its index, fast), then
    the whole list, whose untracked files take a walk of the working tree. Elsewhere the walk
    yields after its first thousand files, then every twenty thousand."""
    root = real_path(workspace)
    if system_path(root):
        yield []
        return
    tracked = _tracked(root, git_timeout)
    if tracked is None:
        yield from _walk_batches(root, max_files=max_files)
        return
    if tracked:
        yield tracked
    untracked = git_files(root, untracked=True, timeout=git_timeout) or []
    extra = [n for n in untracked if _listable_untracked(root, n)]
    if not tracked and not extra:
        # git sees no file here: a folder it ignores (a build or dependency folder made the
        # workspace), or a repository with nothing in it yet.
        yield from _walk_batches(root, max_files=max_files)
        return
    deleted = set(_git(root, ["--deleted"], git_timeout) or ())
    if extra or deleted or not tracked:
        yield list(dict.fromkeys([n for n in tracked if n not in deleted] + extra))


def git_files(
    workspace: Path, *, untracked: bool = False, timeout: float = GIT_TIMEOUT_S
) -> list[str] | None:
    """`git ls-files --cached` (or `--others --exclude-standard` with `untracked`), relative
    to workspace, unfiltered; None when it is not in a git repository or git failed."""
    which = ["--others", "--exclude-standard"] if untracked else ["--cached"]
    return _git(Path(workspace), which, timeout)


def _git(root: Path, which: list[str], timeout: float) -> list[str] | None:
    cmd = ["git", "-C", str(root), "ls-files", "-z", *which]
    # Listing must never take the index lock a user's own git command needs.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        log.debug("git ls-files in %s failed: %s", root, e)
        return None
    if done.returncode != 0:
        return None
    # (--cached lists a conflicted file once per stage; the dict drops repeats.)
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return list(dict.fromkeys(n for n in names if n))


def _tracked(root: Path, timeout: float) -> list[str] | None:
    """The tracked files that are files: git's modes tell links (checked where they lead)
    and submodules (folders) apart without a stat."""
    staged = _git(root, ["--cached", "--stage"], timeout)
    if staged is None:
        return None
    out: list[str] = []
    for entry in staged:
        meta, _, name = entry.partition("\t")
        mode = meta[:6]
        if mode == _GITLINK or not _name_ok(root, name):
            continue
        if mode == _SYMLINK and not _link_ok(root, name):
            continue
        out.append(name)
    return list(dict.fromkeys(out))


def _name_ok(root: Path, name: str) -> bool:
    """A name's own text: no newline (one path a line in the index), not in a system tree."""
    return "\n" not in name and not (str(root) == "/" and system_path("/" + name))


def _link_ok(root: Path, name: str) -> bool:
    real = real_path(root / name)
    return inside(root, real) and not system_path(real) and real.is_file()


def _listable_untracked(root: Path, name: str) -> bool:
    # Untracked files are few; their type needs one lstat (git gives no mode for them).
    if name.endswith("/") or not _name_ok(root, name):
        return False  # a nested repository git shows as a folder
    path = root / name
    try:
        if path.is_symlink():
            return _link_ok(root, name)
        return path.is_file()
    except OSError:
        return False


def last(lists: Iterable[list[str]]) -> list[str]:
    """The last (complete) list of a listing."""
    tail = deque(lists, maxlen=1)
    return tail[0] if tail else []


def _walk_batches(
    root: Path, *, max_files: int, first: int = 1_000, batch: int = 20_000
) -> Iterator[list[str]]:
    out: list[str] = []
    pending: deque[str] = deque([""])
    # A small first batch: an `@` typed as the composer opens gets files at once.
    next_yield = first
    while pending and len(out) < max_files:
        rel = pending.popleft()  # breadth-first: shallow files are listed first
        for entry in _entries(root / rel if rel else root):
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if _walked_into(root, entry.name, path):
                        pending.append(path)
                elif len(out) >= max_files:
                    continue
                elif entry.is_symlink():
                    # A linked folder may lead anywhere, even into a loop; a linked file
                    # counts when it stays inside.
                    if _link_ok(root, path):
                        out.append(path)
                elif entry.is_file(follow_symlinks=False) and "\n" not in path:
                    out.append(path)
            except OSError:
                continue
        if len(out) >= next_yield:
            yield list(out)
            next_yield = len(out) + batch
    yield out


def _walked_into(root: Path, name: str, path: str) -> bool:
    if name in SKIP_DIRS or name.endswith(".egg-info"):
        return False
    return not (str(root) == "/" and system_path("/" + path))


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as e:
        log.debug("cannot list %s: %s", folder, e)
        return []
