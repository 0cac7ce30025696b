"""The published Codex adapter end to end: `@zed-industries/codex-acp` from npm (pinned, its
linux-x64 binary; tests/acp_adapters.py) behind the pane of a child Neovim configured as the
README says (`agent = 'codex'`), its model the loopback Responses fake (tests/fakeresponses.py)
through CODEX_HOME's config.toml. Nothing reaches the network.

With its model provider set in config.toml (the key from `env_key`) codex-acp 0.16 starts a
session without `authenticate` (that step is tested with the scripted agent, as the successor
adapter needs it); it starts in its `read-only` mode, which asks before any edit: its
apply_patch is asked through the gate with the whole file's diff, allowed, applied by Codex,
and the buffer shows it; plan mode keeps the read-only mode and refuses the edit (which ends
Codex's turn); its model is switched with :Sightline model; stop cancels; Change with Agent is
refused; a conversation reopened by a new core resumes its session (session/load).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acp_adapters import FOREIGN_ENV, codex_env
from tests.agent_util import core_status, decide, edit, lines, send
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


def codex_nvim(nvim_factory: Any, api: FakeResponses, tmp_path: Path) -> Any:
    env = codex_env(tmp_path, api.base_url, KEY)
    return nvim_factory({"provider": {"name": "acp", "agent": "codex"}}, env)


def last_output(api: FakeResponses) -> str:
    """What the model was told of its last tool call (the last request's last input item)."""
    item = api.responses()[-1].body["input"][-1]
    return str(item.get("output", ""))


def test_codex_logs_in_streams_asks_for_its_patch_and_the_buffer_shows_it(
    nvim_factory: Any, codex_api: FakeResponses, isolated_env: Path, tmp_path: Path
) -> None:
    app = isolated_env / "app.py"
    app.write_text(APP)
    codex_api.script(
        reply(text("Let me fix the sum."), custom("apply_patch", PATCH)),
        reply(text("Done: the sum starts at 0.")),
    )
    nv = codex_nvim(nvim_factory, codex_api, tmp_path)
    buf = edit(nv, app)
    send(nv, "make the sum start at 0")

    st = pending_for(nv)
    assert st["pending"].startswith("allow Edit"), st
    assert core_status(nv)["agent_mode"]["id"] == "read-only"
    shown = "\n".join(transcript(nv))
    assert "Let me fix the sum." in shown and "+    return sum(xs, 0)" in shown
    decide(nv, "accept")
    idle_for(nv)

    shown = "\n".join(transcript(nv))
    assert "Done: the sum starts at 0." in shown
    assert app.read_text() == APP.replace("sum(xs)", "sum(xs, 0)")  # Codex applied it
    wait_for(lambda: lines(nv, buf) == app.read_text().splitlines(), 10, "the buffer refreshed")
    assert "review gate" not in shown and "without asking" not in shown, shown
    assert "Success" in last_output(codex_api)
    bodies = [json.dumps(r.body) for r in codex_api.responses()]
    assert KEY not in shown and all(KEY not in b for b in bodies)
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in codex_api.responses())


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
