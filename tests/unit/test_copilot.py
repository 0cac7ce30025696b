"""The copilot provider through the real openai SDK against the loopback GitHub/Copilot
fake: the device flow, a saved copilot.vim sign-in, the API token renewed before it expires
(mid-conversation) and after the server refused it, Copilot's headers, models with their
multipliers, errors in the user's words, tokens never shown; any history maps to a
request the API accepts."""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sightline.domain import images, secrets
from sightline.domain.wire import wire_messages
from sightline.providers import copilot_auth, make_provider
from sightline.providers.base import Notice, ProviderError, Reply, Request, Retrying
from sightline.providers.copilot_api import CopilotProvider, initiator
from sightline.providers.openai_api import chat_request
from tests import fakeopenai as fo
from tests.effective_config import provider_config
from tests.fakecopilot import FakeCopilot
from tests.fakeopenai import validation_error
from tests.history_strategies import PROMPT, RECORD, turns


class Clock:
    """The one clock of the fake and the provider's token keeper, moved by the test."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gh(clock: Clock, isolated: Path) -> Iterator[FakeCopilot]:
    with FakeCopilot(clock=clock) as server:
        yield server
    assert not server.errors, "fake Copilot crashed:\n" + "\n".join(server.errors)


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("DATA", "CONFIG"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    return tmp_path


def provider(gh: FakeCopilot, clock: Clock, **kw: Any) -> CopilotProvider:
    p = make_provider(provider_config(name="copilot", host=gh.base_url, **kw))
    assert isinstance(p, CopilotProvider)
    p.keeper.clock = clock
    return p


def ask(text: str = "hi") -> Request:
    return Request("sys", [{"role": "user", "content": [{"type": "text", "text": text}]}], [])


def run(p: Any, request: Request | None = None) -> list[Any]:
    return list(p.stream(request or ask(), lambda: False))


def pause(seconds: float) -> bool:
    """The poll's wait: GitHub's interval (the fake's is 10 ms), never cancelled."""
    time.sleep(seconds)
    return False


def save_copilot_vim(gh: FakeCopilot, name: str = "apps.json") -> str:
    """A sign-in as copilot.vim / copilot.lua keep it."""
    token = gh.grant()
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "github-copilot"
    folder.mkdir(parents=True)
    key = f"{gh.base_url}:{copilot_auth.CLIENT_ID}" if name == "apps.json" else gh.base_url
    (folder / name).write_text(json.dumps({key: {"user": "octo", "oauth_token": token}}))
    return token


def test_the_device_flow_signs_in_and_keeps_the_token_for_the_user_only(
    gh: FakeCopilot, clock: Clock
) -> None:
    host = copilot_auth.Host.of(gh.base_url)
    gh.pending_polls, gh.slow_down = 2, True
    code = copilot_auth.start_device_flow(host)
    assert code.user_code == "WDJB-MJHT" and code.verification_uri.endswith("/login/device")
    token = copilot_auth.poll_device_flow(host, code, pause)
    assert gh.polls == 4  # slow_down, pending, pending, granted
    path = copilot_auth.store_oauth_token(host, token)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert secrets.redact(f"t={token}") == "t=[REDACTED]"
    gh.script(fo.text("signed in"))
    assert run(provider(gh, clock))[-1].content[0]["text"] == "signed in"
    assert gh.exchanges == [token]


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("deny", "declined on GitHub"),
        ("expire", "expired before it was entered"),
    ],
)
def test_a_sign_in_that_fails_says_why(gh: FakeCopilot, setup: str, words: str) -> None:
    host = copilot_auth.Host.of(gh.base_url)
    gh.deny = setup == "deny"
    code = copilot_auth.start_device_flow(host)
    if setup == "expire":
        code = copilot_auth.DeviceCode(code.device_code, code.user_code, "u", 0.01, 0.05)
        gh.pending_polls = 1000
    with pytest.raises(ProviderError, match=words):
        copilot_auth.poll_device_flow(host, code, pause)
    assert not copilot_auth.store_path().exists()


@pytest.mark.parametrize("name", ["apps.json", "hosts.json"])
def test_copilot_vims_saved_sign_in_is_used(gh: FakeCopilot, clock: Clock, name: str) -> None:
    token = save_copilot_vim(gh, name)
    gh.script(fo.text("reused"))
    p = provider(gh, clock)
    assert run(p)[-1].content[0]["text"] == "reused"
    assert gh.exchanges == [token] and p.keeper.where == f"copilot.vim's {name}"


def test_without_any_sign_in_the_user_is_told_how(gh: FakeCopilot, clock: Clock) -> None:
    with pytest.raises(ProviderError) as err:
        provider(gh, clock).prepare()
    assert ":Sightline login copilot" in err.value.message and gh.exchanges == []


def test_copilots_headers_and_who_started_the_request(gh: FakeCopilot, clock: Clock) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock)
    answered = Request(
        "sys",
        wire_messages(
            [
                PROMPT,
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "c1", "name": "grep", "input": {}}],
                },
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x"}],
                },
            ]
        ),
        [{"name": "grep", "input_schema": {"type": "object"}}],
    )
    run(p)
    run(p, answered)
    first, second = gh.chats()
    assert first.headers["copilot-integration-id"] == "vscode-chat"
    assert first.headers["editor-version"].startswith("Neovim/")
    assert first.headers["authorization"].startswith("Bearer tid=")
    assert [first.headers["x-initiator"], second.headers["x-initiator"]] == ["user", "agent"]
    assert initiator(ask()) == "user"
    assert first.body["model"] == "gpt-4.1" and "max_tokens" in first.body


def test_the_api_token_is_renewed_before_it_expires_mid_conversation(
    gh: FakeCopilot, clock: Clock
) -> None:
    """A conversation longer than one token: the keeper exchanges again before the token
    would expire, so no request is ever refused (the fake 401s an expired one)."""
    save_copilot_vim(gh)
    p = provider(gh, clock)
    gh.script(fo.text("one"), fo.text("two"), fo.text("three"))
    first = run(p)
    clock.now += gh.token_ttl - 60  # within the margin: renewed before the next request
    second = run(p)
    clock.now += gh.token_ttl + 5  # long past the second token's life
    third = run(p)
    tokens = [r.headers["authorization"] for r in gh.chats()]
    assert len(set(tokens)) == 3 and len(gh.exchanges) == 3
    assert not any(isinstance(e, Notice) for e in first + second + third)
    assert [e[-1].content[0]["text"] for e in (first, second, third)] == ["one", "two", "three"]


def test_a_token_the_server_refuses_is_renewed_once_and_said(gh: FakeCopilot, clock: Clock) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock)
    run(p)
    gh.api_tokens.clear()  # revoked on the server's side
    gh.script(fo.text("again"))
    events = run(p)
    assert [type(e) for e in events if isinstance(e, Notice)] == [Notice]
    assert events[-1].content[0]["text"] == "again" and len(gh.exchanges) == 2


def test_a_revoked_sign_in_says_to_sign_in_again(gh: FakeCopilot, clock: Clock) -> None:
    token = save_copilot_vim(gh)
    gh.oauth_tokens.discard(token)
    with pytest.raises(ProviderError) as err:
        run(provider(gh, clock))
    message = err.value.message
    assert "401" in message and ":Sightline login copilot" in message and token not in message


def test_no_copilot_seat_is_said_in_the_users_words(gh: FakeCopilot, clock: Clock) -> None:
    save_copilot_vim(gh)
    gh.seat = False
    with pytest.raises(ProviderError) as err:
        run(provider(gh, clock))
    assert "no Copilot seat" in err.value.message and "403" in err.value.message
    assert "github.com/settings/copilot" in err.value.message


def test_429_waits_what_retry_after_says(gh: FakeCopilot, clock: Clock) -> None:
    save_copilot_vim(gh)
    gh.script(fo.http_error(429, retry_after=0.2), fo.text("after"))
    events = run(provider(gh, clock, retries=1))
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert (
        retry.delay_s == pytest.approx(0.2) and "Copilot is rate limiting you (429" in retry.reason
    )
    assert isinstance(events[-1], Reply) and events[-1].content[0]["text"] == "after"


def test_no_token_reaches_an_error_or_the_request_body(gh: FakeCopilot, clock: Clock) -> None:
    oauth = save_copilot_vim(gh)
    p = provider(gh, clock)
    run(p)
    api_token = gh.chats()[0].headers["authorization"][7:]
    assert secrets.redact(f"{oauth} {api_token}") == "[REDACTED] [REDACTED]"
    gh.script(fo.http_error(400, f"bad request for {api_token}"))
    with pytest.raises(ProviderError) as err:
        run(p)
    assert api_token not in err.value.message
    assert oauth not in json.dumps([r.body for r in gh.requests])


def test_models_come_with_their_multipliers(gh: FakeCopilot, clock: Clock) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock)
    # No disabled model (o3), no embeddings.
    assert p.models() == ["claude-sonnet-4", "gpt-4.1", "o3-mini"]
    assert p.model_notes() == {"gpt-4.1": "0x", "claude-sonnet-4": "1x", "o3-mini": "0x"}


def test_an_enterprise_host_has_its_own_addresses() -> None:
    host = copilot_auth.Host.of("github.example.com")
    assert host.web == "https://github.example.com"
    assert host.api == "https://api.github.example.com"
    assert host.default_chat_api == "https://copilot-api.github.example.com"
    assert copilot_auth.Host.of(None).default_chat_api == "https://api.githubcopilot.com"
    cfg = provider_config(name="copilot", host="github.example.com")
    p = make_provider(cfg)
    assert isinstance(p, CopilotProvider) and p.keeper.host == host


@settings(max_examples=150, deadline=None)
@given(st.lists(RECORD, max_size=12) | turns())
def test_any_history_maps_to_a_request_the_api_accepts(records: list[Any]) -> None:
    request = Request("sys", wire_messages([*records, PROMPT]), [])
    body = chat_request(provider_config(name="copilot", model="gpt-4.1"), request)
    assert validation_error(body) is None, body


# -- vision ---------------------------------------------------------------------------------


def picture(color: str = "red", fmt: str = "PNG") -> dict[str, Any]:
    """A Messages API image block (what images.inline makes of a kept image)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 3), color).save(out, fmt)
    media = f"image/{fmt.lower()}"
    data = base64.b64encode(out.getvalue()).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}


def with_images(*blocks: dict[str, Any], earlier: list[Any] | None = None) -> Request:
    said = [{"type": "text", "text": "what is this?"}, *blocks]
    return Request("sys", [*(earlier or []), {"role": "user", "content": said}], [])


def image_parts(body: Any) -> list[Any]:
    return [
        part
        for msg in body["messages"]
        if isinstance(msg.get("content"), list)
        for part in msg["content"]
        if part.get("type") == "image_url"
    ]


def test_an_image_goes_to_a_vision_model_as_a_data_url_with_copilots_header(
    gh: FakeCopilot, clock: Clock
) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock)
    gh.script(fo.text("a red square"))
    assert run(p, with_images(picture()))[-1].content[0]["text"] == "a red square"
    (chat,) = gh.chats()
    assert chat.headers["copilot-vision-request"] == "true"
    (part,) = image_parts(chat.body)
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    gh.script(fo.text("plain"))
    run(p)
    assert "copilot-vision-request" not in gh.chats()[1].headers  # only with an image


def test_the_fake_refuses_images_without_the_header_or_for_a_model_without_vision(
    gh: FakeCopilot, clock: Clock
) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock)
    p._extra_headers = lambda request: {"x-initiator": "user"}  # type: ignore[method-assign]
    with pytest.raises(ProviderError, match="Copilot-Vision-Request"):
        run(p, with_images(picture()))
    body = chat_request(p.cfg, with_images(picture()))
    client = p._get_client()
    headers = {"Copilot-Vision-Request": "true"}
    import openai

    with pytest.raises(openai.BadRequestError, match="does not support vision"):
        client.chat.completions.create(**{**body, "model": "o3-mini"}, extra_headers=headers)


def test_the_model_list_decides_vision_and_a_model_without_it_sends_nothing(
    gh: FakeCopilot, clock: Clock
) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock, model="o3-mini")
    assert p.capabilities.vision  # the table's word by name (o3's), until the list is known
    with pytest.raises(ProviderError, match=r"cannot look at images .*nothing was sent"):
        run(p, with_images(picture()))
    assert gh.chats() == []  # the list was asked for, nothing sent
    assert not p.capabilities.vision and p.listed() is not None
    attached = images.Image("0" * 64, "image/png", "shot.png", 4, 3, 100)
    assert "cannot look at images" in str(p.image_refusal([attached]))


def test_the_lists_image_limits_are_kept_before_sending(gh: FakeCopilot, clock: Clock) -> None:
    save_copilot_vim(gh)
    p = provider(gh, clock)  # gpt-4.1: one image a request, png/jpeg/webp/gif, 3 MB
    with pytest.raises(ProviderError, match="at most 1 image"):
        run(p, with_images(picture(), picture("blue")))
    with pytest.raises(ProviderError, match="not image/bmp"):
        bmp = {**picture(), "source": {**picture()["source"], "media_type": "image/bmp"}}
        run(p, with_images(bmp))
    assert gh.chats() == []


def test_earlier_images_a_model_cannot_take_are_left_out_with_a_line(
    gh: FakeCopilot, clock: Clock
) -> None:
    save_copilot_vim(gh)
    earlier = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, picture()]},
        {"role": "assistant", "content": [{"type": "text", "text": "red"}]},
    ]
    follow = Request("sys", [*earlier, {"role": "user", "content": "and now?"}], [])
    p = provider(gh, clock, model="o3-mini")  # chosen after the image was sent
    gh.script(fo.text("fine"), fo.text("blue"))
    run(p, follow)
    first = gh.chats()[0]
    assert image_parts(first.body) == [] and "copilot-vision-request" not in first.headers
    assert "[an earlier image, left out: not sent]" in json.dumps(first.body)
    # gpt-4.1 takes one image a request: the new one goes, the earlier one is left out.
    p = provider(gh, clock)
    run(p, with_images(picture("blue"), earlier=earlier))
    (part,) = image_parts(gh.chats()[1].body)
    assert part["image_url"]["url"].endswith(picture("blue")["source"]["data"])
