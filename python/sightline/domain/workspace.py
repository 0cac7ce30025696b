"""Confinement to the workspace root, and the list of files in it.

Every path a tool receives goes through resolve(): it is joined to the root, normalised and
resolved through symlinks, and must still lie inside the (resolved) root. So `..`, an
absolute path elsewhere and a symlink that leads out are all refused alike.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sightline.domain.errors import Refused
from sightline.domain.globs import glob_match

# Directories never worth listing when the workspace is not a git repository.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
GIT_TIMEOUT_S = 10.0
# Never files of the project, even when the workspace holds them (a workspace at `/`): their
# "files" are a process's environment (the key), devices and FIFOs that block a reader.
SYSTEM_DIRS = ("/proc", "/sys", "/dev")


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def inside(root: Path, path: Path) -> bool:
    return path == root or path.is_relative_to(root)


def system_path(real: Path | str) -> bool:
    """Whether a real (resolved) path lies in /proc, /sys or /dev."""
    text = str(real)
    return any(text == d or text.startswith(d + "/") for d in SYSTEM_DIRS)


def resolve(workspace: str, path: str) -> Path:
    """The real path of `path` (relative to the workspace, or absolute inside it); Refused
    when it leads outside the workspace."""
    if not isinstance(path, str) or not path.strip():
        raise Refused("path: expected a non-empty path relative to the workspace root")
    if "\0" in path:
        raise Refused("path: contains a NUL byte")
    root = _real(workspace)
    # `~` means the home directory, as in a shell and in reveal's file_path: the path the
    # transcript shows (`create ~/x`) is then the path used, inside the workspace or refused.
    full = os.path.expanduser(path) if path.startswith("~") else path
    candidate = Path(full) if os.path.isabs(full) else Path(workspace) / full
    real = _real(candidate)
    if not inside(root, real):
        shown = path if full == path else f"{path} ({full})"
        raise Refused(f"{shown}: outside the workspace ({workspace}); only files in it are allowed")
    if system_path(real):
        raise Refused(f"{path}: a system file ({real}); /proc, /sys and /dev are never read")
    return real


def relative(workspace: str, path: Path) -> str:
    """How a path is shown to the model and the user: relative to the root."""
    root = _real(workspace)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else "."


@dataclass
class Listing:
    files: list[str]
    complete: bool  # False when the walk stopped at its limit


def list_files(workspace: str, glob: str | None = None, limit: int = 50_000) -> Listing:
    """Workspace files (relative, sorted): git's view when it is a repository (tracked and
    untracked, ignored ones left out), else a walk that skips tool and VCS directories.
    Files whose real path leads outside the workspace are left out."""
    root = _real(workspace)
    names = _git_files(root)
    complete = True
    if names is None:
        names, complete = _walk(root, limit)
    files = []
    for name in names:
        if glob and not glob_match(glob, name):
            continue
        path = root / name
        if path.is_symlink():
            real = _real(path)
            if not inside(root, real) or system_path(real):
                continue
        elif system_path(path):
            continue
        if path.is_file():
            files.append(name)
    files.sort()
    if len(files) > limit:
        files, complete = files[:limit], False
    return Listing(files, complete)


def _git_files(root: Path) -> list[str] | None:
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "-co", "--exclude-standard"],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=True,
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = {n for n in out.decode(errors="surrogateescape").split("\0") if n}
    return sorted(names)


def _walk(root: Path, limit: int) -> tuple[list[str], bool]:
    names: list[str] = []
    for name in _iter_walk(root):
        if len(names) >= limit:
            return names, False
        names.append(name)
    return names, True


def _iter_walk(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        base = Path(dirpath).relative_to(root)
        for filename in sorted(filenames):
            yield str(base / filename) if str(base) != "." else filename
