"""A published MCP server from npm, installed once into tests/.npm (gitignored).

The tests need the npm registry the first time only (CI: `.ci/run` must have node ≥ 18 and
npm, and reach registry.npmjs.org); afterwards everything runs offline from the cache.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

CACHE = Path(__file__).resolve().parent.parent / ".npm"
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
EVERYTHING_BIN = CACHE / "node_modules" / ".bin" / "mcp-server-everything"
INSTALL_TIMEOUT_S = 600


def npm_installed(prefix: Path, package: str, binary: Path) -> Path:
    """`binary`, after `npm install --prefix prefix package` when it is missing. A missing npm
    or a failed install fails the test: it is never skipped."""
    CACHE.mkdir(exist_ok=True)
    with (CACHE / ".lock").open("w") as lock:  # parallel workers install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            npm = shutil.which("npm")
            if npm is None or shutil.which("node") is None:
                pytest.fail("node and npm are needed to install " + package)
            done = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", package],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_S,
                check=False,
            )
            if done.returncode != 0 or not binary.exists():
                pytest.fail(f"npm install {package} failed:\n{done.stderr[-2000:]}")
    return binary


def everything_server() -> list[str]:
    """The command line of the reference "everything" server (stdio), installed if need be."""
    return [str(npm_installed(CACHE, EVERYTHING, EVERYTHING_BIN)), "stdio"]
