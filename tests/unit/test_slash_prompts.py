"""Prompt files: the folders, front matter, the bounds, freshness by mtime, and expansion."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain.front_matter import split_front_matter
from sightline.slash import catalog, expand
from sightline.slash.prompt_files import (
    PromptFile,
    PromptLibrary,
    folders,
)


def scan(ws: Path, config: Path | None = None) -> tuple[dict[str, PromptFile], list[str]]:
    found, skipped = PromptLibrary().scan(folders(str(ws), str(config) if config else None))
    return {p.name: p for p in found}, [s.why for s in skipped]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_the_three_formats_and_the_user_folder(tmp_path: Path) -> None:
    ws, config = tmp_path / "ws", tmp_path / "config"
    write(ws / ".claude/commands/a.md", "---\ndescription: A\nargument-hint: <x>\n---\nDo $1\n")
    write(ws / ".github/prompts/b.prompt.md", "---\ndescription: B\nmodel: gpt-5\n---\nB\n")
    write(ws / ".github/prompts/not-a-prompt.md", "left out: no .prompt.md\n")
    write(ws / ".sightline/prompts/c.md", "plain, no front matter\n")
    write(config / "sightline/prompts/c.md", "the workspace's c wins\n")
    write(config / "sightline/prompts/d.md", "mine\n")
    found, skipped = scan(ws, config)
    assert list(found) == ["c", "a", "b", "d"]
    assert (found["a"].format, found["a"].description, found["a"].argument_hint) == (
        "claude",
        "A",
        "<x>",
    )
    assert (found["b"].format, found["b"].model) == ("copilot", "gpt-5")
    assert found["c"].body == "plain, no front matter\n"
    assert found["c"].source == ".sightline/prompts"
    assert found["d"].source == "user" and skipped == []


def test_a_copilot_prompt_file_is_named_by_its_name_key(tmp_path: Path) -> None:
    """VS Code's `name:`: the command's name in place of the file's; other formats have none."""
    ws = tmp_path / "ws"
    write(ws / ".github/prompts/gen-tests.prompt.md", "---\nname: tests\n---\nWrite tests\n")
    write(ws / ".github/prompts/plain.prompt.md", "---\ndescription: P\n---\nP\n")
    write(ws / ".github/prompts/spaced.prompt.md", "---\nname: my prompt\n---\nS\n")
    write(ws / ".claude/commands/c.md", "---\nname: other\n---\nC\n")  # not Claude Code's
    write(ws / ".sightline/prompts/mine.md", "mine\n")
    write(ws / ".github/prompts/taken.prompt.md", "---\nname: mine\n---\nloses\n")
    found, skipped = scan(ws)
    assert sorted(found) == ["c", "mine", "plain", "tests"]
    assert found["tests"].body == "Write tests\n"
    assert found["mine"].body == "mine\n"  # the first folder's name wins, as for file names
    assert skipped == [
        ".github/prompts/spaced.prompt.md: its name 'my prompt' cannot be typed after / "
        "(at most 64 characters, no space or slash, not starting mcp:); skipped"
    ]


def test_bounds_skip_with_a_reason(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    cmds = ws / ".claude/commands"
    write(cmds / "big.md", "x" * (64 * 1024 + 1))
    write(cmds / "bin.md", b"text\0more")
    outside = write(tmp_path / "secret.md", "not yours\n")
    cmds.mkdir(parents=True, exist_ok=True)
    (cmds / "link.md").symlink_to(outside)
    (cmds / "inside.md").symlink_to(write(cmds / "real.txt", "inside\n"))
    os.mkfifo(cmds / "fifo.md")
    write(cmds / "ok.md", "fine\n")
    found, skipped = scan(ws)  # (a FIFO would block an open without O_NONBLOCK)
    assert sorted(found) == ["inside", "ok"]
    assert sorted(skipped) == [
        ".claude/commands/big.md: over 64 KiB; skipped",
        ".claude/commands/bin.md: a binary file; skipped",
        ".claude/commands/fifo.md: not a regular file; skipped",
        ".claude/commands/link.md: a link out of its folder; skipped",
    ]


def test_subfolders_namespace_claude_and_sightline_commands(tmp_path: Path) -> None:
    ws, config = tmp_path / "ws", tmp_path / "config"
    cmds = ws / ".claude/commands"
    write(cmds / "review.md", "root\n")
    write(cmds / "frontend/component.md", "---\ndescription: C\n---\nMake $1\n")
    write(cmds / "backend/component.md", "the other component\n")
    write(cmds / "a/b/c/deep.md", "three down\n")
    write(cmds / "a/b/c/d/too-deep.md", "four down: not read\n")
    write(cmds / ".hidden/x.md", "hidden folder\n")
    write(cmds / "mcp/x.md", "the MCP prompts' namespace\n")
    outside = tmp_path / "elsewhere"
    write(outside / "linked.md", "through a linked folder\n")
    (cmds / "linked").symlink_to(outside)
    write(tmp_path / "secret.md", "not yours\n")
    (cmds / "frontend/leak.md").symlink_to(tmp_path / "secret.md")
    write(cmds / "frontend/big.md", "x" * (64 * 1024 + 1))
    os.mkfifo(cmds / "frontend/fifo.md")
    write(ws / ".github/prompts/team/explain.prompt.md", "Explain\n")  # VS Code: by file name
    write(config / "sightline/prompts/git/wip.md", "mine\n")
    found, skipped = scan(ws, config)
    assert list(found) == [
        "review",
        "a:b:c:deep",
        "backend:component",
        "frontend:component",
        "explain",
        "git:wip",
    ]
    assert found["frontend:component"].description == "C"
    assert found["explain"].format == "copilot"
    assert sorted(skipped) == [
        ".claude/commands/frontend/big.md: over 64 KiB; skipped",
        ".claude/commands/frontend/fifo.md: not a regular file; skipped",
        ".claude/commands/frontend/leak.md: a link out of its folder; skipped",
    ]


def test_an_argument_hint_is_read_as_claude_code_writes_it(tmp_path: Path) -> None:
    """Claude Code's documented `argument-hint: [message]` is a YAML list, and
    `[pr] [priority]` no YAML at all: the hint is the line's text as written."""
    ws = tmp_path / "ws"
    cmds = ws / ".claude/commands"
    write(cmds / "a.md", "---\nargument-hint: [issue-number]\ndescription: Fix\n---\nFix $1\n")
    write(cmds / "b.md", "---\nargument-hint: [pr-number] [priority] [assignee]\n---\nB\n")
    write(cmds / "c.md", "---\nargument-hint: add [tagId] | remove [tagId] | list\n---\nC\n")
    write(cmds / "d.md", '---\nargument-hint: "<file>"  # quoted\n---\nD\n')
    found, skipped = scan(ws)
    assert skipped == []
    assert [found[n].argument_hint for n in "abcd"] == [
        "[issue-number]",
        "[pr-number] [priority] [assignee]",
        "add [tagId] | remove [tagId] | list",
        "<file>",
    ]
    assert found["a"].description == "Fix"


def test_front_matter_errors_name_the_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".sightline/prompts/a.md", "---\ndescription: ok\nbad: : :\n---\nbody\n")
    write(ws / ".sightline/prompts/b.md", "---\ndescription: [1, 2]\n---\nbody\n")
    write(ws / ".sightline/prompts/c.md", "---\ndescription: never closed\nbody\n")
    write(ws / ".sightline/prompts/d.md", "---\n- a list\n---\nbody\n")
    found, skipped = scan(ws)
    assert found == {}
    first, *rest = sorted(skipped)
    # (PyYAML's C and Python loaders word this one differently)
    assert first.startswith(".sightline/prompts/a.md:3: front matter: mapping values are not")
    assert rest == [
        ".sightline/prompts/b.md:2: front matter: description: expected text; skipped",
        ".sightline/prompts/c.md:1: front matter is not closed by a --- line; skipped",
        ".sightline/prompts/d.md:2: front matter: expected `key: value` lines; skipped",
    ]


def test_a_file_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    path = write(ws / ".sightline/prompts/a.md", "one\n")
    library = PromptLibrary()
    where = folders(str(ws), None)
    (first,), _ = library.scan(where)
    (again,), _ = library.scan(where)
    assert again is first  # not read again
    path.write_text("two, longer\n")
    (changed,), _ = library.scan(where)
    assert changed.body == "two, longer\n"
    path.unlink()
    assert library.scan(where) == ([], [])


def prompt(body: str, fmt: str = "sightline") -> PromptFile:
    return PromptFile("p", Path("p.md"), fmt, "user", "", "", None, body)  # type: ignore[arg-type]


def test_claude_placeholders() -> None:
    p = prompt("Fix $1 in $2. All: $ARGUMENTS. Not $10.", "claude")
    v = expand.Values(arguments='issue-7 "src/a b.py"')
    assert expand.expand(p, v) == 'Fix issue-7 in src/a b.py. All: issue-7 "src/a b.py". Not $10.'
    # Copilot's placeholders are text in a Claude command
    assert expand.expand(prompt("${file}", "claude"), expand.Values(file="x")) == "${file}"


def test_copilot_placeholders_and_inputs() -> None:
    body = "In ${fileBasename} (${fileDirname}) for ${input:who:a person}: ${selectedText}"
    p = prompt(body, "copilot")
    need = expand.needs(p)
    assert need.inputs == ("who",) and need.selection and need.file
    inputs, rest = expand.split_inputs("who=me extra", need.inputs)
    assert inputs == {"who": "me"} and rest == "extra"
    text = expand.expand(
        p, expand.Values(arguments=rest, inputs=inputs, selected_text="x = 1", file="src/a.py")
    )
    assert text == "In a.py (src) for me: x = 1\n\nextra"  # arguments without a placeholder follow


def test_split_command() -> None:
    assert catalog.split_command("/review a b\nmore") == ("review", "a b\nmore")
    assert catalog.split_command("/plan") == ("plan", "")
    assert catalog.split_command("/ x") is None
    assert catalog.split_command("//comment") is None
    assert catalog.split_command("no") is None


def test_front_matter_without_keys() -> None:
    assert split_front_matter("---\n---\nbody", ()) == ({}, "body")
    assert split_front_matter("no front matter", ()) == ({}, "no front matter")


PIECES = [*"ab :${}\n", "$1", "$ARGUMENTS", "${file}", "${selection}", "${input:x}"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@given(body=TEXT, arguments=TEXT)
def test_a_filled_value_is_never_expanded_again(body: str, arguments: str) -> None:
    """The one rule: values go in once.  Arguments that look like placeholders stay as
    typed: the file's value appears exactly as often as the body asks for it."""
    p = prompt(body)
    asked = sum(
        1 for m in expand.PATTERNS["sightline"].finditer(body) if m.groupdict().get("var") == "file"
    )
    got = expand.expand(p, expand.Values(arguments=arguments, file="§"))
    assert got.count("§") == asked


_NAMES = st.lists(st.text("abcd-:", min_size=1, max_size=8), min_size=1, max_size=30, unique=True)


@given(_NAMES, st.lists(st.text("abcd-:", max_size=6), min_size=1, max_size=12))
def test_narrowing_ranks_as_ranking_the_whole_list(names: list[str], queries: list[str]) -> None:
    """The menu narrows each keystroke from the last one's matches: the same items, in
    the same order, as ranking every command for that query."""
    from sightline.slash.service import Context, SlashCommands

    commands = [catalog.Command(n, "skill", "", "test") for n in names]
    slash = SlashCommands(extra=[lambda ctx: commands])
    slash._listed = slash.candidates(Context("/nonexistent"))
    for query in queries:
        want = catalog.rank(slash._listed, query)
        assert slash._ranked(query) == want


_VALUE = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20),
    st.text("ab :#-'\"[]{},x\t\u00e9\u2028!|>", max_size=12),  # (near the fast path's edges)
)


@settings(max_examples=400)
@given(
    st.lists(
        st.tuples(st.sampled_from(["description", "argument-hint", "model", "x-y"]), _VALUE),
        min_size=1,
        max_size=4,
    )
)
def test_the_fast_front_matter_path_reads_as_pyyaml_does(pairs: list[tuple[str, str]]) -> None:
    """Lines the fast path takes give exactly what PyYAML's base loader gives."""
    import yaml

    from sightline.domain.front_matter import _simple

    block = "".join(f"{k}: {v}\n" for k, v in pairs)
    fast = _simple(block)
    if fast is None:
        return  # (PyYAML reads it)
    data = yaml.load(block, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))
    assert isinstance(data, dict)
    assert {k: " ".join(v.split()) for k, v in fast.items()} == {
        k: " ".join(str(v).split()) for k, v in data.items()
    }
