"""LuaCATS annotations: every public function of the Lua layer documents its parameters.

No Lua type checker is obtainable here (LuaLS and EmmyLua ship through GitHub releases and
crates.io only), so this checks what a checker would read first: each `function M.name(...)`
has a `---` block with one `---@param` per parameter, no `---@param` names a parameter the
function does not have, and every `---@class` is declared once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LUA_FILES = sorted([*ROOT.joinpath("lua").rglob("*.lua"), ROOT / "plugin" / "sightline.lua"])
PUBLIC = re.compile(r"^function M[.:](\w+)\(([^)]*)\)")
PARAM = re.compile(r"^---@param (\.\.\.|[A-Za-z_]\w*)\??\s")
CLASS = re.compile(r"^---@class (?:\(\w+\) )?([\w.]+)")


@dataclass(frozen=True)
class Function:
    where: str
    name: str
    params: tuple[str, ...]
    documented: tuple[str, ...] | None  # None: no `---` block at all


def public_functions(path: Path) -> list[Function]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Function] = []
    for i, line in enumerate(lines):
        match = PUBLIC.match(line)
        if match is None:
            continue
        block: list[str] = []
        j = i - 1
        while j >= 0 and lines[j].startswith("---"):
            block.append(lines[j])
            j -= 1
        params = tuple(p.strip() for p in match.group(2).split(",") if p.strip())
        documented = tuple(m.group(1) for b in block if (m := PARAM.match(b)))
        where = f"{path.relative_to(ROOT)}:{i + 1}"
        found.append(Function(where, match.group(1), params, documented if block else None))
    return found


def problems(fn: Function) -> list[str]:
    if fn.documented is None:
        return [f"{fn.where} M.{fn.name}: no --- annotation block"]
    out = [
        f"{fn.where} M.{fn.name}: parameter {p} has no ---@param"
        for p in fn.params
        if p not in fn.documented and p != "_"  # `_`: a parameter the function ignores
    ]
    out += [
        f"{fn.where} M.{fn.name}: ---@param {p} names no parameter"
        for p in fn.documented
        if p not in fn.params
    ]
    return out


def test_every_public_lua_function_is_annotated() -> None:
    functions = [fn for path in LUA_FILES for fn in public_functions(path)]
    assert len(functions) > 100  # the scan found the layer, not an empty glob
    assert [p for fn in functions for p in problems(fn)] == []


def test_the_checker_sees_a_missing_and_a_stale_param() -> None:
    fn = Function("x.lua:1", "f", ("a", "b"), ("a", "c"))
    assert problems(fn) == [
        "x.lua:1 M.f: parameter b has no ---@param",
        "x.lua:1 M.f: ---@param c names no parameter",
    ]
    assert problems(Function("x.lua:1", "g", (), None)) == ["x.lua:1 M.g: no --- annotation block"]


def test_each_luacats_class_is_declared_once() -> None:
    seen: dict[str, list[str]] = {}
    for path in LUA_FILES:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if match := CLASS.match(line):
                seen.setdefault(match.group(1), []).append(f"{path.relative_to(ROOT)}:{i + 1}")
    assert "sightline.Target" in seen and "sightline.Range" in seen
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}
