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
    assert found == ["claude-sonnet-4", "gpt-4.1", "o3-mini"]  # not o3 (disabled by policy)
    nv.command("Sightline model")
    (note,) = [said(nv, n["msg"]) for n in taken()]
    assert note == (
        "sightline: model gpt-4.1; models: claude-sonnet-4 (1x), gpt-4.1 (0x), o3-mini (0x)"
    )
    nv.command("Sightline model claude-sonnet-4")
    gh.script(fo.text("from claude"))
    send(nv, "hi")
    idle(nv)
    assert gh.chats()[0].body["model"] == "claude-sonnet-4"


def test_stop_cancels_a_sign_in_that_waits_and_nothing_is_stored(
    nvim_factory: Any, gh: FakeCopilot, isolated_env: Path
) -> None:
    nv = copilot(nvim_factory, gh)
    gh.pending_polls = 10**6  # the user never enters the code
    nv.input(":Sightline login copilot<CR>")
    wait_for(lambda: shown(nv, "enter the code WDJB-MJHT"), TURN_TIMEOUT_S, "the code")
    wait_for(lambda: gh.polls >= 2, TURN_TIMEOUT_S, "GitHub polled")
    taken = capture_notify(nv)
    nv.input("<Esc>:Sightline stop<CR>")
    wait_for(lambda: shown(nv, "The Copilot sign-in was cancelled"), TURN_TIMEOUT_S, "cancelled")
    assert shown(nv, "nothing was stored")
    assert taken() == []  # no "no turn is running": the stop ended the sign-in
    polls = gh.polls
    # Polling has ended: GitHub's interval (10 ms) passes many times with no new poll, and
    # a new sign-in can start at once (the old one is over).
    gh.pending_polls = 0
    nv.input("<Esc>:Sightline login copilot<CR>")
    wait_for(lambda: shown(nv, "✓ Signed in to GitHub Copilot"), TURN_TIMEOUT_S, "signed in")
    assert gh.polls == polls + 1  # only the new sign-in's one poll
    (stored,) = (isolated_env.parent / "xdg" / "data").rglob("oauth.json")
    assert len(json.loads(stored.read_text())) == 1


def signed_in(gh: FakeCopilot, isolated_env: Path) -> str:
    token = gh.grant()
    saved = isolated_env.parent / "xdg" / "config" / "github-copilot" / "hosts.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps({gh.base_url: {"oauth_token": token}}))
    return token


def png(path: Path, size: tuple[int, int] = (64, 48)) -> Path:
    from PIL import Image

    Image.new("RGB", size, "red").save(path, "PNG")
    return path


def typed(nv: Any, line: str) -> None:
    nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input(line.replace("<", "<lt>") + "<C-s>")


def image_urls(body: Any) -> list[str]:
    return [
        part["image_url"]["url"]
        for msg in body["messages"]
        if isinstance(msg.get("content"), list)
        for part in msg["content"]
        if part.get("type") == "image_url"
    ]


def test_an_image_goes_to_a_copilot_model_with_vision_and_is_refused_for_one_without(
    nvim_factory: Any, gh: FakeCopilot, isolated_env: Path
) -> None:
    signed_in(gh, isolated_env)
    png(isolated_env / "shot.png")
    nv = copilot(nvim_factory, gh)
    gh.script(fo.text("A red rectangle."))
    typed(nv, "what is this @image:shot.png")
    idle(nv)
    (chat,) = gh.chats()
    assert chat.headers["copilot-vision-request"] == "true"
    (url,) = image_urls(chat.body)
    assert url.startswith("data:image/png;base64,iVBOR")
    assert shown(nv, "A red rectangle.")
    # o3-mini: the model list says no vision (sightline's table would say yes, as for o3).
    wait_for(
        lambda: "o3-mini" in nv.call("getcompletion", "Sightline model ", "cmdline"),
        TURN_TIMEOUT_S,
        "the model list",
    )
    nv.input("<Esc>:Sightline model o3-mini<CR>")
    wait_for(lambda: status(nv)["model"] == "o3-mini", what="the model chosen")
    taken = capture_notify(nv)
    typed(nv, "and this @image:shot.png")
    wait_for(taken, TURN_TIMEOUT_S, "the refusal")
    msg = said(nv, taken()[0]["msg"])
    assert "copilot o3-mini cannot look at images" in msg and "nothing was sent" in msg
    assert len(gh.chats()) == 1 and status(nv)["state"] == "idle"
    # The composer still holds the message, to edit: the user takes the image out.
    assert nv.api.get_current_line() == "and this @image:shot.png"
    nv.input("<Esc>ggdG")
    # The conversation goes on with o3-mini: the earlier image is left out, said in a line.
    gh.script(fo.text("Text only."))
    typed(nv, "describe it in words")
    idle(nv)
    second = gh.chats()[1]
    assert image_urls(second.body) == [] and "copilot-vision-request" not in second.headers
    assert "[an earlier image, left out: not sent]" in json.dumps(second.body)
    assert shown(nv, "Text only.")
