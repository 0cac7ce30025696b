"""`sightline ask "…"`: one turn from the command line, as a real process, with echo and
against the loopback Messages server; mentions resolve as in the pane."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sightline.domain import extensions
from tests.extensions_util import make_extension
from tests.fakeapi import FakeAnthropic, fake_api, http_error, text

__all__ = ["fake_api"]

from tests.child import ROOT


def sightline(
    workspace: Path, *argv: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "sightline", "ask", *argv],
        cwd=workspace,
        env=full_env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_echo_without_a_key(isolated_env: Path) -> None:
    done = sightline(isolated_env, "what", "is", "@ext:none?")
    assert (done.returncode, done.stdout, done.stderr) == (0, "echo: what is @ext:none?\n", "")


def test_streams_the_reply_with_mention_context(
    isolated_env: Path, tmp_path: Path, fake_api: FakeAnthropic
) -> None:
    extensions.install(make_extension(tmp_path / "src", "browser-tools", "Browser helpers"))
    (isolated_env / "notes.md").write_text("remember\n")
    fake_api.script(text("The answer, streamed.", chunks=4))
    env = {"ANTHROPIC_API_KEY": "k-test", "ANTHROPIC_BASE_URL": fake_api.base_url}
    typed = "explain @ext:browser-tools and @notes.md, @ext:browser-tools"
    done = sightline(isolated_env, typed, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "The answer, streamed.\n", "")
    (req,) = fake_api.requests
    assert "tools" not in req.body
    assert str(isolated_env) in req.body["system"][0]["text"]
    (message,) = req.body["messages"]
    first, ext_part, file_part = (p["text"] for p in message["content"])
    assert first == typed
    assert ext_part.startswith('<extension name="browser-tools">')
    assert "browser-tools knows things." in ext_part
    assert file_part == '<file path="notes.md">\nremember\n</file>'


def test_provider_errors_exit_1_with_one_line(isolated_env: Path, fake_api: FakeAnthropic) -> None:
    fake_api.script(http_error(401))
    env = {"ANTHROPIC_API_KEY": "k-test", "ANTHROPIC_BASE_URL": fake_api.base_url}
    done = sightline(isolated_env, "hi", env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("sightline: Authentication failed (401)")
    assert done.stderr.count("\n") == 1


def test_provider_flag_and_stdin(isolated_env: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "k-test"}
    done = sightline(isolated_env, "--provider", "echo", "-", env=env, stdin="from stdin")
    assert (done.returncode, done.stdout) == (0, "echo: from stdin\n")
    done = sightline(isolated_env, " ")
    assert done.returncode == 1
    assert done.stderr == "sightline: nothing to ask: the message is empty\n"
