"""The one child-Neovim starter for tests and benches.

A child is configured the way the README tells users: an `init.lua` that puts the plugin
on the runtimepath (as a plugin manager does) and calls `require('sightline').setup({...})`.
`vim.g.sightline` stays unset unless a test is about it (`g=`).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NVIM = str(Path(sys.executable).parent / "nvim")

_counter = itertools.count(1)


def lua_literal(value: Any) -> str:
    """A Python value as the Lua a user would type (tables, strings, numbers, booleans)."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid Lua string literal
    if isinstance(value, Mapping):
        items = [f"[{lua_literal(str(k))}] = {lua_literal(v)}" for k, v in value.items()]
        return "{ " + ", ".join(items) + " }"
    if isinstance(value, list | tuple):
        return "{ " + ", ".join(lua_literal(v) for v in value) + " }"
    raise TypeError(f"no Lua literal for {type(value).__name__}")


def _interpreter(config: Mapping[str, Any]) -> dict[str, Any]:
    """The README's install puts the core's interpreter at <plugin>/.venv, which the plugin
    finds by itself; only a test running from another interpreter has to say which."""
    if "python" in config:
        return dict(config)
    venv = ROOT / ".venv" / "bin" / "python"
    if venv.exists() and os.path.realpath(venv) == os.path.realpath(sys.executable):
        return dict(config)
    return {"python": sys.executable, **config}


def init_lua(
    setup: Mapping[str, Any] | None = None,
    *,
    g: Mapping[str, Any] | None = None,
    call_setup: bool = True,
    extra: str = "",
) -> str:
    """The text of a user's init.lua: the plugin on the runtimepath, then setup(config)."""
    lines = [
        "-- A user's init.lua: the plugin where a plugin manager puts it, then setup().",
        f"vim.opt.runtimepath:prepend({lua_literal(str(ROOT))})",
    ]
    if g is not None:
        lines.append(f"vim.g.sightline = {lua_literal(_interpreter(g))}")
    if call_setup:
        cfg = dict(setup or {})
        if g is None:
            cfg = _interpreter(cfg)
        lines.append(f"require('sightline').setup({lua_literal(cfg)})")
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


def write_init(text: str, directory: str | os.PathLike[str] | None = None) -> Path:
    base = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="sightline-init-"))
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"init-{os.getpid()}-{next(_counter)}.lua"
    path.write_text(text, encoding="utf-8")
    return path


def argv(init: Path, *extra: str, embed: bool = True) -> list[str]:
    """Neovim's command line for a child: headless, no swap, no shada, the given init."""
    out = [NVIM]
    if embed:
        out.append("--embed")
    out += ["--headless", "-n", "-i", "NONE", "-u", str(init), *extra]
    return out


def start(
    setup: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    g: Mapping[str, Any] | None = None,
    call_setup: bool = True,
    extra_init: str = "",
    extra_argv: tuple[str, ...] = (),
    init_dir: str | os.PathLike[str] | None = None,
) -> Any:
    """An embedded headless Neovim configured like a user's; returns the pynvim session."""
    import pynvim

    text = init_lua(setup, g=g, call_setup=call_setup, extra=extra_init)
    init = write_init(text, init_dir or os.environ.get("XDG_CONFIG_HOME"))
    old = dict(os.environ)
    os.environ.update(env or {})
    os.environ.pop("SIGHTLINE_TEST_CONFIG", None)
    try:
        return pynvim.attach("child", argv=argv(init, *extra_argv))
    finally:
        os.environ.clear()
        os.environ.update(old)
