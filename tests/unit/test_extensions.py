"""Extensions: manifests, discovery, enable state, install/uninstall (no Neovim)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sightline.domain import extensions as ext
from sightline.domain.extensions import ExtensionDirs, ExtensionError


def make_ext(
    root: Path,
    name: str,
    manifest: dict[str, Any] | str | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """An extension folder `root/name`; manifest defaults to a valid one."""
    folder = root / name
    folder.mkdir(parents=True)
    if manifest is None:
        manifest = {"name": name, "version": "1.0.0", "description": f"The {name} helper"}
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (folder / ext.MANIFEST_FILE).write_text(text)
    for rel, content in (files if files is not None else {"SIGHTLINE.md": "# notes\n"}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content)
    return folder


@pytest.fixture
def dirs(isolated_env: Path) -> ExtensionDirs:
    return ExtensionDirs.default()


@pytest.fixture
def ws(isolated_env: Path) -> Path:
    return isolated_env


def by_name(statuses: list[ext.ExtensionStatus]) -> dict[str, ext.ExtensionStatus]:
    return {s.name: s for s in statuses}


# --- dirs ----------------------------------------------------------------------


def test_dirs_follow_xdg_set_after_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "c"))
    dirs = ExtensionDirs.default()
    assert dirs.user_extensions == tmp_path / "d" / "sightline" / "extensions"
    assert dirs.state_file == tmp_path / "c" / "sightline" / "extensions.json"


# --- status ----------------------------------------------------------------------


def test_no_extensions_is_an_empty_list(dirs: ExtensionDirs, ws: Path) -> None:
    assert ext.status(ws, dirs) == []


def test_installed_extension_is_active_with_its_description(dirs: ExtensionDirs, ws: Path) -> None:
    folder = make_ext(dirs.user_extensions, "foo")
    [s] = ext.status(ws, dirs)
    assert (s.name, s.version, s.source, s.active, s.error) == ("foo", "1.0.0", "user", True, None)
    assert s.path == folder
    assert s.to_dict() == {
        "name": "foo",
        "version": "1.0.0",
        "source": "user",
        "active": True,
        "enabled": True,
        "error": None,
        "path": str(folder),
        "description": "The foo helper",
    }


def test_description_is_omitted_when_absent(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(dirs.user_extensions, "foo", {"name": "foo", "version": "2"})
    [s] = ext.status(ws, dirs)
    assert s.description is None
    assert "description" not in s.to_dict()


def test_description_is_made_one_safe_line(dirs: ExtensionDirs, ws: Path) -> None:
    desc = "Red \x1b[31malert\x1b[0m\nsecond   line\x07"
    make_ext(dirs.user_extensions, "foo", {"name": "foo", "version": "2", "description": desc})
    [s] = ext.status(ws, dirs)
    assert s.description == "Red alert second line"


def test_workspace_extension_is_disabled_until_enabled_for_that_workspace(
    dirs: ExtensionDirs, ws: Path, tmp_path: Path
) -> None:
    make_ext(ext.workspace_extensions_dir(ws), "proj")
    [s] = ext.status(ws, dirs)
    assert (s.source, s.enabled, s.active, s.error) == ("workspace", False, False, None)
    assert ext.active_extensions(ws, dirs) == {}

    ext.enable("proj", workspace=ws, workspace_scope=True, dirs=dirs)
    assert ext.status(ws, dirs)[0].active
    assert list(ext.active_extensions(ws, dirs)) == ["proj"]

    # A clone elsewhere carrying the same extension is not enabled by this.
    other = tmp_path / "other"
    make_ext(ext.workspace_extensions_dir(other), "proj")
    assert not ext.status(other, dirs)[0].active


def test_user_wide_switch_of_a_workspace_extension_is_refused(
    dirs: ExtensionDirs, ws: Path
) -> None:
    make_ext(ext.workspace_extensions_dir(ws), "proj")
    with pytest.raises(ExtensionError, match="--workspace"):
        ext.enable("proj", workspace=ws, dirs=dirs)
    with pytest.raises(ExtensionError, match="--workspace"):
        ext.disable("proj", workspace=ws, dirs=dirs)
    assert not dirs.state_file.exists()


def test_user_disable_and_workspace_override(dirs: ExtensionDirs, ws: Path, tmp_path: Path) -> None:
    make_ext(dirs.user_extensions, "foo")
    other = tmp_path / "other"
    other.mkdir()
    result = ext.disable("foo", workspace=ws, dirs=dirs)
    assert not result.active and result.inactive_reason() == "disabled"
    assert not ext.status(other, dirs)[0].active

    ext.enable("foo", workspace=ws, workspace_scope=True, dirs=dirs)
    assert ext.status(ws, dirs)[0].active  # this workspace overrides
    assert not ext.status(other, dirs)[0].active  # the user-wide choice stands elsewhere

    ext.enable("foo", workspace=ws, dirs=dirs)
    ext.disable("foo", workspace=ws, workspace_scope=True, dirs=dirs)
    assert not ext.status(ws, dirs)[0].active
    assert ext.status(other, dirs)[0].active


def test_enable_unknown_extension(dirs: ExtensionDirs, ws: Path) -> None:
    with pytest.raises(ExtensionError, match="no extension named nope"):
        ext.enable("nope", workspace=ws, dirs=dirs)


def test_installed_extension_shadows_a_workspace_one_of_the_same_name(
    dirs: ExtensionDirs, ws: Path
) -> None:
    make_ext(dirs.user_extensions, "foo")
    make_ext(ext.workspace_extensions_dir(ws), "foo")
    ext.enable("foo", workspace=ws, workspace_scope=True, dirs=dirs)
    user, workspace = ext.status(ws, dirs)
    assert (user.source, user.active) == ("user", True)
    assert (workspace.source, workspace.active) == ("workspace", False)
    assert workspace.error == "an installed extension has the same name"
    assert ext.active_extensions(ws, dirs)["foo"].source == "user"


def test_context_file_list_and_default(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(
        dirs.user_extensions,
        "multi",
        {"name": "multi", "version": "1", "contextFileName": ["A.md", "docs/B.md", "A.md"]},
        {"A.md": "a", "docs/B.md": "b"},
    )
    make_ext(dirs.user_extensions, "plain")
    found = {e.name: e for e in ext.discover(ws, dirs)}
    assert found["multi"].manifest is not None
    assert found["multi"].manifest.context_files == ("A.md", "docs/B.md")
    assert found["plain"].manifest is not None
    assert found["plain"].manifest.context_files == ("SIGHTLINE.md",)
    assert ext.format_capabilities(found["multi"]) == "context files: A.md, docs/B.md"


def test_capabilities_mark_a_missing_context_file(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(dirs.user_extensions, "foo", files={})
    [found] = ext.discover(ws, dirs)
    assert ext.format_capabilities(found) == "context files: SIGHTLINE.md (missing)"


# --- broken manifests --------------------------------------------------------------


BROKEN: list[tuple[str, Any, str]] = [
    ("badjson", '{"name": "badjson", "version": ', "not valid JSON"),
    ("notobject", "[1, 2]", "must hold a JSON object"),
    ("noname", {"version": "1"}, 'missing "name"'),
    ("numname", {"name": 7, "version": "1"}, '"name" must be a string'),
    ("badname", {"name": "Bad Name", "version": "1"}, "invalid name 'Bad Name'"),
    ("dotstart", {"name": ".hidden", "version": "1"}, "invalid name '.hidden'"),
    ("other", {"name": "different", "version": "1"}, "does not match the folder name"),
    ("nover", {"name": "nover"}, 'missing "version"'),
    ("emptyver", {"name": "emptyver", "version": " "}, '"version" must be a non-empty'),
    ("baddesc", {"name": "baddesc", "version": "1", "description": 3}, '"description" must'),
    ("badctx", {"name": "badctx", "version": "1", "contextFileName": 5}, '"contextFileName"'),
    ("emptyctx", {"name": "emptyctx", "version": "1", "contextFileName": [""]}, "contextFile"),
    (
        "dotdot",
        {"name": "dotdot", "version": "1", "contextFileName": "../secret.md"},
        "'../secret.md' is outside the extension folder",
    ),
    (
        "absolute",
        {"name": "absolute", "version": "1", "contextFileName": "/etc/hostname"},
        "must be a path relative",
    ),
]


@pytest.mark.parametrize(("folder", "manifest", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_manifest_is_listed_with_its_error(
    dirs: ExtensionDirs, ws: Path, folder: str, manifest: Any, message: str
) -> None:
    make_ext(dirs.user_extensions, folder, manifest)
    make_ext(dirs.user_extensions, "zgood")
    listed = by_name(ext.status(ws, dirs))
    broken = listed[folder]
    assert broken.error is not None and message in broken.error
    assert not broken.active
    assert broken.version is None
    assert listed["zgood"].active  # one broken extension does not hide the others
    assert folder not in ext.active_extensions(ws, dirs)


def test_missing_manifest_and_symlinked_context_file_out(
    dirs: ExtensionDirs, ws: Path, tmp_path: Path
) -> None:
    (dirs.user_extensions / "empty").mkdir(parents=True)
    secret = tmp_path / "secret.md"
    secret.write_text("secret")
    link = make_ext(dirs.user_extensions, "linky", files={})
    (link / "SIGHTLINE.md").symlink_to(secret)
    listed = by_name(ext.status(ws, dirs))
    assert listed["empty"].error == "sightline-extension.json is missing"
    assert listed["linky"].error == "context file 'SIGHTLINE.md' is outside the extension folder"
    assert not listed["linky"].active


def test_symlink_inside_the_folder_is_fine(dirs: ExtensionDirs, ws: Path) -> None:
    folder = make_ext(dirs.user_extensions, "foo", files={"docs/real.md": "x"})
    (folder / "SIGHTLINE.md").symlink_to(folder / "docs" / "real.md")
    assert ext.status(ws, dirs)[0].active


def test_install_leftovers_and_files_are_not_extensions(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(dirs.user_extensions, ".install-foo-x")
    (dirs.user_extensions / "README").write_text("not a folder")
    assert ext.status(ws, dirs) == []


# --- install / uninstall -----------------------------------------------------------


def test_install_copies_and_activates(dirs: ExtensionDirs, ws: Path, tmp_path: Path) -> None:
    src = make_ext(tmp_path / "src", "foo", files={"SIGHTLINE.md": "v1", ".git/HEAD": "x"})
    installed = ext.install(src, dirs=dirs)
    assert installed.path == dirs.user_extensions / "foo"
    assert (installed.path / "SIGHTLINE.md").read_text() == "v1"
    assert not (installed.path / ".git").exists()
    assert ext.status(ws, dirs)[0].active
    # The copy is independent of the source.
    (src / "SIGHTLINE.md").write_text("changed")
    assert (installed.path / "SIGHTLINE.md").read_text() == "v1"


def test_install_refuses_to_overwrite_without_force(dirs: ExtensionDirs, tmp_path: Path) -> None:
    src = make_ext(tmp_path / "src", "foo", files={"SIGHTLINE.md": "v1"})
    ext.install(src, dirs=dirs)
    (src / "SIGHTLINE.md").write_text("v2")
    with pytest.raises(ExtensionError, match=r"already installed.*--force"):
        ext.install(src, dirs=dirs)
    assert (dirs.user_extensions / "foo" / "SIGHTLINE.md").read_text() == "v1"
    ext.install(src, force=True, dirs=dirs)
    assert (dirs.user_extensions / "foo" / "SIGHTLINE.md").read_text() == "v2"
    assert sorted(p.name for p in dirs.user_extensions.iterdir()) == ["foo"]


def test_install_validates_before_copying(dirs: ExtensionDirs, tmp_path: Path) -> None:
    src = make_ext(
        tmp_path / "src", "bad", {"name": "bad", "version": "1", "contextFileName": ".."}
    )
    with pytest.raises(ExtensionError, match="outside the extension folder"):
        ext.install(src, dirs=dirs)
    with pytest.raises(ExtensionError, match="not a folder"):
        ext.install(tmp_path / "nowhere", dirs=dirs)
    assert not dirs.user_extensions.exists() or list(dirs.user_extensions.iterdir()) == []


def test_install_refuses_a_copy_whose_link_points_back_to_the_source(
    dirs: ExtensionDirs, tmp_path: Path
) -> None:
    src = make_ext(tmp_path / "src", "foo", files={"real.md": "x"})
    (src / "SIGHTLINE.md").symlink_to(src / "real.md")  # absolute: fine in place, not once copied
    with pytest.raises(ExtensionError, match=r"once copied.*outside"):
        ext.install(src, dirs=dirs)
    assert list(dirs.user_extensions.iterdir()) == []


def test_install_from_the_installed_folder_is_refused(dirs: ExtensionDirs) -> None:
    folder = make_ext(dirs.user_extensions, "foo")
    with pytest.raises(ExtensionError, match="already installed from this folder"):
        ext.install(folder, force=True, dirs=dirs)
    assert (folder / ext.MANIFEST_FILE).exists()


def test_uninstall(dirs: ExtensionDirs, ws: Path, tmp_path: Path) -> None:
    ext.install(make_ext(tmp_path / "src", "foo"), dirs=dirs)
    ext.disable("foo", workspace=ws, dirs=dirs)
    removed = ext.uninstall("foo", dirs=dirs)
    assert removed == dirs.user_extensions / "foo" and not removed.exists()
    assert ext.status(ws, dirs) == []
    # The user-level choice is forgotten: a reinstall starts enabled.
    ext.install(make_ext(tmp_path / "src2", "foo"), dirs=dirs)
    assert ext.status(ws, dirs)[0].active


def test_uninstall_broken_extension(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(dirs.user_extensions, "broken", "{oops")
    ext.uninstall("broken", dirs=dirs)
    assert ext.status(ws, dirs) == []


def test_uninstall_errors(dirs: ExtensionDirs, ws: Path, tmp_path: Path) -> None:
    with pytest.raises(ExtensionError, match="foo is not installed"):
        ext.uninstall("foo", dirs=dirs)
    make_ext(ext.workspace_extensions_dir(ws), "proj")
    with pytest.raises(ExtensionError, match="comes with the workspace"):
        ext.uninstall("proj", workspace=ws, dirs=dirs)
    victim = tmp_path / "victim"
    victim.mkdir()
    with pytest.raises(ExtensionError, match="invalid name"):
        ext.uninstall("../../victim", dirs=dirs)
    assert victim.exists()


def test_uninstall_of_a_linked_checkout_keeps_its_files(
    dirs: ExtensionDirs, ws: Path, tmp_path: Path
) -> None:
    checkout = make_ext(tmp_path / "dev", "foo")
    dirs.user_extensions.mkdir(parents=True)
    (dirs.user_extensions / "foo").symlink_to(checkout)
    assert ext.status(ws, dirs)[0].active
    ext.uninstall("foo", dirs=dirs)
    assert (checkout / ext.MANIFEST_FILE).exists()
    assert not (dirs.user_extensions / "foo").exists()


# --- the state file -------------------------------------------------------------------


def test_state_is_written_atomically_as_json(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(dirs.user_extensions, "foo")
    ext.disable("foo", workspace=ws, dirs=dirs)
    ext.enable("foo", workspace=ws, workspace_scope=True, dirs=dirs)
    data = json.loads(dirs.state_file.read_text())
    assert data["user"] == {"foo": False}
    assert data["workspaces"] == {os.path.realpath(ws): {"foo": True}}
    assert os.listdir(dirs.state_file.parent) == ["extensions.json"]  # no temp files left


def test_broken_state_file_is_tolerated_for_reading_and_not_overwritten(
    dirs: ExtensionDirs, ws: Path
) -> None:
    make_ext(dirs.user_extensions, "foo")
    dirs.state_file.parent.mkdir(parents=True)
    dirs.state_file.write_text("{broken")
    assert ext.status(ws, dirs)[0].active  # defaults
    with pytest.raises(ExtensionError, match="fix or delete it"):
        ext.disable("foo", workspace=ws, dirs=dirs)
    assert dirs.state_file.read_text() == "{broken"


def test_state_ignores_values_of_the_wrong_type(dirs: ExtensionDirs, ws: Path) -> None:
    make_ext(dirs.user_extensions, "foo")
    dirs.state_file.parent.mkdir(parents=True)
    dirs.state_file.write_text(json.dumps({"user": {"foo": "no"}, "workspaces": []}))
    assert ext.status(ws, dirs)[0].active
