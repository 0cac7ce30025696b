"""The prompt of an ACP turn: the user's text, the selection block, then the `@ext`/`@path`
context parts, in the order the core built them (the visible text is never changed).

A mentioned file's part (`<file path="…">…</file>`, mentions/build_parts.py's format) becomes an
embedded resource when the agent advertises `embeddedContext`; everything else is text.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from typing import Any

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from sightline.domain import images

# Only a whole file part (not truncated or omitted): its body is the file's text.
_FILE_PART = re.compile(r'\A<file path="([^"]*)">\n(.*)</file>\Z', re.S)

Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def has_images(user: dict[str, Any]) -> bool:
    return any(images.is_reference(b) for b in user.get("content", []))


def prompt_blocks(
    user: dict[str, Any], workspace: str, embedded: bool, takes_images: bool = False
) -> list[Block]:
    parts = [
        b["text"]
        for b in user.get("content", [])
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    blocks: list[Block] = []
    # The user's images (domain/images.py references), when the agent's
    # promptCapabilities.image says it takes them: ACP `image` content, first.
    for block in user.get("content", []) if takes_images else []:
        image = images.Image.from_block(block)
        data = images.get(image.sha256) if image is not None else None
        if image is not None and data is not None:
            encoded = base64.b64encode(data).decode("ascii")
            blocks.append(ImageContentBlock(type="image", mime_type=image.media_type, data=encoded))
    for i, part in enumerate(parts):
        match = _FILE_PART.match(part) if i > 0 and embedded else None
        if match is None:
            blocks.append(TextContentBlock(type="text", text=part))
            continue
        rel = html.unescape(match.group(1))
        uri = (Path(workspace) / rel).absolute().as_uri()
        resource = TextResourceContents(uri=uri, text=match.group(2), mime_type="text/plain")
        blocks.append(EmbeddedResourceContentBlock(type="resource", resource=resource))
    return blocks
