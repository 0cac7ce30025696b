"""Rules over the source text itself: every message goes through the one-line rule, and the
files a comment names exist (a moved file leaves no comment pointing at its old place)."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

SOURCES = ("python", "lua", "plugin", "rplugin")


def sources(*suffixes: str) -> list[Path]:
    return sorted(p for top in SOURCES for p in (ROOT / top).rglob("*") if p.suffix in suffixes)


def test_every_message_of_the_lua_layer_goes_through_the_one_line_rule() -> None:
    """ui/message.lua shows a message on one screen line (the rest waits in the pane, which
    ui/pane/notice.lua draws): a bare vim.notify elsewhere could raise the hit-enter prompt."""
    rule = {ROOT / "lua/sightline/ui/message.lua", ROOT / "lua/sightline/ui/pane/notice.lua"}
    bare = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sources(".lua")
        if path not in rule
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bvim\.notify\(", line.split("--", 1)[0])
    ]
    assert bare == []


# A file named in a comment: `domain/workspace.py`, `lua/sightline/port.lua`, `spawn.py`.
NAMED = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.(?:py|lua))\b")
# Names that stand for the user's files in examples (`read_file src/app.py`).
EXAMPLES = {"src/app.py", "src/a.py", "app.py", "a.py"}
# Where a relative name is looked for besides the naming file's own folders.
BASES = ("", "python", "python/sightline", "lua", "lua/sightline")


# Tokens after which a string is a statement of its own: a docstring.
_STATEMENT_START = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}


def comments(path: Path) -> Iterator[tuple[int, str]]:
    """A file's comments and (Python) docstrings, with their line."""
    text = path.read_text()
    if not NAMED.search(text):
        return
    if path.suffix == ".lua":
        for n, line in enumerate(text.splitlines(), 1):
            if "--" in line:
                yield n, line[line.index("--") :]
        return
    before = tokenize.ENCODING
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        docstring = tok.type == tokenize.STRING and before in _STATEMENT_START
        if tok.type == tokenize.COMMENT or docstring:
            yield tok.start[0], tok.string
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            before = tok.type


def test_every_file_a_comment_names_exists() -> None:
    named = sources(".py", ".lua")
    everywhere = {p.name for p in named} | {
        p.name for p in (ROOT / "tests").rglob("*") if p.suffix in (".py", ".lua")
    }
    missing = []
    for path in named:
        for line, text in comments(path):
            for name in NAMED.findall(text):
                if name in EXAMPLES:
                    continue
                if "/" in name:
                    places = [ROOT / b for b in BASES] + list(path.parents)
                    found = any((place / name).exists() for place in places)
                else:
                    found = name in everywhere  # a sibling or a well-known module, by name
                if not found:
                    missing.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert missing == []
