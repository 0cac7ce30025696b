"""Images in the conversation: what kind a file is (by its bytes), the store that keeps each
image once by content hash, and the blocks that name one.

A conversation's history never holds an image inline: a user message (or a tool result)
holds an image *reference* block, `{"type": "image", "sha256": …, "media_type": …}` plus
what the transcript shows (name, pixel size, bytes), and the bytes live once in the user
data dir under `sightline/images/<sha256>`. `inline()` turns references into the Messages
API's base64 image blocks when a request is built, so a reopened conversation still has
its images, and one pasted twice costs its bytes once. Pure stdlib (scaling is
tools/imaging.py's, with Pillow).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sightline.domain import paths

# The four types every vision API here takes (Anthropic's list; OpenAI takes the same).
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
EXTENSIONS |= {".gif": "image/gif", ".webp": "image/webp"}
_HASH = re.compile(r"[0-9a-f]{64}")


def sniff(head: bytes) -> str | None:
    """The media type the bytes are (png, jpeg, gif, webp), whatever the file is called."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_like_image(path: str | Path) -> bool:
    """By its name: the file an `@image:`, a dropped path or read_file may mean."""
    return Path(path).suffix.lower() in EXTENSIONS


def store_dir() -> Path:
    return paths.data_dir() / "images"


def put(data: bytes) -> str:
    """Keep the bytes once (atomic write; an image already kept is not written again);
    returns their hash."""
    digest = hashlib.sha256(data).hexdigest()
    folder = store_dir()
    target = folder / digest
    if target.is_file() and target.stat().st_size == len(data):
        return digest
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest


def get(digest: object) -> bytes | None:
    """The kept bytes, or None when they are not kept (any more) or were changed since."""
    if not isinstance(digest, str) or not _HASH.fullmatch(digest):
        return None
    try:
        data = (store_dir() / digest).read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == digest else None


@dataclass(frozen=True)
class Image:
    """One image as sent: its bytes kept in the store, what the chip shows."""

    sha256: str
    media_type: str
    name: str
    width: int
    height: int
    size: int  # bytes sent
    scaled_from: tuple[int, int] | None = None  # the pixel size before it was scaled down

    def block(self) -> dict[str, Any]:
        """The reference block the history keeps."""
        out: dict[str, Any] = {
            "type": "image",
            "sha256": self.sha256,
            "media_type": self.media_type,
            "name": self.name,
            "width": self.width,
            "height": self.height,
            "bytes": self.size,
        }
        if self.scaled_from is not None:
            out["scaled_from"] = list(self.scaled_from)
        return out

    @classmethod
    def from_block(cls, block: Any) -> Image | None:
        """The image a reference block names, or None when it is not one."""
        if not isinstance(block, dict) or block.get("type") != "image":
            return None
        digest, media = block.get("sha256"), block.get("media_type")
        if not isinstance(digest, str) or not _HASH.fullmatch(digest) or media not in MEDIA_TYPES:
            return None
        numbers = [block.get(k) for k in ("width", "height", "bytes")]
        w, h, n = (v if isinstance(v, int) and not isinstance(v, bool) else 0 for v in numbers)
        name = block.get("name")
        return cls(digest, str(media), name if isinstance(name, str) else "image", w, h, n)


def is_reference(block: Any) -> bool:
    return Image.from_block(block) is not None


def inline(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages with each image reference replaced by the API's base64 image
    block (in user messages and in tool results); an image no longer kept becomes a line of
    text saying so, so the request stays valid."""
    return [{**m, "content": _inline_blocks(m.get("content"))} for m in messages]


def _inline_blocks(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    for block in content:
        image = Image.from_block(block)
        if image is not None:
            out.append(_api_block(image))
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            out.append({**block, "content": _inline_blocks(block.get("content"))})
        else:
            out.append(block)
    return out


def _api_block(image: Image) -> dict[str, Any]:
    data = get(image.sha256)
    if data is None:
        return {"type": "text", "text": f"[image {image.name}: no longer kept on this machine]"}
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": image.media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }
