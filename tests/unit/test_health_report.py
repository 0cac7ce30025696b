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
        ("gemini", {"google-genai"}),
        ("copilot", {"openai"}),
        ("echo", set()),
    ],
)
def test_each_provider_needs_the_core_and_its_own_sdk(provider: str, extra: set[str]) -> None:
    assert needed(provider) == {"pynvim", "msgpack", "platformdirs", *extra}
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


def test_gemini_names_the_variable_its_key_is_in_and_whether_the_endpoint_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-SECRET-value")
    assert health.key_source("gemini") == {"needs_key": True, "env": "GOOGLE_API_KEY", "set": True}
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        out = health.report("gemini", False, f"http://127.0.0.1:{port}", reach=True)
        assert out["endpoint"] == {"address": f"127.0.0.1:{port}", "reachable": True, "error": ""}
    closed = health.endpoint("gemini", f"http://127.0.0.1:{port}")
    assert closed is not None and not closed["reachable"] and closed["error"]
    assert "SECRET" not in json.dumps(out)


def test_copilot_says_where_its_sign_in_is_never_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert health.signin("github.example.com") == {
        "needs_key": False,
        "signin": [],
        "host": "github.example.com",
    }
    import socket

    with socket.socket() as listening:  # the host's API, on loopback
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        host = f"http://127.0.0.1:{listening.getsockname()[1]}"
        saved = tmp_path / "config" / "github-copilot" / "hosts.json"
        saved.parent.mkdir(parents=True)
        saved.write_text(json.dumps({host: {"oauth_token": "gho_SECRET_token"}}))
        out = health.report("copilot", False, host=host, reach=True)
    assert out["key"]["signin"] == [f"copilot.vim's hosts.json ({saved})"]
    assert out["endpoint"]["reachable"] and out["endpoint"]["address"] == host[7:]
    assert "SECRET" not in json.dumps(out)


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
