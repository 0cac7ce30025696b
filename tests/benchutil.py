"""What the benchmarks share: a child Neovim with isolated dirs, and polling."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from tests import child as _child

ROOT = _child.ROOT
NVIM = _child.NVIM


def child_env(tmp: str, **extra: str) -> dict[str, str]:
    """Environment for a child Neovim: XDG dirs in tmp, plus `extra`."""
    env = {"SIGHTLINE_ROOT": str(ROOT), **extra}
    for name in ("DATA", "CONFIG", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = os.path.join(tmp, name.lower())
        os.makedirs(env[f"XDG_{name}_HOME"], exist_ok=True)
    return env


def child(tmp: str, config: dict[str, Any], *extra_argv: str, **extra_env: str) -> Any:
    """An embedded headless Neovim in tmp's XDG dirs whose init.lua calls setup(config),
    as the README says (tests/child.py)."""
    env = child_env(tmp, **extra_env)
    return _child.start(config, env, extra_argv=extra_argv, init_dir=env["XDG_CONFIG_HOME"])


def wait(pred: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.002)
    raise TimeoutError
