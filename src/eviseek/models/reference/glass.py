"""Whether an object stands inside a clear glass jar, read from a view looking down on the jar.

From the side, an object just behind a clear jar shows through it as if it stood inside; from
above, the jar's footprint is a square of slightly tinted tabletop (the glass lightens the wood
under it, its walls draw a darker frame) and an object inside shows within that square, one
behind it outside. Only pixels are used: the jar is the largest patch of wood-coloured pixels
that differ from the bare tabletop's own colour.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from eviseek.models.reference.vision import Blob, View

TINT_MIN = 5
"""A wood-coloured pixel differing from the bare tabletop's colour by more than this (0-255, any
channel) is seen through glass (ours: the glass lifts the wood about 10-20 levels per channel,
its walls lower it by about 10)."""
MIN_JAR_PX = 150
"""Fewer tinted pixels than this is no jar (a seam, an edge)."""


@dataclass
class JarView:
    """The jar's footprint in one view and where the object stands relative to it."""

    jar_px: int
    inside_share: float
    """Share of the object's pixels inside the jar's filled footprint."""
    touches_edge: bool


def jar_mask(view: View) -> np.ndarray | None:
    """The jar's footprint (filled) in ``view``, or None when no jar shows."""
    if view.rgb is None or view.free is None:
        return None
    px = view.rgb.reshape(-1, 3)
    labels = view.labels.reshape(-1)
    wood = view.free.reshape(-1) & (labels < 0)
    if wood.sum() < 100:
        return None
    codes = (px[:, 0].astype(np.int64) << 16) | (px[:, 1].astype(np.int64) << 8) | px[:, 2]
    table = int(np.bincount(codes[wood]).argmax())
    base = np.array([(table >> 16) & 255, (table >> 8) & 255, table & 255], dtype=np.int16)
    diff = np.abs(view.rgb.astype(np.int16) - base).max(axis=2)
    tinted = view.free & (view.labels < 0) & (diff > TINT_MIN)
    lab, n = ndimage.label(tinted)
    if n == 0:
        return None
    sizes = ndimage.sum(tinted, lab, range(1, n + 1))
    k = int(np.argmax(sizes))
    if sizes[k] < MIN_JAR_PX:
        return None
    jar = lab == k + 1
    jar = ndimage.binary_closing(jar, structure=np.ones((3, 3), bool), iterations=2)
    return np.asarray(ndimage.binary_fill_holes(jar))


def look(view: View, target: Blob | None) -> JarView | None:
    """Measure the jar and the target in ``view`` (None when either is missing)."""
    if target is None:
        return None
    jar = jar_mask(view)
    if jar is None:
        return None
    sub = jar[target.top : target.bottom, target.left : target.left + target.width]
    inside = float(sub[target.mask].mean()) if target.area else 0.0
    ys, xs = np.nonzero(jar)
    edge = bool(ys.min() <= 0 or xs.min() <= 0 or ys.max() >= view.height - 1 or xs.max() >= view.width - 1)
    return JarView(int(jar.sum()), inside, edge or target.touches_edge)
