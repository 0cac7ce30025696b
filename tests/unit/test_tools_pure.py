"""Pure parts of the tools: confinement, globbing, listing, output bounds and the policy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sightline.domain import workspace
from sightline.domain.errors import Refused
from sightline.domain.globs import glob_match
from sightline.domain.narrator import checklist
from sightline.gate.policy import Kind, allowed_kinds
from sightline.tools.base import tools_for
from sightline.tools.output import Bounded, HeadTail
from sightline.tools.registry import call_label, default_registry
from tests.tool_policy import COLUMNS, TABLE, expected


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


def test_registry_holds_this_issues_tools_and_nothing_unknown() -> None:
    names = [t.name for t in default_registry()]
    assert len(names) == len(set(names))
    mine = {"read_file", "list_files", "grep", "propose_edit", "propose_create"}
    mine |= {"run_command", "update_plan"}
    assert mine <= set(names)
    assert set(names) <= set(TABLE)


@pytest.mark.parametrize("column", range(4))
def test_policy_matches_the_design_table(column: int) -> None:
    mode, scoped = COLUMNS[column]
    assert {t.name for t in tools_for(default_registry(), mode, scoped)} == expected(column)


def test_policy_is_a_rule_over_kinds() -> None:
    assert allowed_kinds("normal", False) == {
        Kind.READ,
        Kind.VIEW,
        Kind.WRITE,
        Kind.EXEC,
        Kind.NAVIGATE,
        Kind.NETWORK,
    }
    assert allowed_kinds("plan", False) == {Kind.READ, Kind.VIEW, Kind.PLAN}
    # The network reaches a plan turn only where the user allowed hosts; never a scoped one.
    assert allowed_kinds("plan", False, True) == {Kind.READ, Kind.VIEW, Kind.PLAN, Kind.NETWORK}
    assert Kind.NETWORK not in allowed_kinds("normal", True, True)
    assert Kind.NETWORK not in allowed_kinds("plan", True, True)
    assert allowed_kinds("normal", True) == {Kind.READ, Kind.VIEW, Kind.SCOPED_WRITE}
    assert allowed_kinds("plan", True) == {Kind.READ, Kind.VIEW, Kind.PLAN}


@pytest.mark.parametrize("path", ["src/app.py", "./src/../src/app.py", "src"])
def test_paths_inside_resolve(ws: Path, path: str) -> None:
    assert workspace.resolve(str(ws), path).is_relative_to(ws.resolve())


def test_absolute_path_inside_is_allowed(ws: Path) -> None:
    target = ws / "src" / "app.py"
    assert workspace.resolve(str(ws), str(target)) == target.resolve()


@pytest.mark.parametrize("path", ["../secret.txt", "src/../../secret.txt", "/etc/passwd", ""])
def test_escapes_are_refused(ws: Path, path: str) -> None:
    with pytest.raises(Refused):
        workspace.resolve(str(ws), path)


def test_symlink_leading_out_is_refused(ws: Path) -> None:
    (ws / "link.txt").symlink_to(ws.parent / "secret.txt")
    (ws / "linkdir").symlink_to(ws.parent)
    with pytest.raises(Refused, match="outside the workspace"):
        workspace.resolve(str(ws), "link.txt")
    with pytest.raises(Refused):
        workspace.resolve(str(ws), "linkdir/secret.txt")
    (ws / "inner.txt").symlink_to(ws / "src" / "app.py")
    assert workspace.resolve(str(ws), "inner.txt") == (ws / "src" / "app.py").resolve()


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("*.py", "src/app.py", True),
        ("*.py", "app.py", True),
        ("*.py", "src/app.pyc", False),
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/sub/app.py", False),
        ("src/**/*.py", "src/sub/deep/app.py", True),
        ("src/**/*.py", "src/app.py", True),
        ("**/test_*.py", "tests/test_a.py", True),
        ("a?.txt", "ab.txt", True),
        ("[ab].txt", "c.txt", False),
        ("./src/*.py", "src/app.py", True),
    ],
)
def test_glob(glob: str, path: str, hit: bool) -> None:
    assert glob_match(glob, path) is hit


def test_listing_skips_tool_dirs_and_links_out(ws: Path) -> None:
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "x.js").write_text("")
    (ws / "out.txt").symlink_to(ws.parent / "secret.txt")
    listing = workspace.list_files(str(ws))
    assert listing.files == ["src/app.py"] and listing.complete
    assert workspace.list_files(str(ws), "*.md").files == []


def test_listing_follows_gitignore_in_a_repository(ws: Path) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("")
    assert workspace.list_files(str(ws)).files == [".gitignore", "src/app.py"]


def test_listing_stops_at_its_limit(ws: Path) -> None:
    for i in range(5):
        (ws / f"f{i}.txt").write_text("")
    listing = workspace.list_files(str(ws), limit=3)
    assert len(listing.files) == 3 and not listing.complete


def test_bounded_stops_at_lines_or_bytes() -> None:
    out = Bounded.make(max_lines=2, max_bytes=1000)
    assert out.add("a") and out.add("b") and not out.add("c")
    assert out.full and out.dropped == 1 and out.text() == "a\nb"
    small = Bounded.make(max_lines=100, max_bytes=5)
    assert small.add("abcd") and not small.add("e")


def test_head_tail_keeps_both_ends_and_says_what_was_cut() -> None:
    sink = HeadTail(30)
    for i in range(100):
        sink.feed(f"line {i}\n".encode())
    text = sink.text()
    assert text.startswith("line 0") and text.rstrip().endswith("line 99")
    assert "bytes of output cut" in text
    whole = HeadTail(1000)
    whole.feed(b"short")
    assert whole.text() == "short"


def test_call_label_and_checklist() -> None:
    assert call_label("read_file", {"path": "a.py"}) == "read_file a.py"
    assert call_label("run_command", {"command": "make\ntest"}) == "run_command make"
    assert call_label("update_plan", {"steps": []}) == "update_plan"
    assert checklist([{"text": "one", "done": True}, {"text": "two\nlines", "done": False}]) == [
        ("▍Plan (1/2 done)", "SightlineAssistant"),
        ("- [x] one", "SightlineNote"),
        ("- [ ] two lines", None),
    ]
