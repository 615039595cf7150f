"""Images that travel between environments, models and saved records.

An :class:`Image` holds its pixels in memory while an episode runs and serialises only as a
reference (a path relative to the record's directory, plus size and content hash). Pixels are
never inlined into JSON logs.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, PrivateAttr

from eviseek.types.atomic import write_atomic

DEFAULT_MAX_PIXELS = 1024 * 1024
"""Default pixel cap of an image sent to a model (about one megapixel: enough detail for VLMs, a
few hundred KB per image on the wire); a provider's ``max_pixels`` setting."""

SHOWN_MAX_PIXELS = 1280 * 28 * 28
"""Default pixel cap of the image the zoom environment shows (and of each crop): Qwen-VL's usual
processor ``max_pixels``, 1,003,520. A separate fact from :data:`DEFAULT_MAX_PIXELS`: AutoTool
sends the shown image with the provider's cap set to this value, so the model's box coordinates
refer to the frame the environment knows."""


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
        """Whether the pixels are in memory."""
        return self._pixels is not None

    def array(self, base_dir: str | Path | None = None) -> np.ndarray:
        """The ``H x W x 3`` uint8 pixels, loading them from ``base_dir / path`` if needed."""
        if self._pixels is None:
            if self.path is None:
                raise ValueError("image has neither pixels in memory nor a saved path")
            from PIL import Image as PILImage

            full = Path(base_dir, self.path) if base_dir is not None else Path(self.path)
            with PILImage.open(full) as pil:
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
            h.update(arr.tobytes())
            self.sha256 = h.hexdigest()
        return self.sha256

    def encode(self, fmt: str = "PNG", quality: int = 90) -> bytes:
        """Encode the pixels as PNG or JPEG bytes."""
        buf = io.BytesIO()
        pil = self.to_pil()
        if fmt.upper() in ("JPG", "JPEG"):
            pil.save(buf, format="JPEG", quality=quality)
        else:
            pil.save(buf, format="PNG", optimize=False)
        return buf.getvalue()

    def save(self, base_dir: str | Path, subdir: str = "images") -> str:
        """Write the image as PNG under ``base_dir/subdir`` (named by its hash); return the path.

        Saving is idempotent: an image already saved under ``base_dir`` is not written again.
        """
        rel = f"{subdir}/{self.digest()[:20]}.png"
        full = Path(base_dir, rel)
        if not full.exists():
            write_atomic(full, self.encode("PNG"))
        self.path = rel
        return rel
