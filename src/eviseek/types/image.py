"""Images that travel between environments, models and saved records.

An :class:`Image` holds its pixels in memory while an episode runs and serialises only as a
reference (a path relative to the record's directory, plus size and content hash). Pixels are
never inlined into JSON logs.

A frame is encoded (PNG, or JPEG where a provider asks for it) at most once: :meth:`Image.encoded`
keeps the bytes with the image and in a process-wide cache addressed by the frame's digest, so the
request that sends a frame, every later request that sends it again, and the trajectory writer
that saves it all share one encoding.
"""

from __future__ import annotations

import hashlib
import io
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, PrivateAttr

from eviseek.types.atomic import write_atomic
from eviseek.types.png import encode_png

DEFAULT_MAX_PIXELS = 1024 * 1024
"""Default pixel cap of an image sent to a model (about one megapixel: enough detail for VLMs, a
few hundred KB per image on the wire); a provider's ``max_pixels`` setting."""

SHOWN_MAX_PIXELS = 1280 * 28 * 28
"""Default pixel cap of the image the zoom environment shows (and of each crop): Qwen-VL's usual
processor ``max_pixels``, 1,003,520. A separate fact from :data:`DEFAULT_MAX_PIXELS`: AutoTool
sends the shown image with the provider's cap set to this value, so the model's box coordinates
refer to the frame the environment knows."""


PNG_COMPRESS_LEVEL = 1
"""zlib level of every PNG frame eviseek writes (ours): frames are encoded once each, for the
model's request and the saved trajectory, on the simulator workers' CPU, so time matters more
than a few KB (level 1 against zlib's default 6: about a third of the time, files up to about
1.5x larger); OpenCV's ``imwrite`` makes the same choice by default. See :mod:`eviseek.types.png`."""

EncodingKey = tuple[str, tuple[int, int] | None, int]
"""``(format, size or None for the image's own, JPEG quality or 0)``."""
FULL_PNG: EncodingKey = ("png", None, 0)
"""The key of an image's full-size PNG among its encodings (what :meth:`Image.encoded` makes)."""


class EncodedCache:
    """Encoded frames by content: ``(digest, format, size, quality)`` -> bytes, least recently
    used first out once their total passes ``max_bytes``. Thread-safe; counts its work."""

    def __init__(self, max_bytes: int = 64 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, str, tuple[int, int] | None, int], bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.encodes = 0
        """Encodings computed (cache misses)."""
        self.encode_cpu_s = 0.0
        """CPU seconds they took (the encoding threads' own time)."""
        self.hits = 0

    def get(self, key: tuple[str, str, tuple[int, int] | None, int]) -> bytes | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return data

    def put(self, key: tuple[str, str, tuple[int, int] | None, int], data: bytes, cpu_s: float) -> None:
        with self._lock:
            self.encodes += 1
            self.encode_cpu_s += cpu_s
            if key in self._items:
                return
            self._items[key] = data
            self._bytes += len(data)
            while self._bytes > self.max_bytes and self._items:
                _, old = self._items.popitem(last=False)
                self._bytes -= len(old)

    def clear(self) -> None:
        """Forget every entry and reset the counters."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.encodes, self.encode_cpu_s, self.hits = 0, 0.0, 0


ENCODED = EncodedCache()
"""The process-wide cache behind :meth:`Image.encoded`."""


def _encode_pixels(arr: np.ndarray, fmt: str, size: tuple[int, int] | None, quality: int) -> bytes:
    from PIL import Image as PILImage

    if size is not None:
        arr = np.asarray(PILImage.fromarray(arr).resize(size, PILImage.Resampling.LANCZOS))
    if fmt == "png":
        return encode_png(arr, level=PNG_COMPRESS_LEVEL)
    buf = io.BytesIO()
    PILImage.fromarray(arr).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


class Image(BaseModel):
    """An RGB image: pixels in memory, a file reference when saved."""

    model_config = ConfigDict(frozen=False)

    path: str | None = None
    """Path relative to the directory of the record that saved it (``None`` until saved)."""
    width: int
    height: int
    sha256: str | None = None
    """Hash of the RGB bytes; names the file, so identical frames share one file."""

    _pixels: np.ndarray | None = PrivateAttr(default=None)
    _encoded: dict[EncodingKey, bytes] | None = PrivateAttr(default=None)

    @classmethod
    def from_array(cls, array: np.ndarray) -> Image:
        """Wrap an ``H x W x 3`` (or ``x 4``) uint8 array; an alpha channel is dropped."""
        arr = np.asarray(array)
        if arr.ndim != 3 or arr.shape[2] not in (3, 4):
            raise ValueError(f"expected an HxWx3 or HxWx4 array, got shape {arr.shape}")
        if arr.shape[2] == 4:
            arr = arr[:, :, :3]
        if arr.dtype != np.uint8:
            arr = np.clip(arr, 0, 255).astype(np.uint8)
        arr = np.ascontiguousarray(arr)
        img = cls(width=int(arr.shape[1]), height=int(arr.shape[0]))
        img._pixels = arr
        return img

    @classmethod
    def from_pil(cls, pil: Any) -> Image:
        """Wrap a PIL image (converted to RGB)."""
        return cls.from_array(np.asarray(pil.convert("RGB")))

    @classmethod
    def open(cls, path: str | Path, base_dir: str | Path | None = None) -> Image:
        """Load an image file; ``path`` is stored relative to ``base_dir`` when given."""
        from PIL import Image as PILImage

        full = Path(base_dir, path) if base_dir is not None else Path(path)
        with PILImage.open(full) as pil:
            img = cls.from_pil(pil)
        img.path = str(path)
        return img

    @property
    def loaded(self) -> bool:
        """Whether the image is in memory: its pixels, or its full-size PNG (see
        :meth:`release_pixels`)."""
        return self._pixels is not None or self._full_png() is not None

    def _full_png(self) -> bytes | None:
        return self._encoded.get(FULL_PNG) if self._encoded is not None else None

    def release_pixels(self) -> None:
        """Keep the image as its full-size PNG only (encoding it first if needed), and free the
        pixels; :meth:`array` decodes them again when something asks for them.

        For frames about to cross a process boundary: the environment workers send each frame
        to the runner this way, about 8 KB instead of 230 KB for 320x240, since the runner
        mostly sends it to a model and saves it, both as that PNG. Lossless: the decoded pixels
        are the same bytes, and the hash (:meth:`digest`) is taken before they are freed.
        """
        if self._pixels is None:
            return
        self.encoded("png")  # hashes the pixels too: the digest stays with the image
        self._pixels = None

    def array(self, base_dir: str | Path | None = None) -> np.ndarray:
        """The ``H x W x 3`` uint8 pixels: decoded from the image's own PNG when it keeps only that
        (:meth:`release_pixels`; 0.6 ms for a 320x240 frame, ours), else loaded from
        ``base_dir / path``."""
        if self._pixels is None:
            png = self._full_png()
            source: Any
            if png is not None:
                source = io.BytesIO(png)
            elif self.path is not None:
                source = Path(base_dir, self.path) if base_dir is not None else Path(self.path)
            else:
                raise ValueError("image has neither pixels in memory nor a saved path")
            from PIL import Image as PILImage

            with PILImage.open(source) as pil:
                self._pixels = np.asarray(pil.convert("RGB"))
        return self._pixels

    def to_pil(self, base_dir: str | Path | None = None) -> Any:
        """The image as a PIL ``Image``."""
        from PIL import Image as PILImage

        return PILImage.fromarray(self.array(base_dir))

    def digest(self) -> str:
        """The SHA-256 of the RGB bytes (computed once)."""
        if self.sha256 is None:
            arr = self.array()
            h = hashlib.sha256()
            h.update(f"{arr.shape}".encode())
            h.update(np.ascontiguousarray(arr).data)  # the bytes in place: no 230 KB copy per frame
            self.sha256 = h.hexdigest()
        return self.sha256

    def encoded(self, fmt: str = "png", *, size: tuple[int, int] | None = None, quality: int = 90) -> bytes:
        """The image as PNG or JPEG bytes (resized to ``size`` first when given), encoded at most
        once per process for the same pixels and settings (see :class:`EncodedCache`)."""
        key = self._encoding_key(fmt, size, quality)
        fmt = key[0]
        own = self._encoded.get(key) if self._encoded is not None else None
        if own is not None:
            return own
        shared = (self.digest(), *key)
        data = ENCODED.get(shared)
        if data is None:
            started = time.thread_time()
            data = _encode_pixels(self.array(), fmt, key[1], quality)
            ENCODED.put(shared, data, time.thread_time() - started)
        if self._encoded is None:
            self._encoded = {}
        self._encoded[key] = data
        return data

    def _encoding_key(self, fmt: str, size: tuple[int, int] | None, quality: int) -> EncodingKey:
        fmt = fmt.lower()
        fmt = "jpeg" if fmt in ("jpg", "jpeg") else "png"
        if size is not None and tuple(size) == (self.width, self.height):
            size = None
        return (
            fmt,
            None if size is None else (int(size[0]), int(size[1])),
            quality if fmt == "jpeg" else 0,
        )

    def has_encoded(
        self, fmt: str = "png", *, size: tuple[int, int] | None = None, quality: int = 90
    ) -> bool:
        """Whether :meth:`encoded` with these settings has its bytes at hand (no encoding, and no
        hashing of the pixels, to do): a caller may then skip handing the work to a thread."""
        key = self._encoding_key(fmt, size, quality)
        if self._encoded is not None and key in self._encoded:
            return True
        return self.sha256 is not None and ENCODED.get((self.sha256, *key)) is not None

    def encode(self, fmt: str = "PNG", quality: int = 90) -> bytes:
        """Encode the pixels as PNG or JPEG bytes (the same bytes as :meth:`encoded`)."""
        return self.encoded(fmt, quality=quality)

    def save(self, base_dir: str | Path, subdir: str = "images") -> str:
        """Write the image as PNG under ``base_dir/subdir`` (named by its hash); return the path.

        Saving is idempotent: an image already saved under ``base_dir`` is not written again.
        """
        rel = f"{subdir}/{self.digest()[:20]}.png"
        full = Path(base_dir, rel)
        if not full.exists():
            write_atomic(full, self.encoded("png"))
        self.path = rel
        return rel
