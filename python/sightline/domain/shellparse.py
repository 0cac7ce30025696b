"""A shell command line as the simple commands it runs, for approvals that match what runs.

Parsed with tree-sitter-bash (py-tree-sitter), never matched on text. The result is either
the exact list of simple commands the line runs, each known in full before it runs, or the
reason it cannot be known (then nothing about it is remembered and it is asked every time).

What a *simple command* is here (the help's :help sightline-approvals says the same):
- its words are literals: bare words of the characters `A-Za-z0-9_@%+=:,./-` only, words
  in single quotes, words in double quotes with no `$`, backquote or backslash, or those
  glued together (`--name="a b"`). Quotes are removed: `'npm' "test"` is `npm test`.
- `NAME=literal` assignments before it are part of it (`CI=1 npm test` is not `npm test`),
  and so are redirections that only duplicate a descriptor (`2>&1`); any other redirection
  (to or from a file, a here-document, a here-string) makes the line unknown.
- its command name is not one that runs its arguments as shell code (`eval`, `sh`, `bash`,
  `source`, `.`, `exec`, …): such a line is unknown.
A line is a list of simple commands joined by `;`, `&`, `&&`, `||`, `|`, `|&` and newlines,
possibly inside `( … )` or `{ …; }`. Anything else — a `$VAR`, `$(…)`, backquotes, a glob,
`~`, `if`/`for`/`case`, a function, a bare `NAME=value`, `export`, a syntax error — makes the
whole line unknown: what it would run is only known when it runs.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass

import tree_sitter
import tree_sitter_bash

MAX_COMMAND_BYTES = 64 * 1024

# A bare word made of these is the same literal in every POSIX shell (no expansion, quoting,
# globbing, tilde, history or operator character).
_SAFE_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Commands that run (a part of) their arguments as shell code or replace the shell.
RUNS_CODE = frozenset(
    {
        "eval",
        "exec",
        "source",
        ".",
        "command",
        "builtin",
        "trap",
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "yash",
        "fish",
        "busybox",
        "su",
        "sudo",
        "doas",
    }
)
# Joiners of statements that change nothing about what each one runs.
_GROUPS = frozenset({"program", "list", "pipeline", "subshell", "compound_statement"})
_SYNTAX = {
    "command_substitution": "a command substitution ($(…) or backquotes)",
    "process_substitution": "a process substitution",
    "simple_expansion": "a variable",
    "expansion": "a variable",
    "arithmetic_expansion": "an arithmetic expansion",
    "ansi_c_string": "a $'…' string",
    "translated_string": 'a $"…" string',
    "if_statement": "an if",
    "for_statement": "a loop",
    "c_style_for_statement": "a loop",
    "while_statement": "a loop",
    "case_statement": "a case",
    "function_definition": "a function definition",
    "negated_command": "a negation (!)",
    "test_command": "a test ([ ] or [[ ]])",
}
_SPACES = re.compile(r"[ \t]+")
_BLANKS = re.compile(r"[ \t\n]+")
_DUP = re.compile(r"[0-9]?[<>]&[0-9]")


@dataclass(frozen=True, order=True)
class Simple:
    """One simple command: assignments before it, its words, its descriptor duplications."""

    argv: tuple[str, ...]
    env: tuple[str, ...] = ()
    dups: tuple[str, ...] = ()

    def shown(self) -> str:
        return " ".join([*map(shlex.quote, self.env), shlex.join(self.argv), *self.dups])

    def to_json(self) -> dict[str, list[str]]:
        return {"argv": list(self.argv), "env": list(self.env), "dups": list(self.dups)}

    @classmethod
    def from_json(cls, raw: object) -> Simple | None:
        if not isinstance(raw, dict):
            return None
        parts = [raw.get(k, []) for k in ("argv", "env", "dups")]
        if not all(isinstance(p, list) and all(isinstance(x, str) for x in p) for p in parts):
            return None
        if not parts[0]:
            return None
        return cls(tuple(parts[0]), tuple(parts[1]), tuple(parts[2]))


@dataclass(frozen=True)
class Parsed:
    """The simple commands a line runs, in order; or, with `unknown`, why it cannot be told."""

    commands: tuple[Simple, ...] = ()
    unknown: str = ""


class _Unknown(Exception):
    pass


@functools.cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(line: str) -> Parsed:
    """The simple commands of `line`, or why they cannot be known (never raises)."""
    data = line.encode("utf-8", "surrogatepass")
    if len(data) > MAX_COMMAND_BYTES:
        return Parsed(unknown="it is too long")
    if "\0" in line:
        return Parsed(unknown="it holds a NUL character")
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error:
        return Parsed(unknown="it does not parse as a shell command")
    out: list[Simple] = []
    try:
        _walk(root, out)
    except _Unknown as why:
        return Parsed(unknown=str(why))
    except RecursionError:
        return Parsed(unknown="it is nested too deeply")
    if not out:
        return Parsed(unknown="it runs no command")
    return Parsed(tuple(out))


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def _gaps(node: tree_sitter.Node, allowed: re.Pattern[str]) -> None:
    """What lies between a node's children (and its edges) is only what `allowed` says: the
    grammar skips a backslash-newline as if it were a space, where the shell joins words."""
    at = node.start_byte
    source = node.text or b""
    base = node.start_byte
    for child in [*node.children, None]:
        start = node.end_byte if child is None else child.start_byte
        gap = source[at - base : start - base].decode("utf-8", "surrogatepass")
        if gap and not allowed.fullmatch(gap):
            raise _Unknown("it continues a line with a backslash")
        if child is not None:
            at = child.end_byte


def _walk(node: tree_sitter.Node, out: list[Simple]) -> None:
    kind = node.type
    if kind == "comment":
        return
    if kind in _GROUPS:
        _gaps(node, _BLANKS)
        for child in node.children:
            if child.is_named:
                _walk(child, out)
            elif _text(child) not in (";", "&", "&&", "||", "|", "|&", "(", ")", "{", "}", "\n"):
                raise _Unknown(f"it uses {_text(child)!r}")
        return
    if kind == "redirected_statement":
        _gaps(node, _SPACES)
        body = node.child_by_field_name("body")
        if body is None or body.type != "command":
            raise _Unknown("it redirects more than one command")
        dups = []
        for child in node.children_by_field_name("redirect"):
            dups.append(_dup(child))
        out.append(_simple(body, tuple(dups)))
        return
    if kind == "command":
        out.append(_simple(node, ()))
        return
    raise _Unknown(_why(kind))


def _why(kind: str) -> str:
    if kind in ("variable_assignment", "declaration_command", "unset_command"):
        return "it sets a shell variable"
    if kind in ("heredoc_redirect", "herestring_redirect", "file_redirect"):
        return "it redirects to or from a file"
    return "it holds " + _SYNTAX.get(kind, f"shell syntax not matched here ({kind})")


def _dup(node: tree_sitter.Node) -> str:
    text = "".join(_text(node).split())
    if node.type == "file_redirect" and _DUP.fullmatch(text):
        return text
    raise _Unknown(_why(node.type))


def _simple(node: tree_sitter.Node, dups: tuple[str, ...]) -> Simple:
    _gaps(node, _SPACES)
    env: list[str] = []
    argv: list[str] = []
    for i, child in enumerate(node.children):
        field = node.field_name_for_child(i)
        if child.type == "variable_assignment":
            env.append(_assignment(child))
        elif field == "name":
            argv.append(_word(child.named_children[0] if child.named_children else child))
        elif field == "argument":
            argv.append(_word(child))
        elif field == "redirect":
            dups = (*dups, _dup(child))
        else:
            raise _Unknown(_why(child.type))
    if not argv:
        raise _Unknown("it sets a shell variable")
    if argv[0] in RUNS_CODE or argv[0].rsplit("/", 1)[-1] in RUNS_CODE:
        raise _Unknown(f"{argv[0]} runs its arguments as shell code")
    return Simple(tuple(argv), tuple(env), dups)


def _assignment(node: tree_sitter.Node) -> str:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name is None or not _NAME.fullmatch(_text(name)):
        raise _Unknown("it sets a shell variable")
    if len(node.children) != (3 if value is not None else 2):
        raise _Unknown("it sets a shell variable")
    return f"{_text(name)}={_word(value) if value is not None else ''}"


def _word(node: tree_sitter.Node) -> str:
    """The literal a word node stands for after quote removal, or _Unknown."""
    kind, text = node.type, _text(node)
    if kind in ("word", "number"):
        if _SAFE_WORD.fullmatch(text):
            return text
        raise _Unknown(f"its word {text[:40]!r} is expanded by the shell")
    if kind == "raw_string":
        if len(text) >= 2 and text[0] == text[-1] == "'" and "'" not in text[1:-1]:
            return text[1:-1]
        raise _Unknown("it holds a quote the parser did not close")
    if kind == "string":
        inner = text[1:-1]
        if (
            len(text) >= 2
            and text[0] == text[-1] == '"'
            and all(c.type == "string_content" for c in node.named_children)
            and not any(c in inner for c in '$`\\"')
        ):
            return inner
        raise _Unknown("a string in it is expanded by the shell")
    if kind == "concatenation":
        parts = "".join(_word(child) for child in node.children)
        if len(parts) and _joined(node):
            return parts
        raise _Unknown("it glues words the shell may expand")
    raise _Unknown(_why(kind))


def _joined(node: tree_sitter.Node) -> bool:
    """The parts of a concatenation touch (nothing between them the parser left out)."""
    end = node.start_byte
    for child in node.children:
        if child.start_byte != end:
            return False
        end = child.end_byte
    return end == node.end_byte
