"""Kept approvals match the parsed command: a property over generated shell lines that a kept
approval never covers a line holding a simple command it did not approve (however the line
joins, nests, quotes or hides it), and the rules of what a simple command is, by example."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain.shellparse import Simple, parse
from sightline.gate.approvals import Approvals, command_rules

# A command of the generator: its ground truth, known without the parser. None: a simple
# command whose words are known only when it runs (never approvable).
Truth = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None


@dataclass(frozen=True)
class Line:
    text: str
    commands: tuple[Truth, ...]
    heredoc: bool = False  # ends in a here-document: only a newline may follow it
    known: bool = field(default=True)  # every command of it is known before it runs


NAMES = ["echo", "npm", "rm", "make", "git", "ls", "cat", "true"]
WORDS = [
    "test", "-rf", "build", "a b", "x;y", "&& rm -rf ~", "~", "$(id)", "`id`", "\n",
    "it's", 'say "hi"', "*", "--name=v", "", "a|b", "(x)", "${HOME}", "#c", "\\",
]  # fmt: skip
SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def ways(literal: str) -> list[str]:
    """`literal` as shell words that stand for exactly it (the generator's own quoting)."""
    out = []
    if SAFE.fullmatch(literal):
        out.append(literal)
    if "'" not in literal:
        out.append(f"'{literal}'")
    if not any(c in literal for c in '"$`\\'):
        out.append(f'"{literal}"')
    return out


def quoted(literal: str) -> st.SearchStrategy[str]:
    return st.sampled_from(ways(literal))


@st.composite
def simple(draw: st.DrawFn) -> Line:
    name = draw(st.sampled_from(NAMES))
    args = draw(st.lists(st.sampled_from(WORDS), max_size=3))
    env = draw(st.sampled_from([(), ("CI=1",)]))
    dups = draw(st.sampled_from([(), ("2>&1",)]))
    words = [draw(quoted(w)) for w in [name, *args]]
    text = " ".join([*env, *words, *dups])
    return Line(text, (((name, *args), env, dups),))


@st.composite
def unknowable(draw: st.DrawFn, inner: Line) -> Line:
    """A simple command whose words come from the shell as it runs, or that runs code."""
    plain = inner.text.replace("\n", " ")
    how = draw(st.integers(0, 6))
    if how == 0 and not inner.heredoc:
        return Line(f"echo $({inner.text})", (None, *inner.commands))
    if how == 1 and len(inner.commands) == 1 and "`" not in plain and not inner.heredoc:
        return Line(f"echo `{plain}`", (None, *inner.commands))
    if how == 2 and "'" not in inner.text and not inner.heredoc:
        return Line(f"sh -c '{inner.text}'", (None, *inner.commands))
    if how == 3 and "'" not in inner.text and not inner.heredoc:
        return Line(f"eval '{inner.text}'", (None, *inner.commands))
    if how == 4:
        return Line(f"cat <<EOF\n{plain}\nEOF", (None,), heredoc=True)
    if how == 5:
        return Line("echo $HOME > out.txt", (None,))
    return Line(f"{draw(simple()).text} > ~/.bashrc", (None,))


def join(parts: list[Line], seps: list[str]) -> Line:
    text = parts[0].text
    for before, sep, part in zip(parts, seps, parts[1:], strict=False):
        text += ("\n" if before.heredoc else sep) + part.text  # only a newline ends one
    commands = tuple(c for p in parts for c in p.commands)
    return Line(text, commands, heredoc=parts[-1].heredoc)


@st.composite
def line(draw: st.DrawFn, depth: int = 2) -> Line:
    if depth == 0:
        return draw(simple())
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return draw(simple())
    if kind == 1:
        return draw(unknowable(draw(line(depth - 1))))
    if kind in (2, 3):
        parts = draw(st.lists(line(depth - 1), min_size=2, max_size=3))
        seps = [draw(st.sampled_from([";", " && ", " || ", " | ", "\n", " & "])) for _ in parts]
        return join(parts, seps)
    inner = draw(line(depth - 1))
    if inner.heredoc:
        return inner
    return Line(
        draw(st.sampled_from([f"( {inner.text} )", f"{{ {inner.text}; }}"])), inner.commands
    )


def allowed_by(store: Approvals, ws: str, text: str) -> bool:
    verdict = store.check_command(ws, "c1", parse(text))
    return verdict is not None and verdict.effect == "allow"


@settings(max_examples=150, deadline=None)
@given(approved=st.lists(line(), min_size=1, max_size=3), target=line(), extra=line())
def test_a_kept_approval_never_covers_a_simple_command_it_did_not_approve(
    approved: list[Line], target: Line, extra: Line
) -> None:
    store = Approvals(Path("/nonexistent/never-written"))
    ws = "/tmp/ws"
    for a in approved:
        store.remember(ws, "c1", "conversation", command_rules("allow", parse(a.text)))
    kept = {c for a in approved for c in a.commands if c is not None}
    # The target as generated, and the approved lines with something joined to them (the
    # prefix attack: `npm test && rm -rf ~`).
    tries = [target, *(join([a, extra], [sep]) for a in approved for sep in ("; ", " && ", "\n"))]
    for t in tries:
        if allowed_by(store, ws, t.text):
            assert all(c is not None and c in kept for c in t.commands), t.text
    # And what was approved, when all of it is known, is allowed again as it was (but for
    # `a && b 2>&1`, where the grammar puts the redirection on the list: then never kept).
    for a in approved:
        if all(c is not None for c in a.commands) and ">&" not in a.text:
            assert allowed_by(store, ws, a.text), a.text


def test_the_generators_quoting_stands_for_the_literal_in_a_real_shell() -> None:
    """The property's ground truth is the generator's: checked once against /bin/sh."""
    import subprocess

    for literal in [*NAMES, *WORDS]:
        for way in ways(literal):
            out = subprocess.run(
                ["/bin/sh", "-c", f"printf '%s\\0' {way}"], capture_output=True, check=True
            ).stdout
            assert out == literal.encode() + b"\0", (literal, way)


@pytest.mark.parametrize(
    ("text", "argvs"),
    [
        ("npm test", [("npm", "test")]),
        ("'npm' \"test\"", [("npm", "test")]),
        ("npm test && rm -rf build", [("npm", "test"), ("rm", "-rf", "build")]),
        ("a | b; c || d & e\nf", [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]),
        ("( cd x; make )", [("cd", "x"), ("make",)]),
        ("{ a; b; }", [("a",), ("b",)]),
        ("echo 'a && b'", [("echo", "a && b")]),
        ("npm test # and a comment", [("npm", "test")]),
    ],
)
def test_simple_commands_are_found_whatever_joins_them(
    text: str, argvs: list[tuple[str, ...]]
) -> None:
    assert [c.argv for c in parse(text).commands] == argvs


def test_assignments_and_descriptor_copies_are_part_of_the_simple_command() -> None:
    assert parse("CI=1 npm test 2>&1").commands == (Simple(("npm", "test"), ("CI=1",), ("2>&1",)),)
    assert parse("CI=1 npm test").commands != parse("npm test").commands


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("echo $(id)", "command substitution"),
        ("echo `id`", "command substitution"),
        ("echo $HOME", "variable"),
        ('echo "$HOME"', "expanded"),
        ("rm -rf ~", "expanded"),
        ("ls *.py", "expanded"),
        ("echo hi > f", "redirects"),
        ("cat <<EOF\nrm -rf ~\nEOF\n", "redirects"),
        ("cat <<< x", "redirects"),
        ("eval 'npm test'", "runs its arguments"),
        ("sh -c 'npm test'", "runs its arguments"),
        ("/bin/bash -c x", "runs its arguments"),
        ("PATH=/tmp; npm test", "sets a shell variable"),
        ("export PATH=/tmp", "sets a shell variable"),
        ("if true; then rm x; fi", "an if"),
        ("f() { rm x; }", "function"),
        ("echo 'unclosed", "does not parse"),
        ("a\\\nb", "backslash"),
        ("rm -rf build\\\n/x", "backslash"),
        ("", "runs no command"),
        ("# only a comment", "runs no command"),
        ("a \0 b", "NUL"),
    ],
)
def test_what_cannot_be_known_before_it_runs_is_never_kept(text: str, why: str) -> None:
    parsed = parse(text)
    assert parsed.commands == () and why in parsed.unknown
    assert command_rules("allow", parsed) == [] and command_rules("deny", parsed) == []


def test_a_denied_command_is_denied_as_parsed_and_only_that(tmp_path: Path) -> None:
    store = Approvals(tmp_path)
    store.remember("/w", None, "always", command_rules("deny", parse("rm -rf build")))
    deny = store.check_command("/w", None, parse("rm   -rf 'build'"))
    assert deny is not None and deny.effect == "deny"
    assert store.check_command("/w", None, parse("rm -rf build; ls")) is None
    assert store.check_command("/elsewhere", None, parse("rm -rf build")) is None
