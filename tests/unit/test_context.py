"""Context parts added for the model: extension context and @path files, with their bounds."""

from __future__ import annotations

import errno
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sightline.domain import extensions as ext
from sightline.domain.extensions import Extension, ExtensionDirs, Manifest
from sightline.mentions import build_parts as ctx
from sightline.mentions.build_parts import ContextLimits, build_context_parts


@pytest.fixture
def dirs(isolated_env: Path) -> ExtensionDirs:
    return ExtensionDirs.default()


@pytest.fixture
def ws(isolated_env: Path) -> Path:
    return isolated_env


def install(
    dirs: ExtensionDirs,
    name: str,
    files: dict[str, str | bytes],
    *,
    context: list[str] | None = None,
    description: str | None = "Knows about " + "things",
) -> Path:
    folder = dirs.user_extensions / name
    folder.mkdir(parents=True)
    manifest: dict[str, object] = {"name": name, "version": "1.2.3"}
    if description:
        manifest["description"] = description
    if context is not None:
        manifest["contextFileName"] = context
    (folder / ext.MANIFEST_FILE).write_text(json.dumps(manifest))
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return folder


def active(dirs: ExtensionDirs, ws: Path) -> dict[str, Extension]:
    return ext.active_extensions(ws, dirs)


def unchecked(folder: Path, *context_files: str) -> dict[str, Extension]:
    """An active extension whose manifest skipped validation, as if a file changed after it."""
    manifest = Manifest(folder.name, "1", None, tuple(context_files))
    return {folder.name: Extension(folder.name, "user", folder, manifest, None, True)}


# --- extension parts -----------------------------------------------------------------


def test_extension_part_has_what_it_is_offers_and_knows(dirs: ExtensionDirs, ws: Path) -> None:
    install(dirs, "foo", {"SIGHTLINE.md": "Always use tabs.\n"})
    text = "please @ext:foo fix this"
    parts = build_context_parts(text, active(dirs, ws), ws)
    assert text == "please @ext:foo fix this"  # the user's text is only read
    assert len(parts) == 1
    part = parts[0]
    assert part.startswith('<extension name="foo">')
    assert "@ext:foo" in part
    assert "version: 1.2.3" in part
    assert "description: Knows about things" in part
    assert "offers: context files: SIGHTLINE.md" in part
    assert '<context_file path="SIGHTLINE.md">\nAlways use tabs.\n</context_file>' in part
    assert part.endswith("</extension>")


def test_parts_follow_mention_order_and_skip_unknown_and_inactive(
    dirs: ExtensionDirs, ws: Path
) -> None:
    install(dirs, "aaa", {"SIGHTLINE.md": "A"})
    install(dirs, "bbb", {"SIGHTLINE.md": "B"})
    install(dirs, "off", {"SIGHTLINE.md": "OFF"})
    ext.disable("off", workspace=ws, dirs=dirs)
    carried = ext.workspace_extensions_dir(ws) / "proj"
    carried.mkdir(parents=True)
    (carried / ext.MANIFEST_FILE).write_text('{"name": "proj", "version": "1"}')
    (carried / "SIGHTLINE.md").write_text("PROJ")
    (ws / "notes.txt").write_text("NOTES")

    text = "@ext:bbb @ext:nope @notes.txt @ext:off @ext:proj @ext:aaa"
    parts = build_context_parts(text, active(dirs, ws), ws)
    assert [p.splitlines()[0] for p in parts] == [
        '<extension name="bbb">',
        '<file path="notes.txt">',
        '<extension name="aaa">',
    ]
    assert not any("OFF" in p or "PROJ" in p for p in parts)


def test_description_line_is_left_out_when_absent(dirs: ExtensionDirs, ws: Path) -> None:
    install(dirs, "foo", {"SIGHTLINE.md": "x"}, description=None)
    [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)
    assert "description:" not in part


def test_all_listed_context_files_are_read_and_missing_ones_skipped(
    dirs: ExtensionDirs, ws: Path
) -> None:
    install(
        dirs,
        "foo",
        {"A.md": "alpha", "docs/B.md": "beta"},
        context=["A.md", "gone.md", "docs/B.md"],
    )
    [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)
    assert "offers: context files: A.md, gone.md (missing), docs/B.md" in part
    assert '<context_file path="A.md">\nalpha\n</context_file>' in part
    assert '<context_file path="docs/B.md">\nbeta\n</context_file>' in part
    assert '<context_file path="gone.md"' not in part


def test_mention_repeated_three_times_spends_the_budget_once(dirs: ExtensionDirs, ws: Path) -> None:
    install(dirs, "big", {"SIGHTLINE.md": "b" * 600})
    install(dirs, "small", {"SIGHTLINE.md": "s" * 300})
    limits = ContextLimits(max_file_bytes=1000, max_total_bytes=1000)
    text = "@ext:big then @ext:big and @ext:big, then @ext:small"
    parts = build_context_parts(text, active(dirs, ws), ws, limits=limits)
    # Counted three times, big would spend 1800 bytes and crowd out small.
    assert len(parts) == 2
    assert parts[0].count("b" * 600) == 1
    assert "s" * 300 in parts[1]
    assert "left out" not in "".join(parts)


def test_file_over_the_per_file_limit_is_cut_and_marked(dirs: ExtensionDirs, ws: Path) -> None:
    install(dirs, "foo", {"SIGHTLINE.md": "x" * 70_000})
    [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)  # default limit: 64 KiB
    assert '<context_file path="SIGHTLINE.md" truncated="true">' in part
    assert "\n" + "x" * 65536 + "\n[cut" in part
    assert "[cut: only the first 65536 bytes of SIGHTLINE.md are shown (limit 65536)]" in part


def test_cut_inside_a_multibyte_character_drops_that_character(
    dirs: ExtensionDirs, ws: Path
) -> None:
    install(dirs, "foo", {"SIGHTLINE.md": "a" + "é" * 10})  # 21 bytes
    limits = ContextLimits(max_file_bytes=4, max_total_bytes=100)
    [part] = build_context_parts("@ext:foo", active(dirs, ws), ws, limits=limits)
    assert "\naé\n[cut: only the first 3 bytes" in part


def test_total_budget_leaves_out_what_does_not_fit_with_a_note(
    dirs: ExtensionDirs, ws: Path
) -> None:
    names = [f"f{i}.md" for i in range(5)]
    install(dirs, "foo", {n: n[:2] * 30_000 for n in names}, context=names)  # 60 000 bytes each
    [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)  # budget 262 144
    for n in names[:4]:
        assert f'<context_file path="{n}">' in part
    assert "f4" * 30_000 not in part
    assert '<context_file path="f4.md" omitted="true">' in part
    assert (
        "[left out: f4.md (60000 bytes) does not fit in what remains of the "
        "262144-byte context budget of this message]"
    ) in part


def test_budget_is_shared_by_all_mentions_of_one_message(dirs: ExtensionDirs, ws: Path) -> None:
    install(dirs, "one", {"SIGHTLINE.md": "1" * 400})
    install(dirs, "two", {"SIGHTLINE.md": "2" * 400})
    (ws / "three.txt").write_text("3" * 400)
    limits = ContextLimits(max_file_bytes=1000, max_total_bytes=1000)
    parts = build_context_parts("@ext:one @ext:two @three.txt", active(dirs, ws), ws, limits=limits)
    assert "1" * 400 in parts[0] and "2" * 400 in parts[1]
    assert "3" * 400 not in parts[2] and "left out: three.txt (400 bytes)" in parts[2]


# --- what is never read -------------------------------------------------------------------


def test_dotdot_context_file_is_not_read(dirs: ExtensionDirs, ws: Path, tmp_path: Path) -> None:
    folder = install(dirs, "foo", {"SIGHTLINE.md": "ok"})
    (folder.parent / "secret.md").write_text("SECRET")
    parts = build_context_parts("@ext:foo", unchecked(folder, "../secret.md", "SIGHTLINE.md"), ws)
    assert "SECRET" not in parts[0] and "\nok\n" in parts[0]


def test_absolute_context_file_is_not_read(dirs: ExtensionDirs, ws: Path, tmp_path: Path) -> None:
    folder = install(dirs, "foo", {})
    secret = tmp_path / "secret.md"
    secret.write_text("SECRET")
    parts = build_context_parts("@ext:foo", unchecked(folder, str(secret)), ws)
    assert "SECRET" not in parts[0]


def test_symlink_out_of_the_folder_is_not_read(
    dirs: ExtensionDirs, ws: Path, tmp_path: Path
) -> None:
    folder = install(dirs, "foo", {"SIGHTLINE.md": "ok"})
    found = active(dirs, ws)  # valid when listed ...
    secret = tmp_path / "secret.md"
    secret.write_text("SECRET")
    (folder / "SIGHTLINE.md").unlink()
    (folder / "SIGHTLINE.md").symlink_to(secret)  # ... and then pointed outside
    [part] = build_context_parts("@ext:foo", found, ws)
    assert "SECRET" not in part
    assert "<context_file" not in part


def test_binary_and_undecodable_files_are_skipped_with_a_debug_line(
    dirs: ExtensionDirs, ws: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install(
        dirs,
        "foo",
        {"bin.dat": b"PK\x03\x04\x00\x00data", "latin.txt": b"caf\xe9 au lait", "ok.md": "fine"},
        context=["bin.dat", "latin.txt", "ok.md"],
    )
    with caplog.at_level(logging.DEBUG, logger="sightline.mentions.build_parts"):
        [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)
    assert '<context_file path="ok.md">\nfine\n</context_file>' in part
    assert 'bin.dat">' not in part and 'latin.txt">' not in part
    assert "bin.dat skipped: binary (NUL byte)" in caplog.text
    assert "latin.txt skipped: binary (not UTF-8)" in caplog.text


def test_unreadable_context_file_is_skipped_with_a_debug_line(
    dirs: ExtensionDirs, ws: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mode 000.  Root reads such files anyway, so when running as root the
    open(2) is made to fail with EACCES, which is what any other user gets."""
    folder = install(
        dirs, "foo", {"locked.md": "LOCKED", "ok.md": "fine"}, context=["locked.md", "ok.md"]
    )
    locked = folder / "locked.md"
    locked.chmod(0)
    if os.geteuid() == 0:
        real_open = os.open

        def deny(path: str | os.PathLike[str], flags: int, *args: int, **kw: object) -> int:
            if Path(path) == locked.resolve():
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real_open(path, flags, *args)

        monkeypatch.setattr(os, "open", deny)  # the module reads through os.open
    with caplog.at_level(logging.DEBUG, logger="sightline.mentions.build_parts"):
        [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)
    assert "LOCKED" not in part and "\nfine\n" in part
    assert "locked.md skipped: cannot open: Permission denied" in caplog.text


def test_folder_or_fifo_named_like_a_context_file_is_skipped(
    dirs: ExtensionDirs, ws: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Files no reader can read as text, even as root: skipped, and the FIFO never blocks."""
    folder = install(dirs, "foo", {"ok.md": "fine"}, context=["SIGHTLINE.md", "pipe.md", "ok.md"])
    (folder / "SIGHTLINE.md").mkdir()
    os.mkfifo(folder / "pipe.md")
    with caplog.at_level(logging.DEBUG, logger="sightline.mentions.build_parts"):
        [part] = build_context_parts("@ext:foo", active(dirs, ws), ws)
    assert "\nfine\n" in part
    assert "SIGHTLINE.md skipped: not a regular file" in caplog.text
    assert "pipe.md skipped: not a regular file" in caplog.text


def test_symlink_loop_is_an_unreadable_file_not_a_crash(
    dirs: ExtensionDirs, ws: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = install(dirs, "foo", {"ok.md": "fine"}, context=["SIGHTLINE.md", "ok.md"])
    (folder / "SIGHTLINE.md").symlink_to(folder / "loop")
    (folder / "loop").symlink_to(folder / "SIGHTLINE.md")
    (ws / "a").symlink_to(ws / "b")
    (ws / "b").symlink_to(ws / "a")
    with caplog.at_level(logging.DEBUG, logger="sightline.mentions.build_parts"):
        parts = build_context_parts("@ext:foo @a", active(dirs, ws), ws)
    assert len(parts) == 1 and "\nfine\n" in parts[0]
    assert "Too many levels of symbolic links" in caplog.text


# --- @path files --------------------------------------------------------------------------


Reader = Callable[[Path, int], "str | bytes | None"]


def recording_reader(calls: list[Path], buffers: dict[Path, str] | None = None) -> Reader:
    """Like the core's: the buffer's text when loaded, else the disk."""

    def read(path: Path, max_bytes: int) -> str | bytes | None:
        calls.append(path)
        if buffers and path in buffers:
            return buffers[path]
        return ctx.read_disk_file(path, max_bytes)

    return read


def test_file_mention_reads_through_the_core_reader(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("on disk\n")
    (ws / "my notes.txt").write_text("spaced\n")
    calls: list[Path] = []
    reader = recording_reader(calls, {(ws / "src" / "a.py").resolve(): "unsaved buffer text\n"})
    parts = build_context_parts("compare @src/a.py with @my\\ notes.txt", {}, ws, read_file=reader)
    assert parts == [
        '<file path="src/a.py">\nunsaved buffer text\n</file>',
        '<file path="my notes.txt">\nspaced\n</file>',
    ]
    assert calls == [(ws / "src" / "a.py").resolve(), (ws / "my notes.txt").resolve()]


def test_file_mentions_are_confined_to_the_workspace(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET")
    (ws / "link.txt").symlink_to(outside)
    (ws / "sub").mkdir()
    (ws / "sub" / "in.txt").write_text("inside")
    calls: list[Path] = []
    inside = ws / "sub" / "in.txt"
    text = f"@../outside.txt @{outside} @link.txt @sub/../sub/in.txt @{inside} @nope.txt"
    parts = build_context_parts(text, {}, ws, read_file=recording_reader(calls))
    assert parts == ['<file path="sub/in.txt">\ninside\n</file>']
    assert calls == [(ws / "sub" / "in.txt").resolve(), (ws / "nope.txt").resolve()]


def test_file_mention_limits_and_repeats(ws: Path) -> None:
    (ws / "big.txt").write_text("y" * 100)
    (ws / "blob.bin").write_bytes(b"\x00\x01")
    (ws / "dir").mkdir()
    limits = ContextLimits(max_file_bytes=10, max_total_bytes=1000)
    parts = build_context_parts(
        "@big.txt @./big.txt @blob.bin @dir @big.txt", {}, ws, limits=limits
    )
    assert parts == [
        '<file path="big.txt" truncated="true">\n'
        + "y" * 10
        + "\n[cut: only the first 10 bytes of big.txt are shown (limit 10)]\n</file>"
    ]


def test_limits_from_config() -> None:
    assert ContextLimits.from_config(None) == ContextLimits(65536, 262144)
    cfg = {"mentions": {"max_file_bytes": 10, "max_total_bytes": 20}}
    assert ContextLimits.from_config(cfg) == ContextLimits(10, 20)
    with pytest.raises(ValueError, match=r"mentions\.max_file_bytes must be a positive integer"):
        ContextLimits.from_config({"mentions": {"max_file_bytes": 0}})
    with pytest.raises(ValueError, match="max_total_bytes"):
        ContextLimits.from_config({"mentions": {"max_total_bytes": True}})
