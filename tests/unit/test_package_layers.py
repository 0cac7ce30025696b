"""The layers of python/sightline as one order over its imports (ast only: nothing is imported).

LAYERS lists the layers (the first part of a module's dotted name under `sightline`) from
the bottom up; a module may import its own layer and the layers below it, never one above:
  domain     pure logic; imports no other layer
  editor     the port to Neovim
  ui         transcript and UI state
  gate       the review gate and the turn as tools see it
  tools      the agent's tools
  mcp_client the user's MCP servers (tools of a kind, resources for `@mcp:`)
  mentions   the mentions feature
  providers  model providers
  agent      turns
  core       the composition root (`sightline.core`)
  entry      the adapters that receive calls (RPC host, CLI, MCP server)
  the public `python -m` names: `python -m sightline` (__main__), `python -m sightline.host`
             (the core, as Lua starts it), `python -m sightline.mcp` (the MCP server)

So no two layers can import each other, however long the way round. Every import counts,
wherever it is written (module level, under `if TYPE_CHECKING:`, inside a function): a
deferred import is still a dependency, for the order and for the module circles (two
modules of one layer that import each other, even through a function, are one room).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "sightline"

# Bottom up; the names of one entry share a rank (none imports another).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__",),
    ("domain",),
    ("editor",),
    ("ui",),
    ("gate",),
    ("tools",),
    ("mcp_client",),
    ("mentions",),
    ("slash",),
    ("providers",),
    ("agent",),
    ("core",),
    ("entry",),
    ("__main__", "host", "mcp"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    imported: str  # dotted module name (a submodule when `from pkg import mod` names one)
    line: int
    top: bool  # at module level (TYPE_CHECKING blocks included), not inside a function


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str, root: Path) -> bool:
    rel = Path(*dotted.split(".")[1:])
    base = root.joinpath(rel)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports_of(source: str, name: str, root: Path, is_package: bool = False) -> Iterator[Import]:
    """The sightline modules `name` imports, each with where it is written."""
    tree = ast.parse(source)
    package = name if is_package else name.rpartition(".")[0]

    def walk(node: ast.AST, top: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "sightline":
                        yield Import(name, alias.name, child.lineno, top)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parent = package.split(".")
                    parent = parent[: len(parent) - child.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                if base.split(".")[0] != "sightline":
                    continue
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if _is_module(sub, root) else base
                    yield Import(name, target, child.lineno, top)
            yield from walk(child, inner)

    yield from walk(tree, True)


def package_imports(root: Path = PACKAGE) -> list[Import]:
    found: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        found += imports_of(path.read_text(), name, root, path.name == "__init__.py")
    return found


def layer_of(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_violations(found: list[Import]) -> list[str]:
    out = []
    for imp in found:
        mine, theirs = layer_of(imp.importer), layer_of(imp.imported)
        if mine != theirs and RANK[theirs] >= RANK[mine]:
            out.append(f"{imp.importer}:{imp.line} imports {imp.imported} ({mine} → {theirs})")
    return sorted(set(out))  # one line per import statement, however many names it takes


def layer_cycles(found: list[Import]) -> list[list[str]]:
    """Each circle among layers (whatever the order says): one list of layer names."""
    edges = {(layer_of(i.importer), layer_of(i.imported)) for i in found}
    return cycles([Import(a, b, 0, True) for a, b in sorted(edges) if a != b])


def cycles(found: list[Import]) -> list[list[str]]:
    """Each import circle among modules (every import, deferred ones too), as one list."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        if imp.imported != imp.importer:
            graph.setdefault(imp.importer, set()).add(imp.imported)
    # Tarjan's strongly connected components: a component of more than one module is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_known_layer() -> None:
    names = {module_name(p, PACKAGE) for p in PACKAGE.rglob("*.py")}
    assert {n for n in names if layer_of(n) not in RANK} == set()


def test_layers_import_only_what_is_below_them() -> None:
    assert layer_violations(package_imports()) == []


def test_no_circle_among_layers_or_modules() -> None:
    found = package_imports()
    assert layer_cycles(found) == []
    assert cycles(found) == []


# The rules can fail: a tool importing the agent, and a circle, in a package written here.


def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "sightline"
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pkg


@pytest.mark.parametrize(
    "line",
    [
        "from sightline.agent import session\n",
        "from sightline.agent.session import Turn\n",
        "import sightline.agent.session\n",
        "from ..agent import session\n",
        "def f():\n    from sightline.agent.session import Turn\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sightline.agent import x\n",
    ],
)
def test_a_tool_importing_the_agent_is_caught(tmp_path: Path, line: str) -> None:
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "agent/__init__.py": "",
            "agent/session.py": "",
            "agent/x.py": "",
            "tools/__init__.py": "",
            "tools/read.py": line,
        },
    )
    bad = layer_violations(package_imports(pkg))
    assert len(bad) == 1 and "sightline.tools.read:" in bad[0] and "tools → agent" in bad[0]


def test_an_import_of_an_adapter_is_caught(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "entry/__init__.py": "",
            "entry/rpc.py": "",
            "__main__.py": "from sightline.entry import rpc\n",
            "agent/__init__.py": "",
            "agent/session.py": "from sightline.entry.rpc import x\n",
        },
    )
    assert layer_violations(package_imports(pkg)) == [
        "sightline.agent.session:1 imports sightline.entry.rpc (agent → entry)"
    ]


def test_a_circle_is_caught_even_through_a_deferred_import(tmp_path: Path) -> None:
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "agent/__init__.py": "",
            "agent/session.py": "from sightline.tools import plan\n",
            "tools/__init__.py": "",
            "tools/plan.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from sightline.agent.session import Turn\n"
            ),
            "tools/base.py": "def f():\n    from sightline.tools import registry\n",
            "tools/registry.py": "from sightline.tools import base\n",
        },
    )
    found = package_imports(pkg)
    assert cycles(found) == [
        ["sightline.agent.session", "sightline.tools.plan"],
        ["sightline.tools.base", "sightline.tools.registry"],
    ]
    assert layer_cycles(found) == [["agent", "tools"]]


def test_a_way_round_through_three_layers_is_caught(tmp_path: Path) -> None:
    """gate → ui → mentions → tools → gate: each step but one goes down; that one is named."""
    pkg = _write(
        tmp_path,
        {
            "__init__.py": "",
            "gate/__init__.py": "",
            "gate/turn.py": "from sightline.ui import push\n",
            "ui/__init__.py": "",
            "ui/push.py": "",
            "ui/chips.py": "from sightline.mentions.parse import parse_mentions\n",
            "mentions/__init__.py": "",
            "mentions/parse.py": "",
            "mentions/parts.py": "def f():\n    from sightline.tools import diagnostics\n",
            "tools/__init__.py": "",
            "tools/diagnostics.py": "from sightline.gate import turn\n",
        },
    )
    found = package_imports(pkg)
    assert layer_violations(found) == [
        "sightline.ui.chips:1 imports sightline.mentions.parse (ui → mentions)"
    ]
    assert layer_cycles(found) == [["gate", "mentions", "tools", "ui"]]
