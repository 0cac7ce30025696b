"""The workspace's one listing and one confinement (domain/workspace.py): the model's
list_files/grep and the `@` menu list the same tree, in git (also from a subfolder) and
outside it, and each listed file is one the read tools may open."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.domain import workspace
from sightline.domain.errors import Refused
from sightline.domain.mentions import unescape_path
from sightline.domain.workspace import git_files, iter_files, last
from sightline.mentions.completion import FileListCache, complete
from tests.conftest import ROOT


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def at_menu(ws: Path) -> list[str]:
    """The files the `@` menu offers (the composer's cache, then the ranking), as paths."""
    index = FileListCache(ws).refresh()
    items = complete("", [], index, max_items=10_000)
    return sorted(unescape_path(i.word[1:]) for i in items if i.kind == "file")


def model_sees(ws: Path) -> list[str]:
    return workspace.list_files(str(ws)).files


def opens(ws: Path, rel: str) -> bool:
    try:
        return workspace.resolve(str(ws), rel).is_file()
    except Refused:
        return False


# --- one tree for the model and the menu ----------------------------------------------------


def test_the_models_list_files_and_the_at_menu_list_the_same_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    ws = repo / "app"  # the workspace is a folder inside a repository
    for rel in ["app/main.py", "app/dist/bundle.js", "app/.cache/x", "app/old.py", "top.py"]:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x\n")
    (tmp_path / "secret.txt").write_text("key\n")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (ws / "old.py").unlink()  # tracked, deleted since
    (ws / "new.py").write_text("")  # untracked
    (ws / "debug.log").write_text("")  # ignored by the repository's rules
    (ws / "out.txt").symlink_to(tmp_path / "secret.txt")  # leads out
    (ws / "in.py").symlink_to(ws / "main.py")  # stays in
    os.mkfifo(ws / "pipe")
    expected = [".cache/x", "dist/bundle.js", "in.py", "main.py", "new.py"]
    assert model_sees(ws) == expected
    assert at_menu(ws) == expected
    assert all(opens(ws, rel) for rel in expected)


def test_outside_git_both_skip_the_same_folders(tmp_path: Path) -> None:
    for rel in ["a.py", "dist/bundle.js", "target/debug/x", ".cache/y", "node_modules/m.js"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "pkg.egg-info").mkdir()
    (tmp_path / "pkg.egg-info" / "PKG-INFO").write_text("")
    assert model_sees(tmp_path) == at_menu(tmp_path) == ["a.py"]


NAMES = ["a.py", "b.txt", "sub", "dist", "node_modules", ".git", "build", "x.egg-info"]


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str]]:
    """(kind, path) entries: files, links to a file inside / outside / to a folder / dangling."""
    paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
    kinds = st.sampled_from(["file", "file", "file", "link-in", "link-out", "link-dir", "dangling"])
    return draw(st.lists(st.tuples(kinds, paths), min_size=1, max_size=12))


def build(base: Path, entries: list[tuple[str, str]], in_git: bool, sub: bool) -> Path:
    root = base / "root"
    root.mkdir()
    (base / "outside.txt").write_text("out\n")
    (root / "anchor.py").write_text("")
    for kind, rel in entries:
        path = root / rel
        if (
            path.exists()
            or path.is_symlink()
            or any(p.is_symlink() or p.is_file() for p in path.parents)
        ):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "file":
            path.write_text("t\n")
        elif kind == "link-in":
            path.symlink_to(root / "anchor.py")
        elif kind == "link-out":
            path.symlink_to(base / "outside.txt")
        elif kind == "link-dir":
            path.symlink_to(root)
        else:
            path.symlink_to(base / "missing")
    if in_git and not (root / ".git").exists():
        git(root, "init", "-q")
        git(root, "add", "-A")
    ws = (
        root / "sub"
        if sub and (root / "sub").is_dir() and not (root / "sub").is_symlink()
        else root
    )
    return ws


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(trees(), st.booleans(), st.booleans())
def test_any_tree_lists_alike_for_the_model_and_the_menu(
    tmp_path_factory: pytest.TempPathFactory,
    entries: list[tuple[str, str]],
    in_git: bool,
    sub: bool,
) -> None:
    ws = build(tmp_path_factory.mktemp("tree"), entries, in_git, sub)
    seen = model_sees(ws)
    assert at_menu(ws) == seen
    assert all(opens(ws, rel) for rel in seen), seen
    if not (ws / ".git").exists() and not in_git:
        skipped = workspace.SKIP_DIRS
        assert not [r for r in seen if any(p in skipped for p in r.split("/")[:-1])]


def test_system_trees_are_the_same_in_python_and_lua() -> None:
    lua = (ROOT / "lua" / "sightline" / "port" / "buffers.lua").read_text()
    found = re.search(r"SYSTEM_TREES = \{([^}]*)\}", lua)
    assert found is not None
    assert tuple(re.findall(r"'([^']+)'", found.group(1))) == workspace.SYSTEM_DIRS


# --- git and the walk ----------------------------------------------------------------------


def test_git_workspace_lists_tracked_and_untracked_not_ignored(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("ignored.log\nbuild/\n")
    (tmp_path / "tracked.py").write_text("")
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / "new file.txt").write_text("")
    (tmp_path / "ignored.log").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".gitignore", "tracked.py")
    git(tmp_path, "commit", "-qm", "init")
    assert git_files(tmp_path) == [".gitignore", "tracked.py"]
    steps = list(iter_files(tmp_path))
    assert steps == [
        [".gitignore", "tracked.py"],
        [".gitignore", "tracked.py", "sub dir/new file.txt"],
    ]
    assert last(iter_files(tmp_path)) == steps[-1]


def test_git_subfolder_lists_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("")
    (tmp_path / "top.py").write_text("")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    assert last(iter_files(tmp_path / "pkg")) == ["a.py"]


def test_walk_outside_git_skips_ignored_folders_and_linked_folders(tmp_path: Path) -> None:
    for rel in [
        "a.py",
        "src/b.py",
        "src/deep/c.py",
        "node_modules/x/index.js",
        ".venv/lib/site.py",
        "__pycache__/a.pyc",
        "pkg.egg-info/PKG-INFO",
        ".git/config",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "linked").symlink_to(tmp_path / "src")
    (tmp_path / "file-link.py").symlink_to(tmp_path / "a.py")
    assert git_files(tmp_path) is None
    assert sorted(last(iter_files(tmp_path))) == [
        "a.py",
        "file-link.py",
        "src/b.py",
        "src/deep/c.py",
    ]
    # breadth-first: shallow files come first, and the walk is bounded
    assert last(iter_files(tmp_path))[:2] == ["a.py", "file-link.py"]
    assert len(last(iter_files(tmp_path, max_files=2))) == 2


def test_a_workspace_git_ignores_is_walked(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("vendor/\n")
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    (tmp_path / "vendor" / "lib" / "x.py").write_text("")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".gitignore")
    ws = tmp_path / "vendor"
    assert model_sees(ws) == at_menu(ws) == ["lib/x.py"]
