"""The zoom-in tool as a pure function: a box in the shown frame -> a crop of the original image.

A model usually sees a resized copy of a high-resolution image (a provider or processor caps the
pixel count). The boxes it writes are in the coordinates of that *shown* copy, so :func:`zoom`
scales them back to the original pixels, clamps them to the image, rejects boxes that are too
small or too thin, and cuts the crop from the ORIGINAL pixels (not from the shown copy), so the
zoom really adds detail.

A bad box is a mistake of the model, not of the program: :func:`zoom` never raises on it and
returns a :class:`ZoomError` whose ``message`` is written to be read by the model.

Normalised coordinates work through ``shown_size`` too: a model that writes boxes on a
0..1000 grid (Qwen3-VL style) is handled with ``shown_size=(1000, 1000)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from eviseek.types import Image

ZOOM_TOOL_NAME = "image_zoom_in_tool"
"""The name of the zoom action, as the environment accepts it and as models call it."""

ZoomErrorCode = Literal["bad_format", "reversed", "outside", "too_small", "too_thin"]


class ZoomSettings(BaseModel):
    """Validity limits of a zoom box and the size cap of the returned crop."""

    min_side: int = Field(default=28, ge=1)
    """Shortest side, in ORIGINAL pixels after clamping, of an acceptable box. 28 is the patch
    granularity of Qwen-VL vision encoders: a smaller crop carries less than one merged patch."""
    max_aspect: float = Field(default=100.0, gt=1.0)
    """Longest over shortest side above which a box is rejected as a line, not a region."""
    max_output_pixels: int | None = Field(default=None, ge=1)
    """If set, a crop with more pixels is downscaled (aspect kept) before it is returned."""


class ZoomResult(BaseModel):
    """A successful zoom: the crop and both forms of the box that produced it."""

    ok: Literal[True] = True
    crop: Image
    box_shown: tuple[float, float, float, float]
    """The clamped box in the frame the model was shown."""
    box_original: tuple[int, int, int, int]
    """The box in original pixels, ``[x1, y1, x2, y2)`` (right and bottom exclusive)."""
    clamped: bool = False
    """Whether the requested box reached outside the image and was cut to fit."""
    resized: bool = False
    """Whether the crop was downscaled to respect ``max_output_pixels``."""
    label: str | None = None

    def describe(self) -> str:
        """One line for the model, in its own frame: ``region [10, 20, 300, 240] shown at 290x220 px``."""
        box = ", ".join(f"{v:g}" for v in (round(c, 1) for c in self.box_shown))
        note = " (your box reached outside the image and was clamped)" if self.clamped else ""
        what = f" ({self.label})" if self.label else ""
        return f"region [{box}]{what} at full resolution, {self.crop.width}x{self.crop.height} px{note}"


class ZoomError(BaseModel):
    """A rejected zoom call; ``message`` explains the mistake to the model."""

    ok: Literal[False] = False
    code: ZoomErrorCode
    message: str
    bbox: list[Any] | None = None


def _as_array(image: Image | np.ndarray | Any) -> np.ndarray:
    if isinstance(image, Image):
        return image.array()
    if isinstance(image, np.ndarray):
        return image
    if hasattr(image, "convert"):  # a PIL image
        return np.asarray(image.convert("RGB"))
    raise TypeError(f"zoom() needs an eviseek Image, a numpy array or a PIL image, got {type(image)!r}")


def _coerce_box(bbox: Any) -> list[float] | ZoomError:
    """Four finite numbers, or an error naming what was wrong with the model's box."""
    if isinstance(bbox, dict):
        bbox = bbox.get("bbox_2d", bbox.get("bbox"))
    if isinstance(bbox, (str, bytes)) or not isinstance(bbox, Sequence):
        return ZoomError(
            code="bad_format",
            message=f"bbox_2d must be a list of four numbers [x1, y1, x2, y2], got {bbox!r:.80}",
            bbox=None,
        )
    values = list(bbox)
    if len(values) != 4:
        return ZoomError(
            code="bad_format",
            message=f"bbox_2d must have exactly four numbers [x1, y1, x2, y2], got {len(values)}",
            bbox=values[:8],
        )
    out: list[float] = []
    for v in values:
        if isinstance(v, bool):
            v = None  # True/False are ints in Python; a box of booleans is a mistake
        try:
            f = float(v)  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            return ZoomError(
                code="bad_format",
                message=f"bbox_2d values must be numbers, got {v!r:.40}",
                bbox=values,
            )
        if not math.isfinite(f):
            return ZoomError(code="bad_format", message="bbox_2d values must be finite numbers", bbox=values)
        out.append(f)
    return out


# Long because every way a requested box can be wrong gets its own message for the model, checked
# in order (read, clamp in the shown frame, map to original pixels, size), after a docstring that
# spells out both frames; about a quarter of it is that docstring.
def zoom(
    image: Image | np.ndarray | Any,
    bbox: Any,
    shown_size: tuple[int, int] | None = None,
    *,
    label: str | None = None,
    settings: ZoomSettings | None = None,
) -> ZoomResult | ZoomError:
    """Crop ``image`` to ``bbox`` given in the frame of the image as the model was shown it.

    Args:
        image: the ORIGINAL image (eviseek ``Image``, ``HxWx3`` uint8 array or PIL image).
        bbox: ``[x1, y1, x2, y2]`` with ``(x1, y1)`` the top-left corner, in shown coordinates.
            Anything else (strings, wrong length, NaN) yields a ``bad_format`` error.
        shown_size: ``(width, height)`` of the frame the box refers to; ``None`` means the
            original size. ``(1000, 1000)`` reads boxes on a normalised 0..1000 grid.
        label: the model's optional name for the region, kept on the result.
        settings: validity limits (minimum side, maximum aspect, crop size cap).

    Returns:
        :class:`ZoomResult` with the crop (a view of the original pixels, copied once), or
        :class:`ZoomError` whose message tells the model what to fix. Never raises on ``bbox``.
    """
    s = settings or ZoomSettings()
    arr = _as_array(image)
    height, width = int(arr.shape[0]), int(arr.shape[1])
    shown_w, shown_h = shown_size if shown_size is not None else (width, height)
    if shown_w <= 0 or shown_h <= 0:
        raise ValueError(f"shown_size must be positive, got {shown_size!r}")

    box = _coerce_box(bbox)
    if isinstance(box, ZoomError):
        return box
    x1, y1, x2, y2 = box
    if x2 <= x1 or y2 <= y1:
        return ZoomError(
            code="reversed",
            message=(
                f"bbox_2d {_fmt(box)} is empty or reversed: x2 must be greater than x1 and y2 "
                "greater than y1 ([left, top, right, bottom])"
            ),
            bbox=box,
        )
    # Clamp in the shown frame, where the model's numbers live.
    cx1, cy1 = min(max(x1, 0.0), shown_w), min(max(y1, 0.0), shown_h)
    cx2, cy2 = min(max(x2, 0.0), shown_w), min(max(y2, 0.0), shown_h)
    clamped = (cx1, cy1, cx2, cy2) != (x1, y1, x2, y2)
    if cx2 <= cx1 or cy2 <= cy1:
        return ZoomError(
            code="outside",
            message=(
                f"bbox_2d {_fmt(box)} lies outside the image, whose size is {shown_w}x{shown_h} "
                "(width x height); choose a box inside it"
            ),
            bbox=box,
        )
    # Map to original pixels: scale each axis, floor the top-left and ceil the bottom-right so
    # the crop always covers the requested region.
    sx, sy = width / shown_w, height / shown_h
    ox1 = max(0, min(width, math.floor(cx1 * sx + 1e-9)))
    oy1 = max(0, min(height, math.floor(cy1 * sy + 1e-9)))
    ox2 = max(0, min(width, math.ceil(cx2 * sx - 1e-9)))
    oy2 = max(0, min(height, math.ceil(cy2 * sy - 1e-9)))
    bw, bh = ox2 - ox1, oy2 - oy1
    if min(bw, bh) < s.min_side:
        need_w = s.min_side / sx
        need_h = s.min_side / sy
        return ZoomError(
            code="too_small",
            message=(
                f"bbox_2d {_fmt(box)} is too small to zoom into: each side must span at least "
                f"{need_w:.0f} (width) and {need_h:.0f} (height) in the image you see; draw a larger box"
            ),
            bbox=box,
        )
    if max(bw, bh) / min(bw, bh) > s.max_aspect:
        return ZoomError(
            code="too_thin",
            message=(
                f"bbox_2d {_fmt(box)} is too thin (aspect ratio above {s.max_aspect:g}); "
                "draw a box around a region, not a line"
            ),
            bbox=box,
        )
    crop_arr = arr[oy1:oy2, ox1:ox2]
    resized = False
    if s.max_output_pixels is not None and bw * bh > s.max_output_pixels:
        from PIL import Image as PILImage

        scale = math.sqrt(s.max_output_pixels / (bw * bh))
        new_size = (max(1, int(bw * scale)), max(1, int(bh * scale)))
        crop_arr = np.asarray(PILImage.fromarray(crop_arr).resize(new_size, PILImage.Resampling.BILINEAR))
        resized = True
    crop = Image.from_array(crop_arr)  # copies the slice once into a contiguous array
    return ZoomResult(
        crop=crop,
        box_shown=(cx1, cy1, cx2, cy2),
        box_original=(ox1, oy1, ox2, oy2),
        clamped=clamped,
        resized=resized,
        label=label,
    )


def fit_within(width: int, height: int, max_pixels: int | None) -> tuple[int, int]:
    """The size a ``width x height`` image is shown at when capped to ``max_pixels`` (aspect kept)."""
    if max_pixels is None or width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    return max(1, int(width * scale)), max(1, int(height * scale))


def _fmt(box: Sequence[float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in box) + "]"
