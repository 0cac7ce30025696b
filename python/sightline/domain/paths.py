"""Where sightline keeps its data (platformdirs), looked up at call time so tests can isolate."""

from __future__ import annotations

from pathlib import Path

import platformdirs


def data_dir() -> Path:
    return Path(platformdirs.user_data_dir("sightline", appauthor=False))


def config_dir() -> Path:
    return Path(platformdirs.user_config_dir("sightline", appauthor=False))


def log_dir() -> Path:
    return Path(platformdirs.user_log_dir("sightline", appauthor=False))


def history_dir() -> Path:
    return data_dir() / "history"


def approvals_dir() -> Path:
    """Kept approvals, one file per workspace (gate/approvals.py): never in a workspace."""
    return data_dir() / "approvals"
