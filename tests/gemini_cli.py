"""The real Gemini CLI from npm, pinned, installed once into the git-ignored tests/.npm, and
an isolated home for it that reaches nothing but the loopback fake (tests/fakegemini.py).

The registry is needed the first time only (`make pytest` installs it beforehand, as for the
MCP "everything" server); afterwards the CLI runs offline. Its own prefix (the version in the
directory name) keeps it apart from the other npm packages of the tests, so installing one
never prunes another, and a version bump installs afresh.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp_servers.npm import CACHE, npm_installed

VERSION = "0.61.0"
PACKAGE = f"@google/gemini-cli@{VERSION}"
PREFIX = CACHE / f"gemini-cli-{VERSION}"
BIN_DIR = PREFIX / "node_modules" / ".bin"
GEMINI_BIN = BIN_DIR / "gemini"
# The model the CLI is told to use: a fixed one, so it does not first ask a router model.
MODEL = "gemini-2.5-flash"

# What a user's ~/.gemini/settings.json would say for API-key auth, with everything that
# would reach the network other than the model API switched off. Folder trust stays on, as
# for a user: the workspace is trusted the way `gemini` records it (trustedFolders.json).
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "model": {"name": MODEL},
}

# The user's own Google credentials and settings must not reach the agent under test.
FOREIGN_ENV = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GEMINI_MODEL",
    "GEMINI_CLI_HOME",
    "GEMINI_SANDBOX",
)


def gemini_bin_dir() -> Path:
    """The directory holding the `gemini` command, installed if need be."""
    return npm_installed(PREFIX, PACKAGE, GEMINI_BIN).parent


def gemini_home(root: Path, trusted: Path | None) -> Path:
    """A fresh home with only the settings above and, when given, one trusted folder (the CLI
    starts stdio MCP servers, sightline's among them, only in a trusted folder)."""
    home = root / "gemini-home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    folders = {str(trusted): "TRUST_FOLDER"} if trusted is not None else {}
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(folders))
    return home
