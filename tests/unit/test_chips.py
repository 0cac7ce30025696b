"""Chips in the transcript: references the agent writes and the selection note navigate."""

from __future__ import annotations

from pathlib import Path

from sightline.ui.chips import attachment_id, attachment_part, reference_finder
from tests.fakeapi import fake_api

__all__ = ["fake_api"]


def test_finder_only_marks_existing_workspace_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    find = reference_finder(str(tmp_path))
    line = "see src/app.py:3-5 and src/none.py:2, also ../etc/passwd:1 and src/app.py:0"
    chips = find(line)
    target = {"file_path": "src/app.py", "start_line": 3, "end_line": 5}
    assert [c[2] for c in chips] == [{**target, "attachment_id": attachment_id(target, "ref")}]
    col, end_col, _ = chips[0]
    assert line.encode()[col:end_col] == b"src/app.py:3-5"


def test_finder_marks_at_mentions_of_existing_files(tmp_path: Path) -> None:
    (tmp_path / "my notes.md").write_text("x\n")
    find = reference_finder(str(tmp_path))
    line = "é read @my\\ notes.md and @missing.md, not @ext:tools"
    (chip,) = find(line)
    col, end_col, target = chip
    assert line.encode()[col:end_col] == b"@my\\ notes.md"
    want = {"file_path": "my notes.md", "start_line": 1, "end_line": 1}
    assert target == {**want, "attachment_id": attachment_id(want, "file")}


def test_attachment_ids_are_stable_and_distinct(tmp_path: Path) -> None:
    a = {"file_path": "a.py", "start_line": 1, "end_line": 1}
    assert attachment_id(a, "file") == attachment_id(dict(a), "file")  # any core, any run
    assert attachment_id(a, "file") != attachment_id(a, "ref")
    assert attachment_id(a, "file") != attachment_id({**a, "file_path": "b.py"}, "file")
    assert attachment_id(a, "file").startswith("file-")
    (tmp_path / "a.py").write_text("x\n")
    sel = {"file_path": "a.py", "start_row": 0, "attachment_id": "sel-12345678"}
    part = attachment_part("see @a.py and @a.py", str(tmp_path), sel)
    assert part is not None
    assert part.splitlines()[1:] == [
        "attachment_id: sel-12345678 = the selection",
        f"attachment_id: {attachment_id(a, 'file')} = @a.py",
    ]
    assert attachment_part("nothing here", str(tmp_path), None) is None
