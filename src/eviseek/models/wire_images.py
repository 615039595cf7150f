"""Images on the wire for OpenAI-compatible servers: shrunk to a pixel budget (aspect kept,
never enlarged) and encoded as base64 data URLs. The PNG or JPEG bytes are the image's own
(:meth:`eviseek.types.Image.encoded`, computed once per frame and shared with the trajectory
writer); a small cache of whole URLs saves the base64 step for frames agents resend."""

from __future__ import annotations

import base64
import math
import threading
from collections import OrderedDict

from eviseek.errors import ConfigError
from eviseek.types import Image
from eviseek.types.image import DEFAULT_MAX_PIXELS

__all__ = ["DEFAULT_MAX_PIXELS", "fit_pixels", "image_data_url"]


def fit_pixels(width: int, height: int, max_pixels: int | None) -> tuple[int, int]:
    """The size an image is sent at: ``(width, height)`` shrunk to ``max_pixels``, aspect kept.

    Never enlarges. Both sides stay at least 1 and ``w * h <= max_pixels`` holds after rounding
    down, so the budget is a hard limit.
    """
    if max_pixels is None or width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    w = max(1, int(width * scale))
    h = max(1, int(height * scale))
    # Rounding down both sides keeps w*h under the budget except when a side was clamped to 1.
    while w * h > max_pixels and max(w, h) > 1:
        if w >= h:
            w -= 1
        else:
            h -= 1
    return w, h


class _EncodeCache:
    """A small LRU of encoded data URLs, keyed by image content and encoding settings.

    Agents resend the same frames (the evidence board, reference images) on many calls;
    encoding a one-megapixel frame costs tens to hundreds of milliseconds (PNG is the slow
    one), a cache hit about a microsecond: see ``benchmarks/openai_image_encoding.py``.
    """

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int | None, str, int], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int | None, str, int]) -> str | None:
        with self._lock:
            url = self._items.get(key)
            if url is not None:
                self._items.move_to_end(key)
            return url

    def put(self, key: tuple[str, int | None, str, int], url: str) -> None:
        with self._lock:
            self._items[key] = url
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_ENCODE_CACHE = _EncodeCache()


def data_url_ready(
    image: Image, *, max_pixels: int | None = DEFAULT_MAX_PIXELS, fmt: str = "png", quality: int = 90
) -> bool:
    """Whether :func:`image_data_url` for ``image`` is only a base64 step (PNG or JPEG at the
    wire size already computed), so it may run on the event loop rather than in a thread."""
    size = fit_pixels(image.width, image.height, max_pixels)
    return image.has_encoded(fmt, size=size, quality=quality)


def image_data_url(
    image: Image, *, max_pixels: int | None = DEFAULT_MAX_PIXELS, fmt: str = "png", quality: int = 90
) -> str:
    """Encode ``image`` as a ``data:image/...;base64,`` URL, shrunk to ``max_pixels`` first."""
    fmt = fmt.lower()
    if fmt not in ("png", "jpeg"):
        raise ConfigError(f"image format {fmt!r} is not supported; use 'png' or 'jpeg'")
    key = (image.digest(), max_pixels, fmt, quality if fmt == "jpeg" else 0)
    cached = _ENCODE_CACHE.get(key)
    if cached is not None:
        return cached
    # The image's own encoding (computed once, shared with the trajectory writer and every other
    # request that sends this frame): only base64 is done here.
    data = image.encoded(fmt, size=fit_pixels(image.width, image.height, max_pixels), quality=quality)
    url = f"data:image/{fmt};base64," + base64.b64encode(data).decode("ascii")
    _ENCODE_CACHE.put(key, url)
    return url
