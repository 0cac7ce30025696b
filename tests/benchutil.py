"""What the benchmarks share: a child Neovim with isolated dirs, and polling."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NVIM = str(Path(sys.executable).parent / "nvim")


def child_env(tmp: str, config: dict[str, Any], **extra: str) -> dict[str, str]:
    """Environment for a child Neovim: the plugin, `config` as g:sightline, XDG dirs in tmp."""
    cfg = {"python": sys.executable, **config}
    env = {"SIGHTLINE_ROOT": str(ROOT), "SIGHTLINE_TEST_CONFIG": json.dumps(cfg), **extra}
    for name in ("DATA", "CONFIG", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = os.path.join(tmp, name.lower())
    return env


def child(env: dict[str, str]) -> Any:
    """An embedded headless Neovim with the plugin (tests/minimal_init.lua)."""
    import pynvim

    old = dict(os.environ)
    os.environ.update(env)
    try:
        init = str(ROOT / "tests" / "minimal_init.lua")
        argv = [NVIM, "--embed", "--headless", "-n", "-i", "NONE", "-u", init]
        return pynvim.attach("child", argv=argv)
    finally:
        os.environ.clear()
        os.environ.update(old)


def wait(pred: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.002)
    raise TimeoutError
