"""What a draped white or grey cloth hides, read from a view looking straight down on it.

A cloth sheet lies flat on the table except where it rests on the hidden object. Seen from above,
every horizontal part of the cloth renders in one brightness (the same light falls on it), and the
slopes in other shades. So the flat skirt around the object and any flat top on it share one
brightness, and the ring of slopes between them shows what the object is:

* a cube or a cylinder leaves a large flat top inside the ring (a square or a disc);
* a ball leaves a small flat spot on a smoothly shaded dome;
* a cone or a pyramid leaves none: the slopes run up to a peak, a cone's with a sharp bright
  and dark contrast about its tip, a pyramid's in four broad faces.

Only pixels are used: the cloth is the largest region of colourless pixels (not the bluish floor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from eviseek.models.reference.vision import View

NEUTRAL_SPREAD = 6
"""A pixel whose channels differ by at most this much (0-255) is colourless: cloth, not wood or
the bluish-grey floor."""
FLAT_TOLERANCE = 2
"""A cloth pixel within this much (0-255) of the skirt's brightness is horizontal."""
FLAT_TOP_SHARE = 0.2
"""Flat top over the raised area at and above which the object has a flat top (cube, cylinder).
Ours, on 16 Deformable questions of tuning seeds 300-302 (not dev 1000 / test 2000) seen from
above: cubes and cylinders 0.23-0.38, balls 0.05-0.18, cones and pyramids 0.01."""
PEAK_SHARE = 0.03
"""Below this flat-top share the object ends in a peak (cone or pyramid), above it a dome (ball)."""
DISC_INDEX = 2.4
"""Flat-top area over its squared largest radius: a square gives 2, a disc pi. Ours, on the same
renders: cubes 2.15-2.57, cylinders 2.2-2.66 (about 6 in 8 told apart)."""
CONE_CONTRAST = 30.0
"""Brightness spread (0-255) near the middle of the raised part above which the peak is a cone's
(sharp tip, ours: one cone 42.6 against pyramids 15-21 on the same renders)."""

SHAPES_NEAREST: dict[str, tuple[str, ...]] = {
    "cube": ("cube", "cylinder", "pyramid", "ball", "cone"),
    "cylinder": ("cylinder", "cube", "ball", "cone", "pyramid"),
    "ball": ("ball", "cylinder", "cone", "cube", "pyramid"),
    "cone": ("cone", "pyramid", "ball", "cylinder", "cube"),
    "pyramid": ("pyramid", "cone", "cube", "ball", "cylinder"),
}
"""For each reading, the shapes to answer in order when the options leave it out."""


@dataclass
class Drape:
    """Measurements of one cloth seen from above."""

    cloth_px: int
    raised_px: int
    flat_top_share: float
    disc_index: float
    tip_contrast: float
    touches_edge: bool

    def shape(self) -> str:
        """The shape these measurements point to."""
        if self.flat_top_share >= FLAT_TOP_SHARE:
            return "cylinder" if self.disc_index >= DISC_INDEX else "cube"
        if self.flat_top_share >= PEAK_SHARE:
            return "ball"
        return "cone" if self.tip_contrast >= CONE_CONTRAST else "pyramid"


def _largest(mask: np.ndarray) -> np.ndarray:
    lab, n = ndimage.label(mask)
    if n == 0:
        return mask
    sizes = ndimage.sum(mask, lab, range(1, n + 1))
    return np.asarray(lab == int(np.argmax(sizes)) + 1)


def measure(view: View) -> Drape | None:
    """Find the cloth in ``view`` and measure its raised part (None when there is no cloth)."""
    if view.rgb is None:
        return None
    px = view.rgb.astype(np.int16)
    v = px.max(axis=2)
    neutral = (
        (np.abs(px[..., 0] - px[..., 1]) <= NEUTRAL_SPREAD)
        & (np.abs(px[..., 1] - px[..., 2]) <= NEUTRAL_SPREAD)
        & (v > 50)
    )
    if neutral.sum() < 200:
        return None
    cloth = np.asarray(ndimage.binary_fill_holes(_largest(neutral)))
    level = int(np.bincount(v[cloth]).argmax())  # the skirt is the largest part, all one shade
    flat = cloth & (np.abs(v - level) <= FLAT_TOLERANCE)
    flat_lab, n_flat = ndimage.label(flat)
    rim = cloth & ~ndimage.binary_erosion(cloth, iterations=2)
    on_rim = np.bincount(flat_lab[rim], minlength=n_flat + 1)
    on_rim[0] = 0
    if on_rim.max() == 0:
        return None
    skirt = flat_lab == int(on_rim.argmax())
    raised = _largest(np.asarray(ndimage.binary_fill_holes(cloth & ~skirt)) & ~skirt)
    raised_px = int(raised.sum())
    if raised_px < 30:
        return None
    top = _largest(raised & flat)
    top_px = int(top.sum())
    disc = 0.0
    if top_px > 5:
        ys, xs = np.nonzero(top)
        r2 = float(((ys - ys.mean()) ** 2 + (xs - xs.mean()) ** 2).max())
        disc = top_px / max(r2, 1.0)
    ys, xs = np.nonzero(raised)
    cy, cx = ys.mean(), xs.mean()
    yy, xx = np.mgrid[: view.height, : view.width]
    inner = raised & (np.hypot(yy - cy, xx - cx) < 0.35 * math.sqrt(raised_px / math.pi))
    contrast = float(v[inner].std()) if inner.any() else 0.0
    ys, xs = np.nonzero(cloth)
    edge = ys.min() <= 0 or xs.min() <= 0 or ys.max() >= view.height - 1 or xs.max() >= view.width - 1
    return Drape(int(cloth.sum()), raised_px, top_px / raised_px, disc, contrast, bool(edge))


def answer_option(shape: str, options: list[str]) -> str:
    """``shape`` if offered, else the offered shape nearest to it."""
    low = {o.lower(): o for o in options}
    for s in SHAPES_NEAREST.get(shape, (shape,)):
        if s in low:
            return low[s]
    return options[0] if options else shape
