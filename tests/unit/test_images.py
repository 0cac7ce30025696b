"""Images made ready to send: checked by their bytes, scaled under the limits (never sent
over them), kept once by hash; the request's image blocks as the APIs take them, and the
loopback fakes refusing what the real APIs refuse."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from sightline.domain import images
from sightline.domain.errors import Refused
from sightline.providers.openai_api import chat_messages
from sightline.tools import imaging
from tests import fakeopenai
from tests.fakeapi import validation_error


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "sightline" / "images"


def encoded(size: tuple[int, int], fmt: str = "PNG", mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, "red").save(buf, fmt)
    return buf.getvalue()


def request(block: dict[str, object]) -> dict[str, object]:
    return {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "see"}, block]}],
    }


@pytest.mark.parametrize(
    ("fmt", "media"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_each_type_is_sent_as_it_is_when_within_the_limits(
    fmt: str, media: str, store: Path
) -> None:
    data = encoded((300, 200), fmt)
    image = imaging.prepare(data, "a", imaging.DEFAULT_LIMITS)
    assert (image.media_type, image.width, image.height, image.size) == (media, 300, 200, len(data))
    assert images.get(image.sha256) == data and image.scaled_from is None
    (block,) = images.inline([{"role": "user", "content": [image.block()]}])[0]["content"]
    assert validation_error(request(block)) is None


def test_an_image_is_kept_once_however_often_it_is_given(store: Path) -> None:
    data = encoded((50, 50))
    first = imaging.prepare(data, "a.png")
    second = imaging.prepare(data, "copy.png")
    assert first.sha256 == second.sha256 and len(list(store.iterdir())) == 1


@pytest.mark.parametrize("data", [b"hello", b"\x89PNG\r\n\x1a\n" + b"broken", b""])
def test_what_is_not_an_image_is_refused(data: bytes) -> None:
    with pytest.raises(Refused, match=r"not a png|could not be read"):
        imaging.prepare(data, "x.png")


@settings(max_examples=12, deadline=None)
@given(
    st.integers(1, 9000),
    st.integers(1, 9000),
    st.sampled_from(["PNG", "JPEG", "GIF", "WEBP"]),
)
def test_whatever_its_size_an_image_is_sent_within_the_limits(w: int, h: int, fmt: str) -> None:
    if w * h > 40_000_000:
        h = max(1, 40_000_000 // w)
    limits = imaging.Limits(max_edge=1568, max_bytes=200_000)
    image = imaging.prepare(encoded((w, h), fmt, "RGB"), "x", limits)
    data = images.get(image.sha256)
    assert data is not None and len(data) <= limits.max_bytes
    with Image.open(io.BytesIO(data)) as sent:
        assert sent.size == (image.width, image.height)
        assert max(sent.size) <= limits.max_edge
        # Scaled only when it had to be, its aspect kept (within a pixel's rounding).
        if max(w, h) > limits.max_edge:
            assert image.scaled_from == (w, h)
            sw, sh = sent.size
            assert abs(sw * h - sh * w) <= max(w, h)  # the short side within a pixel


def test_an_image_no_longer_kept_becomes_text_and_the_request_stays_valid() -> None:
    ref = images.Image("0" * 64, "image/png", "gone.png", 1, 1, 1).block()
    (block,) = images.inline([{"role": "user", "content": [ref]}])[0]["content"]
    assert block == {"type": "text", "text": "[image gone.png: no longer kept on this machine]"}


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ({"type": "base64", "media_type": "image/bmp", "data": "AAAA"}, "media_type"),
        ({"type": "base64", "media_type": "image/png", "data": "not base64!"}, "base64"),
        (
            {
                "type": "base64",
                "media_type": "image/jpeg",
                "data": base64.b64encode(encoded((4, 4))).decode(),
            },
            "does not match",
        ),
        (
            {"type": "base64", "media_type": "image/png", "data": "A" * (5 * 1024 * 1024 + 4)},
            "5 MB",
        ),
        ({"type": "file", "file_id": "x"}, "Input tag"),
    ],
)
def test_the_anthropic_fake_refuses_what_the_api_refuses(source: dict[str, str], why: str) -> None:
    error = validation_error(request({"type": "image", "source": source}))
    assert error is not None and why in error


def test_openai_gets_data_urls_and_its_fake_refuses_other_forms() -> None:
    image = imaging.prepare(encoded((8, 8)), "a.png")
    messages = images.inline(
        [{"role": "user", "content": [{"type": "text", "text": "hi"}, image.block()]}]
    )
    body = {"model": "m", "messages": chat_messages("sys", messages, True)}
    assert fakeopenai.validation_error(body) is None
    part = body["messages"][-1]["content"][-1]
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    for url in ("data:image/png,rawbytes", "data:text/plain;base64,AAAA", "file:///tmp/a.png"):
        part["image_url"]["url"] = url
        error = fakeopenai.validation_error(body)
        assert error is not None and "Invalid image URL" in error
