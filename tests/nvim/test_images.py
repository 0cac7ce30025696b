"""Images from the user as they meet them: `@image:path` or a dropped path in the composer, a
chip with name, pixel size and bytes; sent as the provider's image content (checked by the
fakes' rules of the real APIs), scaled under the limits; kept once by hash in the history,
and still there when the conversation is reopened; a model without vision refused before
anything is sent."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests import fakeopenai as fo
from tests.acp_util import acp_nvim
from tests.agent_util import TURN_TIMEOUT_S, accepted, claude, idle, send
from tests.conftest import capture_notify, said, status, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.fakeopenai import FakeOpenAI

__all__ = ["fake_api"]


def png(path: Path, size: tuple[int, int], color: str = "red") -> Path:
    Image.new("RGB", size, color).save(path, "PNG")
    return path


def typed(nv: Any, *lines: str) -> None:
    """Type the lines into the composer (<CR> between them, as in Insert mode) and send."""
    nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input("<CR>".join(line.replace("<", "<lt>") for line in lines) + "<C-s>")


def image_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b.get("type") == "image"]


def history_text(nv: Any) -> str:
    path = nv.exec_lua("return require('sightline.host').status().conversation_path")
    return Path(path).read_text()


def test_an_image_mention_is_sent_as_an_image_block_and_kept_once_by_hash(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    png(isolated_env / "shot.png", (800, 600))
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("a red rectangle"), text("still red"))
    typed(nv, "what is this @image:shot.png")
    idle(nv)
    (body,) = accepted(fake_api, 1)  # the fake checks the API's image rules
    (block,) = image_blocks(body["messages"][-1])
    assert block["source"]["media_type"] == "image/png"
    assert Image.open(io.BytesIO(__import__("base64").b64decode(block["source"]["data"]))).size == (
        800,
        600,
    )
    chip = next(line for line in transcript(nv) if line.startswith("▣ "))
    assert chip.startswith("▣ shot.png · 800×600 · ") and chip.endswith(" kB")
    # The history holds a reference, not the bytes; the store holds the bytes once.
    kept = history_text(nv)
    assert block["source"]["data"][:200] not in kept
    store = isolated_env.parent / "xdg" / "data" / "sightline" / "images"
    (stored,) = list(store.iterdir())
    assert stored.name in kept
    # A new core reopens the conversation: the image is still there for the model and the user.
    nv.command("Sightline restart")
    wait_for(lambda: any(line.startswith("▣ shot.png") for line in transcript(nv)), what="chip")
    typed(nv, "and now?")
    idle(nv)
    second = accepted(fake_api, 2)[1]
    assert [b["source"] for b in image_blocks(second["messages"][0])] == [block["source"]]
    assert len(list(store.iterdir())) == 1


def test_a_4k_screenshot_is_scaled_under_the_limits(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    # Noise: a PNG that stays large (a 4k screenshot of text is ~1-10 MB).
    noise = Image.frombytes("RGB", (3840, 2160), __import__("os").urandom(3840 * 2160 * 3))
    noise.save(isolated_env / "big.png", "PNG")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("ok"))
    typed(nv, "@image:big.png")
    idle(nv)
    (body,) = accepted(fake_api, 1)
    (block,) = image_blocks(body["messages"][-1])
    raw = __import__("base64").b64decode(block["source"]["data"])
    assert len(block["source"]["data"]) <= 5 * 1024 * 1024
    assert max(Image.open(io.BytesIO(raw)).size) <= 1568
    chip = next(line for line in transcript(nv) if line.startswith("▣ "))
    assert "(scaled from 3840×2160)" in chip


def test_a_dropped_image_path_is_attached(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    shot = png(tmp_path / "Screenshot 1.png", (120, 80), "blue")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("ok"))
    # What a terminal pastes when a file is dragged in: its quoted path on a line.
    typed(nv, "why is this blue?", f"'{shot}'")
    idle(nv)
    (body,) = accepted(fake_api, 1)
    assert len(image_blocks(body["messages"][-1])) == 1
    assert any(line.startswith("▣ Screenshot 1.png · 120×80") for line in transcript(nv))


def test_not_an_image_is_refused_and_nothing_is_sent(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    (isolated_env / "fake.png").write_text("not a picture")
    nv = claude(nvim_factory, fake_api)
    notes = capture_notify(nv)
    typed(nv, "look @image:fake.png")
    wait_for(notes, what="the refusal")
    assert "@image:fake.png: fake.png is not a png, jpeg, gif or webp image" in said(
        nv, notes()[0]["msg"]
    )
    assert status(nv)["state"] == "idle" and fake_api.requests == []


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key="sk-o-1") as srv:
        yield srv
    assert not srv.errors, srv.errors


def gpt(nvim_factory: Any, server: FakeOpenAI, model: str) -> Any:
    provider = {"name": "openai", "base_url": server.base_url, "model": model, "retries": 0}
    return nvim_factory({"provider": provider}, env={"OPENAI_API_KEY": "sk-o-1"})


def test_openai_gets_a_data_url_its_api_takes(
    nvim_factory: Any, openai_server: FakeOpenAI, isolated_env: Path
) -> None:
    png(isolated_env / "shot.png", (64, 48))
    nv = gpt(nvim_factory, openai_server, "gpt-4.1-mini")
    openai_server.script(fo.text("ok"))
    typed(nv, "see @image:shot.png")
    idle(nv)
    req = openai_server.wait_for_requests(1, TURN_TIMEOUT_S)[0].body
    assert fo.validation_error(req) is None
    user = req["messages"][-1]
    url = next(p["image_url"]["url"] for p in user["content"] if p["type"] == "image_url")
    assert url.startswith("data:image/png;base64,iVBOR")
    assert json.dumps(user).count("data:image/png") == 1


def test_a_model_without_vision_is_refused_before_anything_is_sent(
    nvim_factory: Any, openai_server: FakeOpenAI, isolated_env: Path
) -> None:
    png(isolated_env / "shot.png", (64, 48))
    nv = gpt(nvim_factory, openai_server, "gpt-3.5-turbo")
    notes = capture_notify(nv)
    typed(nv, "see @image:shot.png")
    wait_for(notes, what="the refusal")
    msg = said(nv, notes()[0]["msg"])
    assert "openai gpt-3.5-turbo cannot look at images; nothing was sent" in msg
    assert openai_server.requests == [] and status(nv)["state"] == "idle"
    assert not any(line.startswith("▣") for line in transcript(nv))


def test_read_file_on_an_image_shows_it_to_a_model_with_vision(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    png(isolated_env / "layout.png", (2000, 1000))
    nv = claude(nvim_factory, fake_api)
    fake_api.script(tool_use("read_file", {"path": "layout.png"}), text("I see it"))
    send(nv, "look at the screenshot I saved")
    idle(nv)
    body = accepted(fake_api, 2)[1]
    (result,) = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    first, picture = result["content"]
    assert first["text"] == "layout.png: image/png image, 1568×784 pixels, scaled from 2000×1000"
    assert picture["type"] == "image" and picture["source"]["media_type"] == "image/png"
    assert any(line.startswith("▣ layout.png · 1568×784") for line in transcript(nv))


def test_read_file_on_an_image_tells_a_model_without_vision(
    nvim_factory: Any, openai_server: FakeOpenAI, isolated_env: Path
) -> None:
    png(isolated_env / "layout.png", (20, 10))
    nv = gpt(nvim_factory, openai_server, "gpt-3.5-turbo")
    openai_server.script(fo.tool_call("read_file", {"path": "layout.png"}), fo.text("ok"))
    send(nv, "look")
    idle(nv)
    req = openai_server.wait_for_requests(2, TURN_TIMEOUT_S)[1].body
    assert fo.validation_error(req) is None
    (tool,) = [m for m in req["messages"] if m["role"] == "tool"]
    assert tool["content"].endswith("(not sent: the model in use cannot look at images)")
    assert "image_url" not in json.dumps(req)


def stub(bin_dir: Path, name: str, script: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def test_paste_reads_the_clipboard_through_the_program_there_is(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    """A stub wl-paste on PATH prints a 4k screenshot; the composer key puts the image in
    the message with its chip, and it is sent."""
    shot = png(tmp_path / "clip.png", (3840, 2160), "green")
    bin_dir = tmp_path / "bin"
    stub(bin_dir, "wl-paste", f'[ "$*" = "--no-newline --type image/png" ] && cat "{shot}"\n')
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": "k", **env})
    fake_api.script(text("a green screen"))
    nv.input(":Sightline chat<CR>")
    wait_for(lambda: nv.api.get_mode()["mode"] == "i", what="Insert mode in the composer")
    nv.input("what is this ")
    nv.input("<M-v>")
    cbuf = nv.exec_lua("return require('sightline.ui.pane').buffers().composer")
    chips = wait_for(
        lambda: nv.exec_lua("return require('sightline.ui.paste').chips(...)", cbuf),
        what="the chip in the composer",
    )
    assert chips[0].startswith("▣ pasted-") and "1568×882 (scaled from 3840×2160)" in chips[0]
    line = nv.api.buf_get_lines(cbuf, 0, -1, False)[0]
    assert line.startswith("what is this @image:") and nv.api.get_mode()["mode"] == "i"
    nv.input("<C-s>")
    idle(nv)
    (body,) = accepted(fake_api, 1)
    (block,) = image_blocks(body["messages"][-1])
    raw = __import__("base64").b64decode(block["source"]["data"])
    assert Image.open(io.BytesIO(raw)).size == (1568, 882)
    assert any(line.startswith("▣ pasted-") for line in transcript(nv))


def test_paste_without_a_clipboard_program_says_what_to_install(
    nvim_factory: Any, isolated_env: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    nv = nvim_factory({"provider": {"name": "echo"}}, env={"PATH": str(empty)})
    notes = capture_notify(nv)
    nv.command("Sightline paste")
    wait_for(notes, what="the message")
    msg = said(nv, notes()[0]["msg"])
    assert "no clipboard program for images: install wl-clipboard" in msg
    assert "xclip" in msg and "pngpaste" in msg


def test_paste_with_no_image_on_the_clipboard_says_so(
    nvim_factory: Any, isolated_env: Path, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    stub(bin_dir, "xclip", "echo 'just text'\n")
    nv = nvim_factory({"provider": {"name": "echo"}}, env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    notes = capture_notify(nv)
    nv.command("Sightline paste")
    wait_for(notes, what="the message")
    assert "the clipboard holds no image (xclip found none)" in said(nv, notes()[0]["msg"])


@pytest.mark.parametrize("takes_images", [True, False])
def test_an_acp_agent_gets_image_content_only_when_it_says_it_takes_images(
    nvim_factory: Any, isolated_env: Path, tmp_path: Path, takes_images: bool
) -> None:
    png(isolated_env / "shot.png", (40, 30))
    nv, log = acp_nvim(
        nvim_factory, tmp_path, [[{"say": "warm"}], [{"say": "seen"}]], {"image": takes_images}
    )
    # A first turn starts the agent (its capabilities are known from then on).
    typed(nv, "hello")
    wait_for(lambda: any("warm" in line for line in transcript(nv)), TURN_TIMEOUT_S, "warm up")
    idle(nv)
    nv.input("<Esc>")
    typed(nv, "look @image:shot.png")
    idle(nv)
    prompts = log.entries("prompt")
    if takes_images:
        blocks = log.wait("prompt", 2)[1]["blocks"]
        (image,) = [b for b in blocks if b.get("type") == "image"]
        assert image["mimeType"] == "image/png" and image["data"].startswith("iVBOR")
    else:
        assert len(prompts) == 1  # the second prompt was never sent
        assert any(
            "does not take images (its promptCapabilities.image is off); nothing was sent" in line
            for line in transcript(nv)
        )
