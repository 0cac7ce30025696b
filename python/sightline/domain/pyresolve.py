"""Resolve a member key and a syntax scope in Python source to the lines they cover now.

Neovim ships no Python tree-sitter parser, so reveal asks the core, which uses the stdlib's
`ast`. The semantics match the Lua (tree-sitter) resolver in lua/sightline/resolve/:

* `member_key` is `name` or a dotted path `Outer.name`; it matches definitions (functions,
  classes, simple assignments) whose nesting path ends with those components.
* `syntax_scope` is a list of steps `{kind, index_in_parent}`; each step picks the n-th
  (0-based) statement of that kind *directly* inside the previous step (the member's body
  for the first step, the module without a member): a statement is directly inside X when
  no other statement of a step kind lies between them. `elif` continues its `if`.
* several matches: the one starting nearest `near_line`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

KINDS: dict[str, tuple[type[ast.stmt], ...]] = {
    "for": (ast.For, ast.AsyncFor),
    "while": (ast.While,),
    "if": (ast.If,),
    "switch": (ast.Match,),
    "try": (ast.Try, ast.TryStar),
    "block": (ast.With, ast.AsyncWith),
    "function": (ast.FunctionDef, ast.AsyncFunctionDef),
}

_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef

# Bounds on one request: Python files are far smaller, member keys far shorter, and
# syntax scopes cannot nest deeper than Python's 100 levels of indentation.
MAX_SOURCE_CHARS = 1 << 22
MAX_MEMBER_KEY_CHARS = 1024
MAX_SYNTAX_STEPS = 128


class ResolveError(ValueError):
    """Resolution failed; the message says what could not be resolved."""


@dataclass(frozen=True)
class Step:
    kind: str
    index_in_parent: int


@dataclass(frozen=True)
class _Member:
    path: tuple[str, ...]
    node: ast.stmt


def _lines(node: ast.stmt) -> tuple[int, int]:
    start = node.lineno
    if isinstance(node, _Def) and node.decorator_list:
        start = min(start, *(d.lineno for d in node.decorator_list))
    return start, node.end_lineno or node.lineno


def _child_statements(node: ast.AST) -> Iterator[ast.stmt]:
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            yield from (s for s in value if isinstance(s, ast.stmt))
    for handler in getattr(node, "handlers", []):
        yield from handler.body
    for case in getattr(node, "cases", []):
        yield from case.body


def _is_elif(node: ast.stmt, source: list[bytes]) -> bool:
    line = source[node.lineno - 1] if node.lineno <= len(source) else b""
    return isinstance(node, ast.If) and line[node.col_offset :].startswith(b"elif")


def _kind(node: ast.stmt, source: list[bytes]) -> str | None:
    if _is_elif(node, source):
        return None
    for kind, types in KINDS.items():
        if isinstance(node, types):
            return kind
    return None


def _direct_steps(root: ast.AST, source: list[bytes]) -> list[tuple[str, ast.stmt]]:
    out: list[tuple[str, ast.stmt]] = []

    def visit(node: ast.AST) -> None:
        for child in _child_statements(node):
            kind = _kind(child, source)
            if kind:
                out.append((kind, child))
            else:
                visit(child)

    visit(root)
    return out


def _member_names(node: ast.stmt) -> list[str]:
    if isinstance(node, _Def):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _members(tree: ast.Module) -> list[_Member]:
    out: list[_Member] = []

    def visit(node: ast.AST, path: tuple[str, ...]) -> None:
        for child in _child_statements(node):
            names = _member_names(child)
            for name in names:
                out.append(_Member((*path, name), child))
            visit(child, (*path, names[0]) if isinstance(child, _Def) else path)

    visit(tree, ())
    return out


def _short(value: str, limit: int = 80) -> str:
    """A value quoted for an error line, cut so that the line stays short."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _scalar(value: object) -> str:
    """A non-text value for an error line: small scalars as they are, else their type."""
    if isinstance(value, int) and abs(value) > 10**18:
        return "a very large number"  # str() of a huge int is refused (and slow)
    if value is None or isinstance(value, bool | int | float):
        return _short(str(value)).strip("'")
    return type(value).__name__


def check_syntax_scope(raw: object) -> list[Step]:
    """Validate a syntax_scope value (a list of {kind, index_in_parent} mappings)."""
    if raw is None:
        return []
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise ResolveError("syntax_scope must be a list of {kind, index_in_parent} steps")
    if len(raw) > MAX_SYNTAX_STEPS:
        raise ResolveError(f"syntax_scope has more than {MAX_SYNTAX_STEPS} steps")
    steps: list[Step] = []
    for i, item in enumerate(raw, 1):
        kind = item.get("kind") if isinstance(item, Mapping) else None
        index = item.get("index_in_parent") if isinstance(item, Mapping) else None
        if kind not in KINDS:
            got = _short(kind) if isinstance(kind, str) else _scalar(kind)
            raise ResolveError(
                f"syntax_scope step {i}: kind must be one of {', '.join(KINDS)}, got {got}"
            )
        if isinstance(index, float) and index.is_integer():
            index = int(index)
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            got = _scalar(index)
            raise ResolveError(
                f"syntax_scope step {i}: index_in_parent must be a whole number ≥ 0, got {got}"
            )
        steps.append(Step(str(kind), index))
    return steps


def _follow(root: ast.AST, steps: list[Step], source: list[bytes], where: str) -> ast.stmt:
    node = root
    for i, step in enumerate(steps, 1):
        matching = [n for k, n in _direct_steps(node, source) if k == step.kind]
        if step.index_in_parent >= len(matching):
            raise ResolveError(
                f"syntax_scope step {i} ({step.kind} #{step.index_in_parent}) not found in "
                f"{where}: it has {len(matching)} such statement(s)"
            )
        node = matching[step.index_in_parent]
    assert isinstance(node, ast.stmt)
    return node


def _resolve(
    text: str, member_key: str | None, steps: list[Step], near_line: int | None
) -> tuple[int, int]:
    if not member_key and not steps:
        raise ResolveError("nothing to resolve: give a member_key or a syntax_scope")
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ResolveError(f"cannot parse the file: {e.msg} (line {e.lineno})") from None
    except (RecursionError, MemoryError):
        # CPython's parser gives up on deep nesting with one of these (`-` * 10**5, `((((…`).
        raise ResolveError("cannot parse the file: it is nested too deeply") from None
    except ValueError as e:  # NUL bytes; lone surrogates cannot be encoded for the parser
        raise ResolveError(f"cannot parse the file: {e}") from None
    source = text.encode("utf-8", "surrogatepass").split(b"\n")
    roots: list[tuple[ast.AST, str]] = [(tree, "the file")]
    if member_key:
        parts = tuple(p for p in member_key.replace(":", ".").split(".") if p.strip())
        roots = [
            (m.node, ".".join(m.path))
            for m in _members(tree)
            if parts and m.path[-len(parts) :] == parts
        ]
        if not roots:
            raise ResolveError(f"member_key {_short(member_key)} not found in the file")
    found: list[tuple[int, int]] = []
    first_error: ResolveError | None = None
    for node, where in roots:
        try:
            hit = _follow(node, steps, source, where) if steps else node
        except ResolveError as e:
            first_error = first_error or e
            continue
        assert isinstance(hit, ast.stmt)
        found.append(_lines(hit))
    if not found:
        assert first_error is not None
        raise first_error
    if near_line is None:
        return found[0]
    return min(found, key=lambda r: abs(r[0] - near_line))


def resolve(
    text: str,
    member_key: str | None,
    syntax_scope: list[dict[str, object]] | None,
    near_line: int | None,
) -> tuple[int, int] | str:
    """1-based inclusive (start, end) lines of the member (or its syntax scope) in text, or an
    error text."""
    try:
        return _resolve(text, member_key, check_syntax_scope(syntax_scope), near_line)
    except ResolveError as e:
        return str(e)


def resolve_request(params: Mapping[str, object]) -> dict[str, int]:
    """A reveal's Python lookup (tools/view.py, for the agent and the MCP server):
    {text, member_key?, syntax_scope?, near_line?} → {start_line, end_line}; raises
    ResolveError with the text to show on failure, bounded so a huge input is refused."""
    text = params.get("text")
    member_key = params.get("member_key")
    near_line = params.get("near_line")
    if not isinstance(text, str):
        raise ResolveError("text must be a string")
    if len(text) > MAX_SOURCE_CHARS:
        raise ResolveError(f"text is longer than {MAX_SOURCE_CHARS} characters")
    if member_key is not None and not isinstance(member_key, str):
        raise ResolveError("member_key must be a string")
    if member_key is not None and len(member_key) > MAX_MEMBER_KEY_CHARS:
        raise ResolveError(f"member_key is longer than {MAX_MEMBER_KEY_CHARS} characters")
    if near_line is not None and (not isinstance(near_line, int) or isinstance(near_line, bool)):
        raise ResolveError("near_line must be a whole number")
    steps = check_syntax_scope(params.get("syntax_scope"))
    start, end = _resolve(text, member_key, steps, near_line)
    return {"start_line": start, "end_line": end}
