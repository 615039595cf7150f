"""Pixel analysis for the reference policy: colour segmentation, blobs and their shape cues.

Everything here works on the RGB pixels of one image and nothing else. Colour words are mapped
to hand-written chromaticity prototypes (what "red" or "brown" looks like once lighting is
divided out), so a lit face and a shaded face of one object land in the same class. Blobs are
connected regions of one colour; each carries cheap geometric and shading cues that
:mod:`eviseek.models.reference.shapes` turns into a shape guess.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import ndimage

from eviseek.types import Image

COLOR_PROTOTYPES: dict[str, tuple[float, float, float]] = {
    "red": (0.88, 0.12, 0.12),
    "orange": (1.0, 0.52, 0.05),
    "yellow": (0.97, 0.87, 0.12),
    "green": (0.12, 0.66, 0.17),
    "cyan": (0.1, 0.8, 0.85),
    "blue": (0.13, 0.26, 0.9),
    "purple": (0.56, 0.16, 0.76),
    "pink": (0.98, 0.51, 0.76),
    "brown": (0.46, 0.27, 0.11),
}
"""Typical RGB of the colour words questions use. Only their chromaticity (RGB divided by the
brightest channel) matters, which is what survives shading."""

_BACKGROUND_PROTOTYPES: dict[str, tuple[float, float, float]] = {
    "wood": (0.8, 0.7, 0.55),
    "neutral": (0.9, 0.9, 0.9),
    "slate": (0.3, 0.32, 0.36),
}
"""Surfaces that are never question objects: a light wooden tabletop, white/grey things, a
bluish-grey floor. They compete with the colour words so that, e.g., wood is not called yellow."""

COLOR_NAMES: tuple[str, ...] = tuple(COLOR_PROTOTYPES)
_ALL = {**COLOR_PROTOTYPES, **_BACKGROUND_PROTOTYPES}
_NAMES = list(_ALL)
_CHROMA = np.array([np.asarray(v) / max(v) for v in _ALL.values()], dtype=np.float32)
_N_COLORS = len(COLOR_PROTOTYPES)

MAX_CHROMA_DISTANCE = 0.2
"""A pixel further than this from every prototype (in chromaticity) is left unlabelled."""
MIN_BRIGHTNESS = 0.12
"""Below this brightness chromaticity is noise; such pixels are left unlabelled."""
MIN_BLOB_AREA = 6
"""Regions smaller than this many pixels are ignored (specks at boundaries)."""


@dataclass
class Blob:
    """A connected region of one colour in one image."""

    color: str
    mask: np.ndarray
    """Boolean mask cropped to the bounding box."""
    rgb: np.ndarray
    """The image crop under the bounding box (uint8)."""
    top: int
    left: int
    image_height: int
    image_width: int

    @property
    def height(self) -> int:
        """Bounding-box height in pixels."""
        return int(self.mask.shape[0])

    @property
    def width(self) -> int:
        """Bounding-box width in pixels."""
        return int(self.mask.shape[1])

    @cached_property
    def area(self) -> int:
        """Pixel count."""
        return int(self.mask.sum())

    @cached_property
    def centroid(self) -> tuple[float, float]:
        """(x, y) centre of mass in image coordinates."""
        ys, xs = np.nonzero(self.mask)
        return float(xs.mean() + self.left), float(ys.mean() + self.top)

    @property
    def bottom(self) -> int:
        """Lowest row (exclusive) in image coordinates."""
        return self.top + self.height

    @property
    def touches_edge(self) -> bool:
        """Whether the region reaches the image border (it may be cut off)."""
        return (
            self.top <= 0
            or self.left <= 0
            or self.top + self.height >= self.image_height
            or self.left + self.width >= self.image_width
        )

    @cached_property
    def size(self) -> float:
        """A linear size: the square root of the area."""
        return math.sqrt(self.area)

    # --- shape cues -------------------------------------------------------------------------

    @cached_property
    def flatness(self) -> float:
        """Share of neighbouring pixel pairs inside the region with (nearly) identical colour.

        Flat faces render in one exact colour, curved surfaces in a gradient, so cubes and
        pyramids score high and balls, cones and cylinder sides low.
        """
        m = self.mask
        px = self.rgb.astype(np.int16)
        pairs = m[:, 1:] & m[:, :-1]
        same_h = (np.abs(px[:, 1:] - px[:, :-1]).max(axis=2) <= 2) & pairs
        pairs_v = m[1:, :] & m[:-1, :]
        same_v = (np.abs(px[1:, :] - px[:-1, :]).max(axis=2) <= 2) & pairs_v
        total = int(pairs.sum() + pairs_v.sum())
        return float(same_h.sum() + same_v.sum()) / total if total else 0.0

    @cached_property
    def shades(self) -> list[float]:
        """Shares of the region covered by its largest single-colour patches (largest first)."""
        px = self.rgb[self.mask].astype(np.int32)
        if len(px) == 0:
            return []
        codes = (px[:, 0] << 16) | (px[:, 1] << 8) | px[:, 2]
        _, counts = np.unique(codes, return_counts=True)
        shares = sorted((c / len(px) for c in counts), reverse=True)
        return [float(s) for s in shares[:6]]

    @cached_property
    def row_widths(self) -> np.ndarray:
        """Width of the region in each row, top to bottom."""
        return self.mask.sum(axis=1).astype(float)

    def band_width(self, lo: float, hi: float) -> float:
        """Mean row width between fractions ``lo`` and ``hi`` of the height, over the widest row."""
        w = self.row_widths
        n = len(w)
        if n == 0 or w.max() == 0:
            return 0.0
        a, b = int(lo * n), max(int(lo * n) + 1, math.ceil(hi * n))
        return float(w[a:b].mean() / w.max())

    @cached_property
    def extent(self) -> float:
        """Area over bounding-box area."""
        return self.area / float(self.height * self.width)

    @cached_property
    def radial(self) -> tuple[float, float, float]:
        """How brightness varies around the centre: (share explained by direction, share explained
        by distance from the centre, spread of brightness in the inner part over its mean).

        Seen from above, a cone or a pyramid is lit facet by facet around its apex (direction
        explains much), a ball darkens towards its rim (distance explains much), the flat top of
        a cube or a cylinder barely varies inside.
        """
        ys, xs = np.nonzero(self.mask)
        v = self.rgb[self.mask].astype(float).max(axis=1)
        if len(v) < 4:
            return 0.0, 0.0, 0.0
        cy, cx = ys.mean(), xs.mean()
        theta = np.arctan2(ys - cy, xs - cx)
        r = np.hypot(ys - cy, xs - cx)
        r = r / (r.max() + 1e-6)
        total = v.var() + 1e-6
        mean = v.mean()

        def explained(groups: np.ndarray) -> float:
            s = 0.0
            for g in np.unique(groups):
                sel = groups == g
                s += sel.sum() * (v[sel].mean() - mean) ** 2
            return float(s / len(v) / total)

        sectors = ((theta + math.pi) / (2 * math.pi) * 8).astype(int) % 8
        rings = np.minimum((r * 3).astype(int), 2)
        inner = r < 0.6
        spread = float(v[inner].std() / max(v[inner].mean(), 1e-6)) if inner.sum() > 3 else 0.0
        return explained(sectors), explained(rings), spread


@dataclass
class View:
    """One image analysed: per-pixel colour labels, blobs per colour word, background cues."""

    width: int
    height: int
    labels: np.ndarray
    """Per pixel: index into :data:`COLOR_NAMES`, or -1."""
    blobs: dict[str, list[Blob]] = field(default_factory=dict)
    sky: float = 0.0
    """Share of the top tenth of the image that is bright, colourless background (open space
    above the table, which only a low, level view shows)."""
    wood: float = 0.0
    """Share of the image covered by the wooden tabletop."""
    free: np.ndarray | None = None
    """Per pixel: tabletop or a coloured thing (not a white, grey or black wall, not the floor)."""
    rgb: np.ndarray | None = None
    """The pixels themselves (for cues no colour word names, such as a white or grey cloth)."""

    def of(self, color: str) -> list[Blob]:
        """Blobs of one colour word, largest first."""
        return self.blobs.get(color, [])

    def largest(self, color: str) -> Blob | None:
        """The largest blob of ``color`` (None if the colour is absent)."""
        found = self.of(color)
        return found[0] if found else None

    @property
    def steep(self) -> bool:
        """Whether the view looks down on the table (no open space at the top of the image)."""
        return self.sky < 0.05


def _classify(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-pixel nearest prototype index (over colour words and backgrounds) and validity."""
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.size == 0:
        return _classify_pixels(rgb)
    # A label depends on the pixel's colour alone, and a rendered view holds few distinct colours
    # (flat-shaded faces: tens to a few thousand among ~77,000 pixels), so each colour is
    # classified once and the labels are spread back over the pixels. Same arithmetic per colour,
    # so the same labels, bit for bit, as classifying every pixel.
    flat = rgb.reshape(-1, 3).astype(np.int32)
    codes = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    colours, where = _distinct(codes)
    palette = np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], axis=1).astype(np.uint8)
    idx, ok = _classify_pixels(palette[None])
    shape = rgb.shape[:2]
    return idx[0][where].reshape(shape), ok[0][where].reshape(shape)


def _distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for a picture's colour codes, without sorting
    all of them: the distinct colours of a sample, then every pixel looked up among them, and any
    colour the sample missed added. The colours are exactly the distinct codes, sorted, so the
    indices are np.unique's."""
    colours = np.unique(codes[::64])
    where = np.searchsorted(colours, codes)
    missed = colours[np.minimum(where, len(colours) - 1)] != codes
    if missed.any():
        colours = np.union1d(colours, codes[missed])
        where = np.searchsorted(colours, codes)
    return colours, where


def _classify_pixels(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_classify` computed pixel by pixel."""
    f = rgb.astype(np.float32) / 255.0
    v = f.max(axis=2)
    chroma = f / np.maximum(v, 1e-6)[..., None]
    d = np.linalg.norm(chroma[:, :, None, :] - _CHROMA[None, None, :, :], axis=3)
    idx = d.argmin(axis=2)
    ok = (d.min(axis=2) < MAX_CHROMA_DISTANCE) & (v > MIN_BRIGHTNESS)
    # Brown is a dark orange: tell them apart by how bright the pixel is as well as its hue.
    brown, orange = _NAMES.index("brown"), _NAMES.index("orange")
    warm = ok & ((idx == brown) | (idx == orange))
    idx = np.where(warm & (v < 0.52), brown, np.where(warm, orange, idx))
    return idx, ok


TABLE_UNDER_WHITE_LIGHT = (220, 192, 151)
"""How the bare tabletop renders under the usual white light (measured on tabletop renders)."""


def balanced(rgb: np.ndarray) -> np.ndarray:
    """``rgb`` with the light's colour and strength divided out, using the tabletop as the white
    reference: the tabletop is one flat plane, so its colour is the picture's most common one,
    and it is scaled back to how it looks under white light (a von Kries correction)."""
    flat = rgb.reshape(-1, 3).astype(np.int64)
    codes = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    mode = int(np.bincount(codes).argmax())
    seen = np.array([(mode >> 16) & 255, (mode >> 8) & 255, mode & 255], dtype=np.float32)
    gain = np.asarray(TABLE_UNDER_WHITE_LIGHT, dtype=np.float32) / np.maximum(seen, 1.0)
    return np.asarray(np.clip(rgb.astype(np.float32) * gain, 0, 255).astype(np.uint8))


def analyse(image: Image, *, balance: bool = False) -> View:
    """Analyse an image (cached by content, so repeated frames cost nothing).

    With ``balance`` the light's colour is divided out first (see :func:`balanced`), for scenes
    whose light has been changed."""
    key = image.digest() + (":balanced" if balance else "")
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    view = analyse_array(balanced(image.array()) if balance else image.array())
    _CACHE[key] = view
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return view


_CACHE: OrderedDict[str, View] = OrderedDict()
_CACHE_SIZE = 512


def analyse_array(rgb: np.ndarray) -> View:
    """Analyse an ``H x W x 3`` uint8 array."""
    h, w = rgb.shape[:2]
    idx, ok = _classify(rgb)
    labels = np.where(ok & (idx < _N_COLORS), idx, -1).astype(np.int8)
    f = rgb.astype(np.float32) / 255.0
    top = f[: max(1, h // 10)]
    sky = float((top.min(axis=2) > 0.9).mean())
    wood_mask = ok & (idx == _NAMES.index("wood"))
    wood = float(wood_mask.mean())
    view = View(width=w, height=h, labels=labels, sky=sky, wood=wood, free=wood_mask | (labels >= 0), rgb=rgb)
    structure = np.ones((3, 3), dtype=bool)
    for ci, name in enumerate(COLOR_NAMES):
        mask = labels == ci
        if mask.sum() < MIN_BLOB_AREA:
            continue
        # Close one-pixel cracks (edges between faces, specular glints) before labelling.
        mask = ndimage.binary_closing(mask, structure=structure, iterations=1) | mask
        lab, n = ndimage.label(mask, structure=structure)
        found: list[Blob] = []
        for k, sl in enumerate(ndimage.find_objects(lab), 1):
            if sl is None:
                continue
            sub = lab[sl] == k
            if sub.sum() < MIN_BLOB_AREA:
                continue
            sub = ndimage.binary_fill_holes(sub)
            found.append(
                Blob(
                    color=name,
                    mask=sub,
                    rgb=rgb[sl],
                    top=sl[0].start,
                    left=sl[1].start,
                    image_height=h,
                    image_width=w,
                )
            )
        if found:
            found.sort(key=lambda b: b.area, reverse=True)
            view.blobs[name] = found
        del n
    return view


def gap_between(a: Blob, b: Blob) -> float:
    """Smallest pixel distance between two blobs (0 when they touch or overlap)."""
    h, w = a.image_height, a.image_width
    ma = np.zeros((h, w), dtype=bool)
    ma[a.top : a.top + a.height, a.left : a.left + a.width] = a.mask
    mb = np.zeros((h, w), dtype=bool)
    mb[b.top : b.top + b.height, b.left : b.left + b.width] = b.mask
    if (ma & mb).any():
        return 0.0
    dist = ndimage.distance_transform_edt(~ma)
    return float(dist[mb].min()) - 1.0 if mb.any() else float("inf")
