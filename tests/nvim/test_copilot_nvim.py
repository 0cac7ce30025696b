"""The copilot provider as a new user meets it: a child Neovim set up as the README says
(`provider = { name = 'copilot', host = … }`), `:Sightline login copilot` typed, the pane
showing the code and the address, GitHub's device flow and Copilot's chat API on the
loopback fake; then a streamed reply and a tool call through the gate. No token is ever in
the transcript, the history, the log or the status."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import fakeopenai as fo
from tests.agent_util import TURN_TIMEOUT_S, decide, idle, lines, send, wait_pending
from tests.conftest import capture_notify, said, status, transcript, wait_for
from tests.fakecopilot import FakeCopilot


@pytest.fixture
def gh() -> Iterator[FakeCopilot]:
    with FakeCopilot() as server:
        yield server
    assert not server.errors, server.errors


def copilot(nvim_factory: Any, gh: FakeCopilot) -> Any:
    return nvim_factory({"provider": {"name": "copilot", "host": gh.base_url, "retries": 0}})


def shown(nv: Any, words: str) -> bool:
    return any(words in line for line in transcript(nv))


def test_a_new_user_signs_in_by_the_device_flow_then_chats_and_edits(
    nvim_factory: Any, gh: FakeCopilot, isolated_env: Path
) -> None:
    path = isolated_env / "app.py"
    path.write_text("x = 1\ny = 2\n")
    nv = copilot(nvim_factory, gh)
    nv.command(f"edit {path}")
    buf = nv.api.get_current_buf().number
    gh.pending_polls = 2
    nv.input(":Sightline login copilot<CR>")
    wait_for(lambda: shown(nv, "enter the code WDJB-MJHT"), TURN_TIMEOUT_S, "the code")
    assert shown(nv, f"open {gh.base_url}/login/device")
    wait_for(lambda: shown(nv, "✓ Signed in to GitHub Copilot"), TURN_TIMEOUT_S, "signed in")
    (stored,) = (isolated_env.parent / "xdg" / "data").rglob("oauth.json")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    oauth = json.loads(stored.read_text())[gh.base_url]["oauth_token"]
    assert oauth in gh.oauth_tokens

    gh.script(fo.text("Hello from Copilot."))
    send(nv, "hello")
    idle(nv)
    assert shown(nv, "Hello from Copilot.")
    st = status(nv)
    assert st["provider"] == "copilot" and st["model"] == "gpt-4.1"
    # Billed by the plan's premium requests, not by tokens: no dollar figure is made up.
    assert st["tokens"]["output"] > 0 and st.get("cost") is None

    gh.script(
        fo.tool_call("read_file", {"path": "app.py"}),
        fo.tool_call(
            "propose_edit", {"path": "app.py", "old_string": "y = 2", "new_string": "y = 3"}
        ),
        fo.text("Done."),
    )
    send(nv, "change y")
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    assert lines(nv, buf) == ["x = 1", "y = 3"]
    api_tokens = {r.headers["authorization"][7:] for r in gh.chats()}
    seen = "\n".join(transcript(nv)) + json.dumps(status(nv))
    on_disk = "".join(
        p.read_text(errors="replace")
        for p in (isolated_env.parent / "xdg").rglob("*")
        if p.is_file() and p != stored
    )
    for secret in {oauth, *api_tokens}:
        assert secret not in seen and secret not in on_disk


def test_login_without_copilot_says_what_to_do(nvim_factory: Any, gh: FakeCopilot) -> None:
    nv = copilot(nvim_factory, gh)
    ok, err = nv.exec_lua(
        "return {require('sightline.commands').subcommands.login.run({'openai'}, {})}"
    )
    assert ok is None and "only copilot signs in" in err
    gh.script(fo.text("never"))
    send(nv, "hello")
    idle(nv)
    assert shown(nv, "Not signed in to GitHub Copilot") and shown(nv, ":Sightline login copilot")
    assert gh.chats() == []


def test_checkhealth_says_whether_and_where_the_user_is_signed_in(
    nvim_factory: Any, gh: FakeCopilot, isolated_env: Path
) -> None:
    nv = copilot(nvim_factory, gh)
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert f"not signed in to GitHub Copilot on {gh.base_url}" in text
    assert "run :Sightline login copilot" in text
    token = gh.grant()
    saved = isolated_env.parent / "xdg" / "config" / "github-copilot" / "apps.json"
    saved.parent.mkdir(parents=True)
    key = f"{gh.base_url}:Iv1.b507a08c87ecfe98"
    saved.write_text(json.dumps({key: {"user": "octo", "oauth_token": token}}))
    nv.command("checkhealth sightline")
    text = "\n".join(nv.api.buf_get_lines(0, 0, -1, False))
    assert f"signed in to GitHub Copilot on {gh.base_url}: copilot.vim's apps.json" in text
    assert f"endpoint {gh.base_url} accepts connections" in text
    assert token not in text


def test_model_lists_the_multipliers_and_completes_the_names(
    nvim_factory: Any, gh: FakeCopilot, isolated_env: Path
) -> None:
    token = gh.grant()
    saved = isolated_env.parent / "xdg" / "config" / "github-copilot" / "hosts.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps({gh.base_url: {"oauth_token": token}}))
    nv = copilot(nvim_factory, gh)
    nv.command("set columns=200")
    taken = capture_notify(nv)
    found = wait_for(
        lambda: (
            "claude" in "".join(c := nv.call("getcompletion", "Sightline model ", "cmdline")) and c
        ),
        TURN_TIMEOUT_S,
        "the model list",
    )
    assert found == ["claude-sonnet-4", "gpt-4.1"]  # not o3 (disabled by policy)
    nv.command("Sightline model")
    (note,) = [said(nv, n["msg"]) for n in taken()]
    assert note == "sightline: model gpt-4.1; models: claude-sonnet-4 (1x), gpt-4.1 (0x)"
    nv.command("Sightline model claude-sonnet-4")
    gh.script(fo.text("from claude"))
    send(nv, "hi")
    idle(nv)
    assert gh.chats()[0].body["model"] == "claude-sonnet-4"
