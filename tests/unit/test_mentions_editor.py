"""`@buffer` and `@diagnostics`: offered by `@` above extensions and files, resolved at send
from the editor (the buffer of the editor window with its unsaved text; vim.diagnostic for
the workspace's loaded buffers), as parts after the typed text, bounded and redacted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sightline.mentions.build_parts import ContextLimits, build_context_parts
from sightline.mentions.composer import ComposerCompletion
from tests.fakeapi import fake_api

__all__ = ["fake_api"]


def words(result: dict[str, Any]) -> list[str]:
    return list(result["items"]["word"])


def test_at_offers_buffer_and_diagnostics_first_and_narrows(tmp_path: Path) -> None:
    (tmp_path / "bar.py").write_text("x\n")
    completion = ComposerCompletion()
    completion.warm(str(tmp_path))
    completion.wait_idle(5)
    assert words(completion.candidates(str(tmp_path), before="see @"))[:2] == [
        "@buffer",
        "@diagnostics",
    ]
    assert words(completion.candidates(str(tmp_path), before="@b"))[0] == "@buffer"
    assert "@bar.py" in words(completion.candidates(str(tmp_path), before="@b"))
    assert words(completion.candidates(str(tmp_path), before="@diag")) == ["@diagnostics"]
    assert "@buffer" not in words(completion.candidates(str(tmp_path), before="@ext:"))
    assert completion.candidates(str(tmp_path), before="@b")["items"]["kind"][0] == "editor"


def reader(texts: dict[str, tuple[str, str] | None]) -> Any:
    asked: list[tuple[str, int]] = []

    def read(name: str, max_bytes: int) -> tuple[str, str] | None:
        asked.append((name, max_bytes))
        return texts.get(name)

    read.asked = asked  # type: ignore[attr-defined]
    return read


def test_editor_mentions_become_parts_bounded_once_each(tmp_path: Path) -> None:
    (tmp_path / "buffer").write_text("a file named buffer\n")
    read = reader(
        {
            "buffer": ("a.py", "x = 1\n" * 100),
            "diagnostics": ("loaded buffers", "a.py:1:1: error: e"),
        }
    )
    limits = ContextLimits(max_file_bytes=60, max_total_bytes=10_000)
    parts = build_context_parts(
        "fix @buffer and @diagnostics, again @buffer; also @./buffer",
        {},
        tmp_path,
        limits=limits,
        read_editor=read,
    )
    assert len(parts) == 3
    assert parts[0].startswith('<buffer path="a.py" truncated="true">\nx = 1\n')
    assert "only the first 60 bytes" in parts[0]
    assert parts[1] == '<diagnostics path="loaded buffers">\na.py:1:1: error: e\n</diagnostics>'
    assert "a file named buffer" in parts[2]  # `@./buffer` is the file
    assert read.asked == [("buffer", 61), ("diagnostics", 61)]
    # No editor (the command line): `@buffer` is a path like any other.
    assert "a file named buffer" in build_context_parts("@buffer", {}, tmp_path)[0]
    # Over the total budget: left out with a note, like a file.
    small = ContextLimits(max_file_bytes=60, max_total_bytes=10)
    (part,) = build_context_parts("@buffer", {}, tmp_path, limits=small, read_editor=read)
    assert 'omitted="true"' in part
