"""The transcript's own sentences are worded in one module (domain/narrator.py), so one event
reads the same wherever it comes from: the rule over the code (an ast walk), and the same
answer of the user seen from the built-in loop, the review gate and an ACP agent."""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import PermissionOption, ToolCallUpdate

from sightline.agent.session import Session, Turn
from sightline.providers.acp.client import SightlineClient, TurnContext
from sightline.tools import command, write
from tests.conftest import ROOT, wait_for
from tests.effective_config import core_config
from tests.fake_editor import FakeEditor

PACKAGE = ROOT / "python" / "sightline"
# The narrator words the notes; the transcript draws its own headers (▍You, ▍Agent, …).
WORDERS = {PACKAGE / "domain" / "narrator.py", PACKAGE / "ui" / "transcript.py"}
# The transcript's writes that take words (append_text/append_thinking stream the model's,
# add_output a command's, add_user the user's).
WRITES = frozenset({"add_note", "add_lines", "set_line"})


def _is_narrator(node: ast.AST) -> bool:
    """`narrator.x(...)` (or `*narrator.x(...)`): its arguments are facts, its words its own."""
    if isinstance(node, ast.Starred):
        node = node.value
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "narrator"
    )


def _sentences(node: ast.AST) -> Iterator[int]:
    """Lines of the string literals in `node` that say something: not an empty or blank
    string, not a key looked up (`record["id"]`, `.get("text")`), nothing the narrator is
    handed."""
    if _is_narrator(node):
        return
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value.strip():
            yield node.lineno
    elif isinstance(node, ast.JoinedStr):
        yield node.lineno
    elif isinstance(node, ast.Subscript):
        yield from _sentences(node.value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        yield from _sentences(node.func.value)
        looked_up = node.args[1:] if node.func.attr == "get" else node.args
        for arg in [*looked_up, *(k.value for k in node.keywords)]:
            yield from _sentences(arg)
    else:
        for child in ast.iter_child_nodes(node):
            yield from _sentences(child)


def _passed(arg: ast.AST) -> str | None:
    """The variable an argument passes as it is (`shown`, `*head`), whose build counts."""
    if isinstance(arg, ast.Starred):
        arg = arg.value
    return arg.id if isinstance(arg, ast.Name) else None


def _builds(scope: ast.AST, name: str) -> Iterator[ast.AST]:
    """What the variable `name` is built from in `scope`: its assignments, `+=`, and
    `.append(...)`/`.extend(...)` calls on it."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value:
                yield node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "extend", "insert")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            yield from node.args


def worded_outside(source: str) -> list[int]:
    """Lines where a transcript write outside the narrator carries a sentence of its own,
    written in the call or in a variable the call passes."""
    tree = ast.parse(source)
    found: list[int] = []

    def visit(node: ast.AST, scope: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else scope
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in WRITES
            ):
                for arg in [*child.args, *(k.value for k in child.keywords)]:
                    found.extend(_sentences(arg))
                    name = _passed(arg)
                    for built in _builds(scope, name) if name else ():
                        found.extend(_sentences(built))
            visit(child, inner)

    visit(tree, tree)
    return sorted(set(found))


def test_transcript_notes_are_worded_only_in_the_narrator() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in WORDERS and (lines := worded_outside(path.read_text()))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        'session.transcript.add_note("✗ refused " + name, "SightlineError")\n',
        'def f(t, why):\n    t.add_note(f"✗ {why}")\n',
        'def f(t, cmd):\n    shown = [("$ " + cmd, None)]\n    t.add_lines(shown)\n',
        'def f(t, lines):\n    lines.append(("  diff", None))\n    t.add_lines(lines)\n',
        "def f(t, row):\n    t.set_line(row, 'failed', None)\n",
        "def f(t, why):\n    note = ('✗ ' + why, 'SightlineError')\n    t.add_note(*note)\n",
    ],
)
def test_the_rule_catches_a_sentence_worded_at_the_call(source: str) -> None:
    assert worded_outside(source) != []


def test_the_rule_lets_facts_and_the_narrators_words_through() -> None:
    source = (
        "def f(t, row, label, old, new):\n"
        "    t.add_note(*narrator.tool_call(label))\n"
        "    lines = [narrator.proposal_header(label)]\n"
        '    lines += diff.compact_diff(old or "", new)\n'
        "    t.add_lines(lines)\n"
        "    t.set_line(row, *narrator.tool_failed(label, new))\n"
    )
    assert worded_outside(source) == []


# -- the same event, wherever it comes from ----------------------------------------------------


def _session(ws: Path) -> Session:
    (ws / "a.py").write_text("x = 1\n")
    return Session(FakeEditor(buffers={}), core_config(autoaccept=False), str(ws), [], ws / "h")


def _built_in_command(turn: Turn) -> Any:
    return command.run_command(turn, {"command": "make"})


def _gate_edit(turn: Turn) -> Any:
    return write.propose_edit(turn, {"path": "a.py", "old_string": "x = 1", "new_string": "x=2"})


def _acp_permission(turn: Turn) -> Any:
    options = [
        PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
        PermissionOption(option_id="no", name="Reject", kind="reject_once"),
    ]
    call = ToolCallUpdate(tool_call_id="c1", title="Run make", kind="execute")
    return SightlineClient()._permission(TurnContext(turn, False), call, options)


def _answer(ask: Callable[[Turn], Any], ws: Path, reason: str) -> tuple[str, list[Any]]:
    """The transcript's last line and its highlight after the user rejects what `ask` asks."""
    ws.mkdir()
    session = _session(ws)
    turn = Turn(1, session)
    worker = threading.Thread(target=ask, args=(turn,), daemon=True)
    worker.start()
    wait_for(lambda: session.gate.pending is not None, what="the ask")
    session.gate.decide("reject", reason)
    worker.join(5)
    assert not worker.is_alive()
    t = session.transcript
    row = len(t.lines) - 1
    return t.lines[row], [h[3] for h in t.hls if h[0] == row]


@pytest.mark.parametrize("reason", ["not now", ""])
def test_a_rejection_reads_the_same_from_the_loop_the_gate_and_an_acp_agent(
    tmp_path: Path, reason: str
) -> None:
    seen = {
        name: _answer(ask, tmp_path / name, reason)
        for name, ask in [
            ("built-in command", _built_in_command),
            ("edit proposal", _gate_edit),
            ("ACP permission", _acp_permission),
        ]
    }
    expected = "✗ rejected by the user" + (f": {reason}" if reason else "")
    assert seen == {name: (expected, ["SightlineWarning"]) for name in seen}
