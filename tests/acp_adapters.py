"""The published Claude and Codex ACP adapters from npm, pinned (the Makefile's CLAUDE_ACP and
CODEX_ACP), installed once into the git-ignored tests/.npm, and what a user of each preset
has — the command on PATH, a key — with a home of its own and the loopback fake of its model
API in place of the real one. Nothing reaches the network.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.mcp_servers.npm import CACHE, npm_installed

CLAUDE_VERSION = "0.23.1"
CLAUDE_PACKAGE = f"@zed-industries/claude-agent-acp@{CLAUDE_VERSION}"
CLAUDE_PREFIX = CACHE / f"claude-agent-acp-{CLAUDE_VERSION}"
CLAUDE_BIN = CLAUDE_PREFIX / "node_modules" / ".bin" / "claude-agent-acp"

CODEX_VERSION = "0.16.0"
CODEX_PACKAGE = f"@zed-industries/codex-acp@{CODEX_VERSION}"
CODEX_PREFIX = CACHE / f"codex-acp-{CODEX_VERSION}"
CODEX_BIN = CODEX_PREFIX / "node_modules" / ".bin" / "codex-acp"

# What the user's own machine could hand the agents and must not here: their settings and
# credentials, and IS_SANDBOX, with which the Claude adapter (as root) offers
# bypassPermissions and Claude Code then refuses to start as root.
FOREIGN_ENV = (
    "IS_SANDBOX",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "CODEX_HOME",
    "CODEX_API_KEY",
    "OPENAI_BASE_URL",
)
# Claude Code's own traffic besides the model API (telemetry, update checks): off, as a user
# who wants none would set it.
QUIET_CLAUDE = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}


def _path_with(binary: Path) -> str:
    return f"{binary.parent}{os.pathsep}{os.environ['PATH']}"


def claude_env(root: Path, base_url: str, key: str) -> dict[str, str]:
    """The `claude` preset's user: `claude-agent-acp` on PATH, ANTHROPIC_API_KEY, a fresh home;
    ANTHROPIC_BASE_URL at the loopback Messages fake."""
    binary = npm_installed(CLAUDE_PREFIX, CLAUDE_PACKAGE, CLAUDE_BIN)
    home = root / "claude-home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": _path_with(binary),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": key,
        "ANTHROPIC_BASE_URL": base_url,
        **QUIET_CLAUDE,
    }


def codex_env(root: Path, base_url: str, key: str | None, provider: bool = True) -> dict[str, str]:
    """The `codex` preset's user: `codex-acp` on PATH, OPENAI_API_KEY (unless `key` is None), a
    fresh CODEX_HOME whose config.toml points the model API at the loopback Responses fake:
    with `provider`, a model provider of its own reading the key from `env_key` (Codex then
    needs no login); without, only the built-in OpenAI provider's `openai_base_url` (Codex
    then requires the protocol's `authenticate` before session/new, as with the real API).
    TMPDIR is moved off /tmp: Codex refuses to set up its sandbox helper under the temporary
    directory, where a test's home would otherwise be."""
    binary = npm_installed(CODEX_PREFIX, CODEX_PACKAGE, CODEX_BIN)
    home = root / "codex-home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    if provider:
        config = (
            'model_provider = "fake"\n'
            "[model_providers.fake]\n"
            'name = "fake"\n'
            f'base_url = "{base_url}"\n'
            'env_key = "OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
        )
    else:
        config = f'openai_base_url = "{base_url}"\n'
    (codex_home / "config.toml").write_text(config)
    tmp = root / "tmp"
    tmp.mkdir(exist_ok=True)
    return {
        "PATH": _path_with(binary),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TMPDIR": str(tmp),
        **({"OPENAI_API_KEY": key} if key is not None else {}),
    }
