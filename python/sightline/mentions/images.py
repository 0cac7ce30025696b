"""The images a message carries: `@image:path`, and an image file dropped into the composer
(a line that is only its path, as a terminal pastes a dragged file).

The user gave them, so the path may be anywhere they can read (`~` is their home; a relative
path is the workspace's), never under /proc, /sys or /dev. Each is checked by its bytes,
scaled to the provider's limits and kept once in the image store (tools/imaging.py); a bad
one refuses the whole send, before anything is sent or recorded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sightline.domain import images
from sightline.domain.errors import Refused
from sightline.domain.mentions import Mention
from sightline.tools import imaging

_NEVER = ("/proc", "/sys", "/dev")


def user_path(raw: str, workspace: str) -> Path:
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = Path(workspace) / path
    real = Path(os.path.realpath(path))
    if any(str(real) == top or str(real).startswith(top + "/") for top in _NEVER):
        raise Refused("not a file to send")
    try:
        mode = real.stat().st_mode
    except OSError as err:
        raise Refused(err.strerror or "cannot be read") from None
    if not stat.S_ISREG(mode):
        raise Refused("not a regular file")
    return real


def dropped(text: str, workspace: str) -> list[str]:
    """Lines that are only the path of an existing image file (quoted, or a file:// URI):
    what a terminal pastes when a file is dragged into it."""
    found = []
    for line in text.splitlines():
        raw = line.strip()
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            raw = raw[1:-1]
        if raw.startswith("file://"):
            raw = unquote(urlsplit(raw).path)
        if not raw.startswith(("/", "~")) or not images.looks_like_image(raw):
            continue
        try:
            user_path(raw, workspace)
        except Refused:
            continue
        if raw not in found:
            found.append(raw)
    return found


def attach(
    found: Sequence[Mention], text: str, workspace: str, limits: imaging.Limits
) -> list[images.Image]:
    """The message's images in the order given: `@image:` mentions, then dropped paths."""
    wanted = [m.value for m in found if m.kind == "image"]
    wanted += [p for p in dropped(text, workspace) if p not in wanted]
    out: list[images.Image] = []
    seen: set[str] = set()
    for raw in wanted:
        try:
            path = user_path(raw, workspace)
            name = path.name
            if path.parent == Path(os.path.realpath(images.store_dir())):
                name = f"pasted-{path.name[:8]}"  # `:Sightline paste` kept it there
            image = imaging.prepare(imaging.read_image(path), name, limits)
        except Refused as err:
            raise Refused(f"sightline: @image:{raw}: {err.message}") from None
        if image.sha256 not in seen:
            seen.add(image.sha256)
            out.append(image)
    return out


def wanted(found: Sequence[Mention], text: str, workspace: str) -> bool:
    """Whether the message carries an image at all (cheap: no image is read)."""
    return any(m.kind == "image" for m in found) or bool(dropped(text, workspace))
