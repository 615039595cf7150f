"""Which size a vision-language processor shows an image at, and which frame zoom boxes use.

Qwen-VL processors resize every image to multiples of ``patch_size * merge_size`` pixels
within a pixel budget. A model's zoom box is written in the frame of the image as it saw it
(``shown``), in original pixels (``original``) or on a 0..1000 grid (``normalized_1000``, as
Qwen3-VL writes boxes). Shared by the TRL and verl integrations.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel

from eviseek.errors import ConfigError

Coordinates = Literal["shown", "original", "normalized_1000"]


class ImageFrame(BaseModel):
    """How a processor resizes images (Qwen-VL style: multiples of ``factor`` pixels).

    ``shown_size`` answers "at which size does the vision tower see this image", which is the
    frame of ``shown`` boxes. Picklable, so trainers can copy tool factories that hold it.
    """

    factor: int = 28
    min_pixels: int = 56 * 56
    max_pixels: int = 28 * 28 * 1280

    @classmethod
    def from_processor(cls, processor: Any) -> ImageFrame:
        """Read patch size, merge size and pixel limits from a Qwen-VL image processor."""
        ip = getattr(processor, "image_processor", processor)
        patch = getattr(ip, "patch_size", None)
        merge = getattr(ip, "merge_size", None)
        size = getattr(ip, "size", None) or {}
        if not patch or not merge:
            raise ConfigError(
                f"the image processor {type(ip).__name__} has no patch/merge size, so the shown frame is "
                "unknown; set zoom.coordinates to 'original' or 'normalized_1000'"
            )

        def get(key: str, fallback: str, default: int) -> int:
            value = size.get(key) if isinstance(size, dict) else getattr(size, key, None)
            return int(value or getattr(ip, fallback, None) or default)

        return cls(
            factor=int(patch) * int(merge),
            min_pixels=get("shortest_edge", "min_pixels", 56 * 56),
            max_pixels=get("longest_edge", "max_pixels", 28 * 28 * 1280),
        )

    def shown_size(self, width: int, height: int) -> tuple[int, int]:
        """``(width, height)`` after the processor's resize (rounded to the factor, within budget)."""
        h, w = smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
        return w, h


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen-VL's resize rule: round each side to ``factor``, then scale into the pixel budget."""
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


def box_frame(coordinates: Coordinates, frame: ImageFrame, width: int, height: int) -> tuple[int, int]:
    """The ``(width, height)`` of the frame boxes are written in, for an image of that size."""
    if coordinates == "shown":
        return frame.shown_size(width, height)
    if coordinates == "normalized_1000":
        return 1000, 1000
    return width, height
