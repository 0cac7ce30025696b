"""Extensions: manifest validation, discovery, enable state, install and uninstall.

An extension is a folder holding ``sightline-extension.json``.  Users install
extensions into the user data dir; a workspace may carry its own in
``.sightline/extensions/``.  Which ones are enabled is kept in the user config
dir, for the user and per workspace.  Everything here is pure filesystem logic
(no Neovim), shared by the ``sightline`` command line and the core.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sightline.domain import paths
from sightline.domain.text import clean_display_text
from sightline.domain.workspace import Outside, real_path, within

log = logging.getLogger(__name__)

MANIFEST_FILE = "sightline-extension.json"
DEFAULT_CONTEXT_FILE = "SIGHTLINE.md"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*")
MAX_NAME_CHARS = 255  # a folder name
# A manifest is a few hundred bytes; the cap only stops a hostile file from
# being loaded whole into memory by `status()`.
MAX_MANIFEST_BYTES = 1 << 20
# A manifest is a flat object; deeper JSON is refused before anything reads it (the
# decoder itself gives up with RecursionError somewhere below Python's stack limit).
MAX_MANIFEST_DEPTH = 32
MAX_VERSION_CHARS = 100
MAX_DESCRIPTION_CHARS = 1000
# Folders never copied by `install`: version-control and bytecode caches.
_INSTALL_IGNORE = shutil.ignore_patterns(".git", "__pycache__")

Source = Literal["user", "workspace"]


class ManifestError(ValueError):
    """The manifest cannot be used; the message is shown to the user as is."""


class ExtensionError(Exception):
    """A user-facing failure of install/uninstall/enable/disable (one line)."""


@dataclass(frozen=True)
class Manifest:
    name: str
    version: str
    description: str | None
    context_files: tuple[str, ...]


@dataclass(frozen=True)
class ExtensionDirs:
    """Where extensions and their enable state live.

    Tests and the core may pass explicit paths; `default()` asks platformdirs
    (through sightline.domain.paths) at call time, so XDG variables set after import
    are honoured.
    """

    user_extensions: Path
    state_file: Path

    @classmethod
    def default(cls) -> ExtensionDirs:
        return cls(
            user_extensions=paths.data_dir() / "extensions",
            state_file=paths.config_dir() / "extensions.json",
        )


def workspace_extensions_dir(workspace: Path | str) -> Path:
    return Path(workspace) / ".sightline" / "extensions"


@dataclass(frozen=True)
class Extension:
    """One discovered extension folder, valid or not, with its enable state."""

    folder_name: str
    source: Source
    path: Path
    manifest: Manifest | None
    error: str | None
    enabled: bool

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest else self.folder_name

    @property
    def version(self) -> str | None:
        return self.manifest.version if self.manifest else None

    @property
    def description(self) -> str | None:
        return self.manifest.description if self.manifest else None

    @property
    def active(self) -> bool:
        return self.manifest is not None and self.error is None and self.enabled

    def inactive_reason(self) -> str | None:
        """Why the extension is not active, in words for the user; None when active."""
        if self.error is not None:
            return self.error
        if self.enabled:
            return None
        if self.source == "workspace":
            return "workspace extensions stay disabled until enabled with --workspace"
        return "disabled"

    def status(self) -> ExtensionStatus:
        return ExtensionStatus(
            name=self.name,
            version=self.version,
            source=self.source,
            active=self.active,
            enabled=self.enabled,
            error=self.error,
            path=self.path,
            description=self.description,
        )


@dataclass(frozen=True)
class ExtensionStatus:
    """What `status()` reports per extension (the core sends `to_dict()` to Lua)."""

    name: str
    version: str | None
    source: Source
    active: bool
    enabled: bool
    error: str | None
    path: Path
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "source": self.source,
            "active": self.active,
            "enabled": self.enabled,
            "error": self.error,
            "path": str(self.path),
        }
        # Optional and additive: callers that predate it never see the key.
        if self.description is not None:
            data["description"] = self.description
        return data


# --- manifest -------------------------------------------------------------


def load_manifest(folder: Path | str) -> Manifest:
    """Read and validate `folder`'s manifest; raise ManifestError saying what is wrong."""
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise ManifestError(f"{MANIFEST_FILE} is missing") from None
    except OSError as e:
        raise ManifestError(f"cannot read {MANIFEST_FILE}: {e.strerror or e}") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{MANIFEST_FILE} is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ManifestError(f"{MANIFEST_FILE} is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise ManifestError(f"{MANIFEST_FILE} is not valid JSON: {e}") from None
    except RecursionError:
        raise ManifestError(_too_deep()) from None
    return parse_manifest(data, folder)


def _too_deep() -> str:
    return f"{MANIFEST_FILE} is nested deeper than {MAX_MANIFEST_DEPTH} levels"


def _depth(data: object) -> int:
    """How deep lists and objects nest in decoded JSON (iterative: no recursion limit)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        children = (
            value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        )
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            if deepest > MAX_MANIFEST_DEPTH:
                break
            stack.extend((child, level + 1) for child in children)
    return deepest


def parse_manifest(data: object, folder: Path | str) -> Manifest:
    """Validate decoded manifest JSON; context files are checked against `folder`."""
    if not isinstance(data, dict):
        raise ManifestError(f"{MANIFEST_FILE} must hold a JSON object")
    if _depth(data) > MAX_MANIFEST_DEPTH:
        raise ManifestError(_too_deep())
    name = data.get("name")
    if name is None:
        raise ManifestError('missing "name"')
    if not isinstance(name, str):
        raise ManifestError('"name" must be a string')
    check_name(name)
    version = data.get("version")
    if version is None:
        raise ManifestError('missing "version"')
    if not isinstance(version, str) or not clean_display_text(version):
        raise ManifestError('"version" must be a non-empty string')
    if len(version) > MAX_VERSION_CHARS:
        raise ManifestError(f'"version" must be at most {MAX_VERSION_CHARS} characters')
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise ManifestError('"description" must be a string')
    context_files = _context_file_names(data.get("contextFileName", DEFAULT_CONTEXT_FILE))
    for rel in context_files:
        check_inside(Path(folder), rel)
    return Manifest(
        name=name,
        version=clean_display_text(version),
        description=_optional_text(description),
        context_files=context_files,
    )


def _optional_text(value: str | None) -> str | None:
    # One safe line (no terminal escapes) for every consumer: menus, the
    # listing, the model.  A blank description is no description.
    return clean_display_text(value, MAX_DESCRIPTION_CHARS) or None


def check_name(name: str) -> None:
    if not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME_CHARS:
        shown = repr(name) if len(name) <= 80 else repr(name[:80] + "…")
        raise ManifestError(
            f"invalid name {shown}: use lowercase letters, digits, '.', '_' and '-',"
            " starting with a letter or digit"
        )


def _context_file_names(value: object) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ManifestError('"contextFileName" must be a non-empty string or a list of them')
    # A name listed twice would be read (and budgeted) twice.
    return tuple(dict.fromkeys(names))


def check_inside(folder: Path, rel: str) -> Path:
    """Resolve context file `rel` inside `folder` (domain/workspace.py `within`: symlinks
    followed, so a link pointing out is refused as well as `..` and absolute paths); raise
    ManifestError if it leaves it. Missing files are fine here."""
    shown = repr(rel) if len(rel) <= 80 else repr(rel[:80] + "…")
    try:
        return within(folder, rel)
    except Outside as out:
        said = {
            "absolute": "must be a path relative to the extension",
            "unusable": "is not a usable file name",
            "outside": "is outside the extension folder",
        }
        raise ManifestError(f"context file {shown} {said[out.why]}") from None


def format_capabilities(ext: Extension) -> str:
    """One line saying what an extension offers (shared by the CLI and the model context)."""
    if ext.manifest is None:
        return ""
    shown = []
    for rel in ext.manifest.context_files:
        present = (ext.path / rel).is_file()
        shown.append(rel if present else f"{rel} (missing)")
    return "context files: " + ", ".join(shown)


# --- enable state -----------------------------------------------------------


@dataclass
class EnableState:
    """Explicit choices only; anything absent falls back to the defaults.

    user: name -> enabled, applies to user-installed extensions everywhere.
    workspaces: workspace key -> name -> enabled, overrides for that workspace.
    """

    user: dict[str, bool]
    workspaces: dict[str, dict[str, bool]]

    def enabled(self, ext_name: str, source: Source, workspace_key: str | None) -> bool:
        per_ws = self.workspaces.get(workspace_key, {}) if workspace_key else {}
        if ext_name in per_ws:
            return per_ws[ext_name]
        if source == "workspace":
            # A cloned repository must not inject context by itself.
            return False
        return self.user.get(ext_name, True)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "user": self.user, "workspaces": self.workspaces}


def workspace_key(workspace: Path | str) -> str:
    return os.path.realpath(workspace)


def load_state(path: Path, *, strict: bool = False) -> EnableState:
    """Read the enable state; a missing file is the defaults.

    Reads for `status()` are tolerant (a broken file is logged and treated
    as defaults).  Writers pass strict=True so a file the user broke by hand
    is reported instead of silently overwritten.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return EnableState({}, {})
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        if strict:
            raise ExtensionError(f"cannot read {path}: {e}; fix or delete it") from None
        log.warning("ignoring unreadable extension state %s: %s", path, e)
        return EnableState({}, {})
    user = _bool_map(data.get("user") if isinstance(data, dict) else None)
    raw_ws = data.get("workspaces") if isinstance(data, dict) else None
    workspaces = {
        str(k): _bool_map(v) for k, v in (raw_ws.items() if isinstance(raw_ws, dict) else ())
    }
    return EnableState(user, workspaces)


def _bool_map(value: object) -> dict[str, bool]:
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, bool)}


def save_state(path: Path, state: EnableState) -> None:
    atomic_write_text(path, json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and os.replace: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --- discovery ----------------------------------------------------------------


def _scan(root: Path) -> Iterator[tuple[str, Path]]:
    """Extension folders directly under root, sorted; dot-folders are install leftovers."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as e:
        log.debug("cannot list %s: %s", root, e)
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            is_dir = entry.is_dir()  # follows symlinks: a dev checkout may be linked in
        except OSError:
            continue
        if is_dir:
            yield entry.name, Path(entry.path)


def _load(folder_name: str, folder: Path) -> tuple[Manifest | None, str | None]:
    try:
        manifest = load_manifest(folder)
    except ManifestError as e:
        return None, str(e)
    except Exception as e:
        # A bug, but one broken extension must never break the listing or the others.
        log.exception("reading the manifest in %s failed", folder)
        return None, f"{MANIFEST_FILE} cannot be read: {type(e).__name__} (details in the log)"
    if manifest.name != folder_name:
        # Listed, enabled and uninstalled by folder name: the two must agree.
        return None, f"name {manifest.name!r} does not match the folder name {folder_name!r}"
    return manifest, None


def discover(workspace: Path | str | None, dirs: ExtensionDirs | None = None) -> list[Extension]:
    """Every extension folder for this workspace: user-installed first, then the workspace's.

    Never raises for a broken extension: its error is in the result.
    """
    dirs = dirs or ExtensionDirs.default()
    state = load_state(dirs.state_file)
    ws_key = workspace_key(workspace) if workspace is not None else None
    found: list[Extension] = []
    user_names: set[str] = set()
    for folder_name, folder in _scan(dirs.user_extensions):
        manifest, error = _load(folder_name, folder)
        user_names.add(folder_name)
        enabled = state.enabled(folder_name, "user", ws_key)
        found.append(Extension(folder_name, "user", folder, manifest, error, enabled))
    if workspace is not None:
        for folder_name, folder in _scan(workspace_extensions_dir(workspace)):
            manifest, error = _load(folder_name, folder)
            if error is None and folder_name in user_names:
                # One name, one meaning: the installed extension wins, so that
                # `@ext:<name>` never changes meaning by entering a repository.
                error = "an installed extension has the same name"
            enabled = state.enabled(folder_name, "workspace", ws_key)
            found.append(Extension(folder_name, "workspace", folder, manifest, error, enabled))
    return found


def status(
    workspace: Path | str | None, dirs: ExtensionDirs | None = None
) -> list[ExtensionStatus]:
    """The list shown by `:Sightline extensions` and `sightline extensions`."""
    return [ext.status() for ext in discover(workspace, dirs)]


def active_extensions(
    workspace: Path | str | None, dirs: ExtensionDirs | None = None
) -> dict[str, Extension]:
    """Active extensions by name: what `@ext:<name>` may resolve to in this workspace."""
    return {ext.name: ext for ext in discover(workspace, dirs) if ext.active}


def find(
    name: str, workspace: Path | str | None, dirs: ExtensionDirs | None = None
) -> list[Extension]:
    """Extensions whose folder is called `name` (user-installed first)."""
    return [ext for ext in discover(workspace, dirs) if ext.folder_name == name]


# --- install / uninstall / enable ------------------------------------------------


def install(
    source: Path | str, *, force: bool = False, dirs: ExtensionDirs | None = None
) -> Extension:
    """Copy the extension folder `source` into the user extensions dir.

    The manifest is validated before anything is copied, and the copy is
    validated again (an absolute symlink may point back at the source).  An
    installed extension of the same name is replaced only with `force`.
    """
    dirs = dirs or ExtensionDirs.default()
    src = Path(source).expanduser()
    if not src.is_dir():
        raise ExtensionError(f"{source}: not a folder")
    try:
        manifest = load_manifest(src)
    except ManifestError as e:
        raise ExtensionError(f"{source}: {e}") from None
    target = dirs.user_extensions / manifest.name
    if target.exists() or target.is_symlink():
        if real_path(src) == real_path(target):
            raise ExtensionError(f"{manifest.name} is already installed from this folder")
        if not force:
            raise ExtensionError(
                f"{manifest.name} is already installed at {target}; use --force to replace it"
            )
    dirs.user_extensions.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".install-{manifest.name}-", dir=dirs.user_extensions))
    try:
        copy = staging / manifest.name
        shutil.copytree(src, copy, symlinks=True, ignore=_INSTALL_IGNORE)
        try:
            load_manifest(copy)
        except ManifestError as e:
            raise ExtensionError(f"{source}: once copied, {e}") from None
        _swap_into_place(copy, target, staging)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return _require_one(manifest.name, None, dirs, "user")


def _swap_into_place(new: Path, target: Path, staging: Path) -> None:
    """Move `new` to `target`; an old target is moved aside first, then removed."""
    old = staging / "old"
    # A linked dev checkout is replaced as a link: its target is left alone.
    had_old = target.exists() or target.is_symlink()
    if had_old:
        target.rename(old)
    try:
        new.rename(target)
    except OSError:
        if had_old:
            old.rename(target)
        raise


def uninstall(
    name: str, *, workspace: Path | str | None = None, dirs: ExtensionDirs | None = None
) -> Path:
    """Remove an installed extension (broken ones too); return the removed folder."""
    dirs = dirs or ExtensionDirs.default()
    _check_cli_name(name)
    target = dirs.user_extensions / name
    if not (target.exists() or target.is_symlink()):
        carried = workspace_extensions_dir(workspace) / name if workspace is not None else None
        if carried is not None and carried.is_dir():
            raise ExtensionError(
                f"{name} is not installed: it comes with the workspace ({carried});"
                " delete that folder to remove it"
            )
        raise ExtensionError(f"{name} is not installed")
    if target.is_symlink():
        target.unlink()  # never delete the files of a linked dev checkout
    else:
        shutil.rmtree(target)
    # Forget the user-level choice so a later reinstall starts from the default.
    state = load_state(dirs.state_file)
    if state.user.pop(name, None) is not None:
        save_state(dirs.state_file, state)
    return target


def set_enabled(
    name: str,
    enabled: bool,
    *,
    workspace: Path | str,
    workspace_scope: bool,
    dirs: ExtensionDirs | None = None,
) -> Extension:
    """Enable or disable `name` for the user, or (workspace_scope) for `workspace` only.

    A workspace-carried extension can only be switched per workspace: a
    user-wide switch would also turn on same-named extensions of any other
    repository.  Returns the extension as it is afterwards.
    """
    dirs = dirs or ExtensionDirs.default()
    _check_cli_name(name)
    matches = find(name, workspace, dirs)
    if not matches:
        raise ExtensionError(f"no extension named {name} (see: sightline extensions list)")
    if not workspace_scope and all(m.source == "workspace" for m in matches):
        verb = "enable" if enabled else "disable"
        raise ExtensionError(
            f"{name} comes from this workspace; {verb} it for this workspace with --workspace"
        )
    state = load_state(dirs.state_file, strict=True)
    if workspace_scope:
        state.workspaces.setdefault(workspace_key(workspace), {})[name] = enabled
    else:
        state.user[name] = enabled
    save_state(dirs.state_file, state)
    return find(name, workspace, dirs)[0]


def enable(
    name: str,
    *,
    workspace: Path | str,
    workspace_scope: bool = False,
    dirs: ExtensionDirs | None = None,
) -> Extension:
    return set_enabled(name, True, workspace=workspace, workspace_scope=workspace_scope, dirs=dirs)


def disable(
    name: str,
    *,
    workspace: Path | str,
    workspace_scope: bool = False,
    dirs: ExtensionDirs | None = None,
) -> Extension:
    return set_enabled(name, False, workspace=workspace, workspace_scope=workspace_scope, dirs=dirs)


def _check_cli_name(name: str) -> None:
    # Also what keeps `uninstall ../../x` from touching anything outside the dir.
    try:
        check_name(name)
    except ManifestError as e:
        raise ExtensionError(str(e)) from None


def _require_one(
    name: str, workspace: Path | str | None, dirs: ExtensionDirs, source: Source
) -> Extension:
    for ext in find(name, workspace, dirs):
        if ext.source == source:
            return ext
    raise ExtensionError(f"{name} vanished while installing")  # a concurrent uninstall
