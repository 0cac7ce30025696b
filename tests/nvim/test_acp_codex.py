"""The published Codex adapter end to end: `@zed-industries/codex-acp` from npm (pinned, its
linux-x64 binary; tests/acp_adapters.py) behind the pane of a child Neovim configured as the
README says (`agent = 'codex'`), its model the loopback Responses fake (tests/fakeresponses.py)
through CODEX_HOME's config.toml. Nothing reaches the network.

With its model provider set in config.toml (the key from `env_key`) codex-acp 0.16 starts a
session without `authenticate`; with none (only `openai_base_url`, the built-in OpenAI
provider) it requires it, and sightline authenticates with the OPENAI_API_KEY method it
advertises. It starts in its `read-only` mode, which asks before any edit: its apply_patch's
permission carries the patch's hunks, reviewed hunk by hunk in the file's buffer; one hunk
taken, one rejected with a note: Codex is refused, the gate writes the hunk taken and Codex's
model is told which with the next message. Plan mode keeps the read-only mode and refuses the
edit (which ends Codex's turn); its model is switched with :Sightline model; stop cancels;
Change with Agent is refused; a conversation reopened by a new core resumes its session
(session/load).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_adapters import FOREIGN_ENV, codex_env
from tests.agent_util import core_status, edit, lines, send
from tests.conftest import status, transcript, wait_for
from tests.fakeresponses import FakeResponses, custom, hold, reply, text

pytestmark = pytest.mark.timeout(300)

KEY = "sk-openai-fake-codex-acp-7731"
AGENT_TIMEOUT_S = 90.0
APP = "def total(xs):\n    return sum(xs)\n"
PATCH = (
    "*** Begin Patch\n*** Update File: app.py\n@@\n"
    "-    return sum(xs)\n+    return sum(xs, 0)\n*** End Patch\n"
)


@pytest.fixture
def codex_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeResponses]:
    for var in FOREIGN_ENV:
        monkeypatch.delenv(var, raising=False)
    with FakeResponses(KEY) as server:
        yield server
        assert not server.errors, server.errors[0]


def idle_for(nv: Any) -> None:
    wait_for(lambda: status(nv)["state"] == "idle", AGENT_TIMEOUT_S, "the turn to end")


def pending_for(nv: Any) -> dict[str, Any]:
    got = wait_for(
        lambda: (st := status(nv))["state"] == "awaiting_decision" and st,
        AGENT_TIMEOUT_S,
        "a question in the gate",
    )
    return dict(got)


def codex_nvim(nvim_factory: Any, api: FakeResponses, tmp_path: Path, provider: bool = True) -> Any:
    env = codex_env(tmp_path, api.base_url, KEY, provider)
    return nvim_factory({"provider": {"name": "acp", "agent": "codex"}}, env)


TWO = APP + "\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
PATCH_TWO = (
    "*** Begin Patch\n*** Update File: app.py\n@@\n"
    "-    return sum(xs)\n+    return sum(xs, 0)\n@@\n"
    "-    return sum(xs) / len(xs)\n+    return sum(xs, 0) / max(1, len(xs))\n*** End Patch\n"
)
SHOWN = "return require('sightline.ui.inline').shown()"


def test_codex_streams_and_its_patch_is_reviewed_hunk_by_hunk_in_the_buffer(
    nvim_factory: Any, codex_api: FakeResponses, isolated_env: Path, tmp_path: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text(TWO)
    codex_api.script(
        reply(text("Let me fix the sums."), custom("apply_patch", PATCH_TWO)),
        reply(text("Understood: only the total changed.")),
    )
    nv = codex_nvim(nvim_factory, codex_api, tmp_path)
    buf = edit(nv, app)
    send(nv, "make the sums start at 0")

    # its permission's diff, drawn hunk by hunk in the buffer (codex-acp starts read-only)
    st = pending_for(nv)
    assert st["pending"] == "edit app.py (+2 −2)", st
    assert core_status(nv)["agent_mode"]["id"] == "read-only"
    drawn = wait_for(lambda: nv.exec_lua(SHOWN), 10, "the patch drawn in its buffer")
    assert drawn["buffer"] == buf and len(drawn["hunks"]) == 2, drawn
    assert "Let me fix the sums." in "\n".join(transcript(nv))
    # the first hunk taken, the second rejected with a note, by the buffer's hunk keys
    nv.exec_lua("vim.ui.input = function(_, cb) cb('keep the mean as is') end")
    nv.api.win_set_cursor(0, [2, 0])
    nv.input("\\ha")
    wait_for(lambda: nv.exec_lua(SHOWN)["hunks"][0].get("decided") == "accept", 10, "hunk 1")
    nv.api.win_set_cursor(0, [6, 0])
    nv.input("\\hw")
    idle_for(nv)

    # only what the user took is in the file, written by the gate (Codex was refused)
    taken = TWO.replace("return sum(xs)\n", "return sum(xs, 0)\n", 1)
    assert app.read_text() == taken
    assert lines(nv, buf) == taken.splitlines()
    assert not nv.api.buf_get_option(buf, "modified")
    shown = "\n".join(transcript(nv))
    assert "review gate" not in shown and "without asking" not in shown, shown
    # and Codex's model is told which hunks with the next message
    send(nv, "and now?")
    idle_for(nv)
    told = json.dumps(codex_api.responses()[-1].body["input"])
    assert "partly accepted" in told and "hunk 1" in told and "keep the mean as is" in told
    assert "Understood: only the total changed." in "\n".join(transcript(nv))
    bodies = [json.dumps(r.body) for r in codex_api.responses()]
    assert KEY not in shown and all(KEY not in b for b in bodies)
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in codex_api.responses())


def test_codex_without_a_provider_requires_a_login_and_is_authenticated_with_its_key(
    nvim_factory: Any,
    codex_api: FakeResponses,
    isolated_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    codex_api.script(reply(text("Logged in and answering.")))
    # No key anywhere: refused with each way to log in, nothing asked of the model API.
    env = codex_env(tmp_path / "nokey", codex_api.base_url, None, provider=False)
    nv = nvim_factory({"provider": {"name": "acp", "agent": "codex"}}, env)
    send(nv, "hi")
    idle_for(nv)
    said = wait_for(
        lambda: (s := "\n".join(transcript(nv))) and "needs you to log in" in s and s,
        AGENT_TIMEOUT_S,
        "the login refused",
    )
    assert "CODEX_API_KEY or OPENAI_API_KEY" in said and "Login with ChatGPT" in said, said
    assert not codex_api.responses()

    # The preset's key in the environment: sightline sends `authenticate` with Codex's
    # OPENAI_API_KEY method (Codex keeps the login in CODEX_HOME/auth.json, as `codex login`
    # does), and the turn reaches the Responses fake with that key.
    auth_file = tmp_path / "codex-home" / ".codex" / "auth.json"
    nv = codex_nvim(nvim_factory, codex_api, tmp_path, provider=False)
    assert not auth_file.exists()
    send(nv, "hi")
    idle_for(nv)
    shown = "\n".join(transcript(nv))
    assert "Logged in and answering." in shown and "log in" not in shown, shown
    assert json.loads(auth_file.read_text())["auth_mode"] == "apikey"  # the login happened
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in codex_api.responses())
    assert KEY not in shown


def test_codex_plan_mode_stop_scope_and_reopen(
    nvim_factory: Any, codex_api: FakeResponses, isolated_env: Path, tmp_path: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text(APP)
    codex_api.script(
        reply(text("I would change the sum."), custom("apply_patch", PATCH)),
        hold(text("a long answer that is stopped")),
        reply(text("Back again.")),
    )
    nv = codex_nvim(nvim_factory, codex_api, tmp_path)

    # plan mode: the read-only mode, and its edit refused without asking the user
    assert nv.exec_lua("return {require('sightline').plan('on')}") == [True]
    send(nv, "plan it")
    idle_for(nv)
    assert app.read_text() == APP
    shown = "\n".join(transcript(nv))
    # Codex's answer to a refused patch ("abort") ends its turn.
    assert "I would change the sum." in shown and "plan mode: nothing may change" in shown
    assert nv.exec_lua("return {require('sightline').plan('off')}") == [True]

    # its session options: shown, and its model switched at once by :Sightline model
    got = {o["category"]: o["value_name"] for o in core_status(nv)["agent_options"]}
    assert got["model"] and got["thought_level"], got
    models = nv.call("getcompletion", "Sightline model ", "cmdline")
    assert "gpt-5.4" in models, models
    nv.command("Sightline model gpt-5.4")
    got = {o["category"]: o["value"] for o in core_status(nv)["agent_options"]}
    assert got["model"] == "gpt-5.4", got

    # stop: the turn ends at once, the agent is told (session/cancel)
    send(nv, "go on")
    wait_for(lambda: codex_api.holding.is_set(), AGENT_TIMEOUT_S, "the reply streaming")
    assert codex_api.responses()[-1].body["model"] == "gpt-5.4"  # in the model chosen
    assert nv.exec_lua("return {require('sightline').stop()}") == [True]
    idle_for(nv)
    codex_api.release()
    wait_for(lambda: "■ Stopped." in transcript(nv), 10, "the stop said")

    # Change with Agent: refused, Codex applies its patches itself
    buf = edit(nv, app)
    rng = {"buffer": buf, "start_row": 0, "start_col": 0, "end_row": 1, "end_col": 10}
    res = nv.exec_lua("return {require('sightline').send(...)}", "fix", rng)
    assert res[0] is None and "writes files to disk itself" in res[1]

    # reopened by a new core (a new agent process): it resumes its session
    nv.command("Sightline restart")
    wait_for(lambda: "I would change" in "\n".join(transcript(nv)), 30, "the history shown")
    send(nv, "and now?")
    idle_for(nv)
    shown = "\n".join(transcript(nv))
    assert "Back again." in shown and "Resumed the agent's session" in shown, shown
    assert "plan it" in json.dumps(codex_api.responses()[-1].body["input"])
