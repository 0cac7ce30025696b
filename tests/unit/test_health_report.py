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
    core = {"pynvim", "msgpack", "platformdirs", "tree-sitter", "tree-sitter-bash", "pyyaml"}
    assert needed(provider) == {*core, *extra}
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
        if preset.key_env and preset.needs_key:
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
        out = health.report("gemini", False, {"base_url": f"http://127.0.0.1:{port}"})
        assert out["endpoint"]["ok"] and out["endpoint"]["address"] == f"127.0.0.1:{port}"
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
        out = health.report("copilot", False, {"host": host})
    assert out["key"]["signin"] == [f"copilot.vim's hosts.json ({saved})"]
    assert out["endpoint"]["ok"] and out["endpoint"]["address"] == host[7:]
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


@pytest.mark.parametrize(
    ("provider", "extra"),
    [
        ("bedrock", {"anthropic", "boto3", "botocore"}),
        ("vertex", {"anthropic", "google-auth", "requests"}),
        ("azure", {"openai"}),
        ("mistral", {"openai"}),
        ("llamacpp", {"openai"}),
    ],
)
def test_each_new_provider_needs_its_sdk_and_its_extra(provider: str, extra: set[str]) -> None:
    core = {"pynvim", "msgpack", "platformdirs", "tree-sitter", "tree-sitter-bash", "pyyaml"}
    assert needed(provider) == {*core, *extra}


def test_a_missing_extra_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # as if not installed
    (boto3,) = [p for p in health.report("bedrock", False)["packages"] if p["dist"] == "boto3"]
    assert boto3["needed"] and boto3["error"] and boto3["extra"] == "bedrock"


def test_cloud_credentials_say_where_from_never_the_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDHEALTH")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "health-hidden-aws-value")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    report = health.report("bedrock", False, {"base_url": "http://127.0.0.1:9"})
    assert report["credentials"] == {
        "from": "$AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY, region eu-west-1"
    }
    assert "health-hidden-aws-value" not in json.dumps(report)
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    assert health.credentials("bedrock", {}) == {
        "error": "no AWS region: set provider.region or $AWS_REGION"
    }
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "health-SECRET-azure")
    monkeypatch.delenv("AZURE_OPENAI_AD_TOKEN", raising=False)
    cfg = {"base_url": "http://127.0.0.1:9", "deployment": "d"}
    assert health.credentials("azure", cfg) == {"from": "$AZURE_OPENAI_API_KEY"}
    assert health.credentials("azure", {**cfg, "entra_token_cmd": True}) == {
        "from": "provider.entra_token_cmd (a Microsoft Entra ID token)"
    }
    assert health.credentials("openai", {}) is None


def test_the_endpoint_is_tried_only_where_it_is_the_users_own() -> None:
    from tests.fakeopenai import FakeOpenAI

    with FakeOpenAI() as server:
        live = health.report("mistral", False, {"base_url": server.base_url})["endpoint"]
    assert live["ok"] and live["url"] == server.base_url
    gone = health.report("mistral", False, {"base_url": server.base_url})["endpoint"]
    assert not gone["ok"] and gone["error"]
    # A hosted default is not dialled from a health check; a local server's default is.
    assert health.endpoint("mistral", {}) is None
    assert health.endpoint("lmstudio", {}) == "http://localhost:1234/v1"


def test_an_extra_is_not_checked_for_a_provider_that_does_not_use_it() -> None:
    listed = {p["dist"] for p in health.report("anthropic", False)["packages"]}
    assert "anthropic" in listed and not listed & {"boto3", "botocore", "google-auth"}


def test_vertex_credentials_name_the_key_file_region_and_project(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "sa.json"
    key_file.write_text(json.dumps({"type": "service_account", "project_id": "proj-h"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID", raising=False)
    assert health.credentials("vertex", {"region": "us-east5"}) == {
        "from": f"$GOOGLE_APPLICATION_CREDENTIALS ({key_file}), region us-east5, project proj-h"
    }
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    said = health.credentials("vertex", {"region": "us-east5"})
    assert said is not None and "names no file" in said["error"]
