"""Turn the images a trajectory references into ``src`` values a page can show from disk.

Two ways, both of which survive moving the report folder:

* ``embed`` (default): each image becomes a JPEG thumbnail inside the page as a base64 data
  URI, so one HTML file carries everything and can be mailed or attached to an issue.
* ``copy``: each image is copied at full resolution into a ``<page>_files/`` folder next to
  the page and linked relatively; the page stays small and pixels stay lossless.

A missing or unreadable image never stops a page from being written: the page shows a
placeholder naming the file instead, because the rest of the episode is still worth reading.
"""

from __future__ import annotations

import base64
import io
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from eviseek.errors import ConfigError
from eviseek.types import Image

ImageMode = Literal["embed", "copy"]
IMAGE_MODES: tuple[str, ...] = ("embed", "copy")


class ImageRef(BaseModel):
    """What a template needs to show one image."""

    src: str | None = None
    """A data URI or a path relative to the page; ``None`` when the image could not be read."""
    missing: str | None = None
    """Why there is no ``src`` (shown in place of the image)."""
    width: int = 0
    height: int = 0


class ImageSourcer:
    """Resolves :class:`Image` records saved under ``base_dir`` for a page written to ``page_path``.

    Results are cached per image, so a frame that appears as a step, a board item and an answer
    image is read and encoded once.
    """

    def __init__(
        self,
        base_dir: Path,
        page_path: Path,
        mode: ImageMode = "embed",
        *,
        max_side: int = 480,
        jpeg_quality: int = 85,
    ) -> None:
        if mode not in IMAGE_MODES:
            raise ConfigError(f"image mode must be one of {IMAGE_MODES}, got {mode!r}")
        if max_side < 16:
            raise ConfigError(f"max_side must be at least 16 pixels, got {max_side}")
        self.base_dir = base_dir
        self.page_path = page_path
        self.mode = mode
        self.max_side = max_side
        self.jpeg_quality = jpeg_quality
        self._cache: dict[str, ImageRef] = {}

    @property
    def files_dir(self) -> Path:
        """Where ``copy`` mode puts image files: ``<page stem>_files`` next to the page."""
        return self.page_path.parent / f"{self.page_path.stem}_files"

    def ref(self, image: Image | None) -> ImageRef:
        """The :class:`ImageRef` for ``image`` (a placeholder when it cannot be shown)."""
        if image is None:
            return ImageRef(missing="no image recorded")
        if image.path is not None:
            key = f"file:{image.path}"
        elif image.loaded:
            key = f"mem:{image.digest()}"  # built in code and never saved
        else:
            return ImageRef(missing="image was never saved", width=image.width, height=image.height)
        if key not in self._cache:
            self._cache[key] = self._resolve(image)
        return self._cache[key]

    def _resolve(self, image: Image) -> ImageRef:
        size = {"width": image.width, "height": image.height}
        source = Path(self.base_dir, image.path) if image.path is not None else None
        if source is not None and not image.loaded and not source.is_file():
            return ImageRef(missing=f"file not found: {image.path}", **size)
        if self.mode == "copy" and source is not None and source.is_file():
            return ImageRef(src=self._copy(source), **size)
        try:
            pil = image.to_pil(self.base_dir)
        except (OSError, ValueError) as exc:
            return ImageRef(missing=f"cannot read {image.path}: {exc}", **size)
        if self.mode == "copy":
            target = self.files_dir / f"{image.digest()[:20]}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            pil.save(target, format="PNG")
            return ImageRef(src=self._relative(target), **size)
        return ImageRef(src=self._data_uri(pil), **size)

    def _data_uri(self, pil: Any) -> str:
        from PIL import Image as PILImage

        thumb = pil.convert("RGB")
        if max(thumb.size) > self.max_side:
            thumb.thumbnail((self.max_side, self.max_side), PILImage.Resampling.LANCZOS)
        buf = io.BytesIO()
        thumb.save(buf, format="JPEG", quality=self.jpeg_quality)
        return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")

    def _copy(self, source: Path) -> str:
        self.files_dir.mkdir(parents=True, exist_ok=True)
        target = self.files_dir / source.name
        n = 1
        # Saved images are named by content hash; a clash with different bytes means two
        # folders reused a name, so keep both rather than overwrite one.
        while target.exists() and target.read_bytes() != source.read_bytes():
            target = self.files_dir / f"{source.stem}_{n}{source.suffix}"
            n += 1
        if not target.exists():
            shutil.copyfile(source, target)
        return self._relative(target)

    def _relative(self, target: Path) -> str:
        return target.resolve().relative_to(self.page_path.parent.resolve()).as_posix()
