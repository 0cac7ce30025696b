"""`:Sightline paste` and the composer's paste key: the image on the clipboard, kept in the
image store and named in the composer as an `@image:` mention.

The clipboard is read by whichever of wl-paste (Wayland), xclip (X11) and pngpaste (macOS)
is on PATH, in that order, in a process group of its own with a timeout (domain/spawn.py);
none, or no image on the clipboard, is said plainly. The chip is answered from the image's
header at once; scaling to the provider's limits runs in the background (its result is
what the send uses, tools/imaging.py), so the chip never waits for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from sightline.domain import images, narrator, secrets, spawn
from sightline.domain.errors import Refused
from sightline.domain.mentions import escape_path
from sightline.tools import imaging

TIMEOUT_S = 5.0
MAX_BYTES = imaging.MAX_READ_BYTES
# Each reader, as it prints the clipboard's image as PNG bytes on stdout.
READERS = (
    ("wl-paste", ["--no-newline", "--type", "image/png"]),
    ("xclip", ["-selection", "clipboard", "-target", "image/png", "-out"]),
    ("pngpaste", ["-"]),
)


@dataclass(frozen=True)
class Pasted:
    token: str  # what the composer gets: `@image:<path>`
    chip: str  # what it shows beside it: name, pixel size, bytes


def reader() -> tuple[str, list[str]] | None:
    for name, args in READERS:
        found = shutil.which(name)
        if found:
            return found, args
    return None


def paste(limits: imaging.Limits = imaging.DEFAULT_LIMITS) -> Pasted:
    found = reader()
    if found is None:
        raise Refused(
            "sightline: no clipboard program for images: install wl-clipboard (Wayland), "
            "xclip (X11) or pngpaste (macOS)"
        )
    program, args = found
    name = Path(program).name
    try:
        done = spawn.run([program, *args], TIMEOUT_S, env=secrets.scrubbed_env(dict(os.environ)))
    except subprocess.TimeoutExpired:
        raise Refused(f"sightline: {name} did not answer within {TIMEOUT_S:g} s") from None
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        raise Refused(f"sightline: {name} failed ({type(err).__name__})") from None
    data = done.stdout[: MAX_BYTES + 1]
    if done.returncode != 0 or images.sniff(data[:16]) is None:
        raise Refused(f"sightline: the clipboard holds no image ({name} found none)")
    if len(data) > MAX_BYTES:
        raise Refused("sightline: the clipboard's image is too large to send")
    width, height = imaging.pixel_size(data)
    digest = images.put(data)
    path = images.store_dir() / digest
    # The send scales it again only if this has not finished (the result is cached).
    threading.Thread(
        target=imaging.prepare_quietly, args=(data, "pasted", limits), daemon=True
    ).start()
    shown = imaging.fitted((width, height), limits)
    scaled = None if shown == (width, height) else (width, height)
    chip = narrator.image_attached(pasted_name(digest), *shown, len(data), scaled).text
    return Pasted("@image:" + escape_path(str(path)), chip)


def pasted_name(digest: str) -> str:
    return f"pasted-{digest[:8]}"
