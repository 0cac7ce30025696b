"""The tests' Lua helpers: modules in tests/lua/*.lua, called in a child Neovim.

`lua_helper(nv, "marks.band", "app.py")` runs `require('marks').band('app.py')` in that child.
tests/lua goes on the child's package.path at the call, never in its init.lua: the child stays
configured exactly as the README says.
"""

from __future__ import annotations

from typing import Any

from tests.child import ROOT

LUA_DIR = ROOT / "tests" / "lua"

# One round trip: put tests/lua on package.path (once), then call module.fn(args...).
_CALL = (
    "local dir, module, fn = ... "
    "local entry = dir .. '/?.lua' "
    "if not package.path:find(entry, 1, true) then package.path = entry .. ';' .. package.path end "
    "return require(module)[fn](select(4, ...))"
)


def lua_helper(nv: Any, name: str, *args: Any) -> Any:
    """Call `fn` of tests/lua/<module>.lua in the child `nv`; `name` is "module.fn"."""
    module, _, fn = name.rpartition(".")
    if not module or not (LUA_DIR / f"{module}.lua").is_file():
        raise ValueError(f"no Lua helper module for {name!r} in {LUA_DIR}")
    return nv.exec_lua(_CALL, str(LUA_DIR), module, fn, *args)
