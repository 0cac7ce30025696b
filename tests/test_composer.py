"""The core's side of composer completion: where the mention starts, what it offers, and
the file list kept warm per workspace (no Neovim)."""

from __future__ import annotations

import json
from pathlib import Path

from sightline import extensions
from sightline.composer import ComposerCompletion


def make_ws(root: Path, files: list[str]) -> Path:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def dirs(tmp_path: Path) -> extensions.ExtensionDirs:
    return extensions.ExtensionDirs(tmp_path / "exts", tmp_path / "state.json")


def add_extension(d: extensions.ExtensionDirs, name: str, description: str) -> None:
    folder = d.user_extensions / name
    folder.mkdir(parents=True)
    manifest = {"name": name, "version": "1", "description": description}
    (folder / "sightline-extension.json").write_text(json.dumps(manifest))


def words(result: dict[str, object]) -> list[str]:
    items = result["items"]
    assert isinstance(items, dict)
    return list(items["word"])


def test_start_is_a_byte_column_and_items_rank(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", ["src/browser.py", "README.md"])
    d = dirs(tmp_path)
    add_extension(d, "browser-tools", "Browser helpers")
    comp = ComposerCompletion(d)
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    result = comp.candidates(str(ws), before="é → @bro")
    assert result["start"] == len("é → ".encode())
    assert words(result) == ["@ext:browser-tools", "@src/browser.py"]
    assert words(comp.candidates(str(ws), token="ext:")) == ["@ext:browser-tools"]
    none = comp.candidates(str(ws), before="a@bro")
    assert none["start"] == -1 and words(none) == []


def test_items_travel_as_columns(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", ["my notes.md"])
    d = dirs(tmp_path)
    add_extension(d, "notes", "Note\x1b[31m taking")
    comp = ComposerCompletion(d)
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    assert comp.candidates(str(ws), token="no")["items"] == {
        "word": ["@ext:notes", "@my\\ notes.md"],
        "abbr": ["@ext:notes", "my notes.md"],
        "menu": ["Note taking", "file"],
        "info": ["Note taking", ""],
        "kind": ["extension", "file"],
    }


def test_extensions_are_read_again_at_each_new_mention(tmp_path: Path) -> None:
    ws = make_ws(tmp_path / "ws", ["a.txt"])
    d = dirs(tmp_path)
    comp = ComposerCompletion(d)
    comp.warm(str(ws))
    assert comp.wait_idle(10)
    assert words(comp.candidates(str(ws), before="@")) == ["@a.txt"]
    add_extension(d, "late", "installed while the composer was open")
    assert words(comp.candidates(str(ws), before="@a")) == ["@a.txt"]  # same mention
    assert words(comp.candidates(str(ws), before="@a @")) == ["@ext:late", "@a.txt"]


def test_a_new_workspace_gets_its_own_list(tmp_path: Path) -> None:
    one = make_ws(tmp_path / "one", ["only-in-one.txt"])
    two = make_ws(tmp_path / "two", ["only-in-two.txt"])
    comp = ComposerCompletion(dirs(tmp_path))
    for ws in (one, two):
        comp.warm(str(ws))
        assert comp.wait_idle(10)
        assert words(comp.candidates(str(ws), before="@only")) == [f"@only-in-{ws.name}.txt"]
