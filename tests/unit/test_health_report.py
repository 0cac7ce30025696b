"""sightline.entry.health: what :checkhealth is told about the core's interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sightline.domain import presets
from sightline.entry import health

ROOT = Path(__file__).resolve().parents[2]


def needed(provider: str, mcp: bool = False) -> set[str]:
    return {p["dist"] for p in health.report(provider, mcp)["packages"] if p["needed"]}


@pytest.mark.parametrize(
    ("provider", "extra"),
    [
        ("anthropic", {"anthropic"}),
        ("openai", {"openai"}),
        ("ollama", {"openai"}),
        ("openrouter", {"openai"}),
        ("acp", {"agent-client-protocol"}),
        ("echo", set()),
    ],
)
def test_each_provider_needs_the_core_and_its_own_sdk(provider: str, extra: set[str]) -> None:
    assert needed(provider) == {"pynvim", "msgpack", "platformdirs", "pyyaml", *extra}
    assert "mcp" in needed(provider, mcp=True)


def test_every_dependency_of_the_package_is_checked() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    checked = {p.dist for p in health.PACKAGES}
    for line in deps.splitlines():
        name = line.strip().strip('",').split(">")[0].split("<")[0].split("=")[0]
        if name and not name.startswith("#") and name != "pydantic":  # pydantic: acp's and mcp's
            assert name in checked, name


def test_the_key_is_never_in_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, preset in presets.PRESETS.items():
        if preset.key_env:
            monkeypatch.setenv(preset.key_env, "sk-SECRET-value")
            found = {"needs_key": True, "env": preset.key_env, "set": True}
            assert health.key_source(name) == found
    assert "SECRET" not in json.dumps(health.report("openai", False))
    assert health.key_source("ollama") == {"needs_key": False}


def test_runs_as_a_module_and_prints_one_json_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sightline.entry.health", '{"provider": "echo"}'],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "python")},
    ).stdout
    info = json.loads(out)
    assert info["python"] and all(p["error"] == "" for p in info["packages"])
