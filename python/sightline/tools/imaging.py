"""An image the user gives (or read_file finds) made ready to send: checked to be a png,
jpeg, gif or webp by its bytes, scaled down with Pillow when it is over the provider's
limits (never sent over them), and kept once in the image store (domain/images.py).

Pillow is imported on first use only: never on start-up or a keystroke.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import threading
from dataclasses import dataclass
from pathlib import Path

from sightline.domain import images
from sightline.domain.errors import Refused

# Read at most this much of a file the user names (a 4k PNG screenshot is ~10-25 MB at most).
MAX_READ_BYTES = 64 * 1024 * 1024
MAX_PIXELS = 12_000 * 12_000  # Pillow's decompression-bomb guard, said as our own refusal


@dataclass(frozen=True)
class Limits:
    """What a provider takes: the longest edge in pixels and the bytes of one image."""

    max_edge: int
    max_bytes: int


# The Messages API refuses images over 5 MB (base64: 3/4 of that in bytes) or 8000 px, and
# scales anything over ~1568 px on its long edge itself (costing time, not quality): scaled
# here to that. OpenAI's limits are wider (20 MB, scaled to 2048 px): the same bound fits both.
DEFAULT_LIMITS = Limits(max_edge=1568, max_bytes=3_750_000)


def read_image(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_READ_BYTES + 1)
    except OSError as err:
        raise Refused(f"cannot read {path.name}: {err.strerror or err}") from None
    if len(data) > MAX_READ_BYTES:
        raise Refused(f"{path.name} is over {MAX_READ_BYTES // 2**20} MB: not an image to send")
    return data


# Images already made ready, by (the given bytes' hash, limits): a paste scales in the
# background, and the send then finds the result here.
_ready: dict[tuple[str, Limits], images.Image] = {}
_ready_lock = threading.Lock()


def pixel_size(data: bytes) -> tuple[int, int]:
    """Width and height from the image's header (nothing decoded: ~1 ms for a 4k PNG)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            return img.size
    except (UnidentifiedImageError, OSError, ValueError) as err:
        raise Refused(f"not an image that can be read ({type(err).__name__})") from None


def fitted(size: tuple[int, int], limits: Limits) -> tuple[int, int]:
    """The pixel size an image of `size` is sent at, as Pillow's thumbnail() computes it
    (when its bytes fit too; a heavier one is stepped down further at send)."""
    w, h = size
    if max(w, h) <= limits.max_edge:
        return w, h
    if w >= h:
        return limits.max_edge, max(1, round(h * limits.max_edge / w))
    return max(1, round(w * limits.max_edge / h)), limits.max_edge


def prepare_quietly(data: bytes, name: str, limits: Limits) -> None:
    """prepare() on a background thread, for its cached result only."""
    with contextlib.suppress(Refused, OSError):
        prepare(data, name, limits)


def prepare(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS) -> images.Image:
    """The image as it will be sent, kept in the store; Refused when it is not one of the
    four types or cannot be read."""
    key = (hashlib.sha256(data).hexdigest(), limits)
    with _ready_lock:
        done = _ready.get(key)
    if done is not None and images.get(done.sha256) is not None:
        return dataclasses.replace(done, name=name)
    image = _prepare(data, name, limits)
    with _ready_lock:
        if len(_ready) > 64:
            _ready.clear()
        _ready[key] = image
    return image


def _prepare(data: bytes, name: str, limits: Limits) -> images.Image:
    media = images.sniff(data[:16])
    if media is None:
        raise Refused(f"{name} is not a png, jpeg, gif or webp image")
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            width, height = img.size
            if width * height > MAX_PIXELS:
                raise Refused(f"{name} is {width}×{height} pixels: too large to read")
            animated = getattr(img, "is_animated", False)
            fits = max(width, height) <= limits.max_edge and len(data) <= limits.max_bytes
            if fits and not animated:
                sent, out_media, size = data, media, (width, height)
            else:
                sent, out_media, size = _scaled(img, media, limits)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as err:
        raise Refused(f"{name} could not be read as an image ({type(err).__name__})") from None
    digest = images.put(sent)
    scaled_from = None if size == (width, height) else (width, height)
    return images.Image(digest, out_media, name, size[0], size[1], len(sent), scaled_from)


def _scaled(img: object, media: str, limits: Limits) -> tuple[bytes, str, tuple[int, int]]:
    """The image within the limits: its long edge at most max_edge (aspect kept), saved in
    its own format (an animation's first frame as PNG); a PNG still too heavy becomes a
    JPEG, and a JPEG steps down in quality and then in size until it fits."""
    from PIL import Image

    assert isinstance(img, Image.Image)
    frame = img.convert("RGBA") if img.mode in ("P", "LA", "PA") else img.copy()
    frame.thumbnail((limits.max_edge, limits.max_edge), Image.Resampling.LANCZOS)
    fmt = {"image/jpeg": "JPEG", "image/webp": "WEBP"}.get(media, "PNG")
    out_media = {"JPEG": "image/jpeg", "WEBP": "image/webp"}.get(fmt, "image/png")
    data = _encode(frame, fmt, 90)
    quality = 85
    while len(data) > limits.max_bytes:
        if fmt != "JPEG":
            fmt, out_media = "JPEG", "image/jpeg"
        elif quality > 50:
            quality -= 15
        else:
            w, h = frame.size
            frame = frame.resize((max(1, w * 3 // 4), max(1, h * 3 // 4)))
        data = _encode(frame, fmt, quality)
    return data, out_media, frame.size


def _encode(frame: object, fmt: str, quality: int) -> bytes:
    from PIL import Image

    assert isinstance(frame, Image.Image)
    if fmt == "JPEG" and frame.mode not in ("RGB", "L"):
        frame = frame.convert("RGB")
    buf = io.BytesIO()
    if fmt == "PNG":
        frame.save(buf, "PNG", optimize=False, compress_level=6)
    else:
        frame.save(buf, fmt, quality=quality)
    return buf.getvalue()
