"""Telling a house's small objects apart by the shape inside their colour blob (ours).

A small object in a house is drawn from parts (``eviseek.envs.house.looks``): a lamp is a coloured
shade on a thin grey stem, a bottle a body that narrows to a neck under a dark cap, a vase a round
belly under a narrow neck and a flared rim, a laptop a coloured base and lid framing a dark
screen, a book two coloured covers round pale pages, a cup a short body with a handle on one side.
So the blob of the object's colour carries more than its bounding box: how wide it is at the top,
the middle and the bottom, where it is widest, whether it is lopsided (a handle), how much of its
box is a hole or dark (a screen), what lies just below it (a stem) and how big it is in metres.

Its size in metres comes from the picture alone: the camera is level at a known height, so a
blob's lowest row says how far away the surface it stands on is, given that surfaces are about
0.75 m high (0.42-0.9 m: a guess good to about a third).

Each category (and ``furniture``: every other blob below the horizon, from furniture, walls and
floors seen through doorways) is one row of :data:`LOOKS`: the mean and spread of every feature,
measured by ``scripts/house_object_calibration.py`` on houses from seeds no split uses. A blob is
read as the category whose row it fits best (a diagonal Gaussian); a blob whose best fit is
``furniture``, or which fits no row well, is not a small object.
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.models.reference.vision import COLOR_NAMES, Blob, View

CAMERA_HEIGHT = 1.5
"""The house camera's height (metres; ``docs/house.md``)."""
SURFACE_HEIGHT = 0.75
"""A typical height of what small objects stand on (metres; tables, desks, cabinets: 0.42-0.9)."""
HFOV_DEG = 90.0
"""The house camera's horizontal field of view."""

FEATURES: tuple[str, ...] = (
    "log_aspect",
    "fill",
    "own",
    "dark",
    "top_width",
    "mid_width",
    "bottom_width",
    "widest_at",
    "lopsided",
    "grey_below",
    "floor_below",
    "flatness",
    "log_height_m",
    "log_width_m",
)
"""What :func:`features` measures of a blob, in order."""

LOOKS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "cup": (
        (0.398, 0.88, 0.877, 0.001, 0.831, 0.969, 0.788, 0.201, 0.027, 0.151, 0.061, 0.468, -1.807, -2.205),
        (0.265, 0.097, 0.097, 0.03, 0.102, 0.112, 0.154, 0.146, 0.032, 0.338, 0.174, 0.128, 0.279, 0.218),
    ),
    "vase": (
        (0.66, 0.659, 0.658, 0.004, 0.654, 0.558, 0.791, 0.755, 0.019, 0.328, 0.039, 0.406, -1.024, -1.683),
        (0.14, 0.041, 0.041, 0.03, 0.074, 0.063, 0.058, 0.143, 0.03, 0.39, 0.172, 0.139, 0.135, 0.184),
    ),
    "book": (
        (-0.714, 0.587, 0.523, 0.001, 0.666, 0.833, 0.381, 0.381, 0.034, 0.149, 0.039, 0.821, -1.986, -1.272),
        (0.404, 0.144, 0.113, 0.03, 0.206, 0.157, 0.196, 0.205, 0.03, 0.307, 0.157, 0.105, 0.303, 0.449),
    ),
    "ball": (
        (-0.035, 0.764, 0.764, 0.003, 0.635, 0.967, 0.614, 0.418, 0.013, 0.001, 0.0, 0.426, -1.436, -1.401),
        (0.117, 0.055, 0.056, 0.03, 0.079, 0.033, 0.115, 0.083, 0.03, 0.03, 0.03, 0.144, 0.317, 0.343),
    ),
    "box": (
        (-0.153, 0.819, 0.818, 0.014, 0.813, 0.92, 0.671, 0.174, 0.021, 0.112, 0.001, 0.911, -1.15, -0.997),
        (0.256, 0.119, 0.119, 0.031, 0.118, 0.138, 0.173, 0.113, 0.035, 0.293, 0.03, 0.05, 0.234, 0.343),
    ),
    "bottle": (
        (0.99, 0.751, 0.75, 0.003, 0.411, 0.956, 0.806, 0.377, 0.019, 0.23, 0.009, 0.432, -1.157, -2.147),
        (0.286, 0.082, 0.082, 0.03, 0.098, 0.076, 0.202, 0.11, 0.03, 0.368, 0.035, 0.187, 0.428, 0.379),
    ),
    "lamp": (
        (0.072, 0.948, 0.948, 0.0, 0.937, 0.994, 0.876, 0.068, 0.005, 0.459, 0.034, 0.669, -0.939, -1.011),
        (0.224, 0.03, 0.03, 0.03, 0.055, 0.03, 0.067, 0.044, 0.03, 0.234, 0.164, 0.101, 0.203, 0.29),
    ),
    "laptop": (
        (-0.255, 0.494, 0.302, 0.453, 0.538, 0.609, 0.584, 0.595, 0.114, 0.028, 0.0, 0.779, -1.087, -0.833),
        (0.554, 0.228, 0.142, 0.172, 0.249, 0.348, 0.232, 0.327, 0.078, 0.103, 0.03, 0.132, 0.583, 0.635),
    ),
    "furniture": (
        (-0.049, 0.685, 0.681, 0.021, 0.653, 0.839, 0.554, 0.256, 0.046, 0.202, 0.49, 0.93, -1.166, -1.117),
        (0.904, 0.217, 0.218, 0.091, 0.238, 0.248, 0.273, 0.238, 0.055, 0.363, 0.441, 0.059, 0.579, 0.772),
    ),
}
"""Per category (and ``furniture``): mean and spread of each feature of :data:`FEATURES`,
measured on seeds 9200-9205 (three views of every small object; ``python
scripts/house_object_calibration.py --fit 9200-9205 --per-object 3``)."""

MIN_AREA = 20
"""Blobs smaller than this many pixels (at 320 px width: :func:`area_scale`) are not read at all
(a few pixels say nothing of shape)."""
NEAR_AREA = 120
"""Blobs at least this big are read with confidence; smaller ones are worth walking closer to."""
FURNITURE_BIAS = 0.5
"""Taken off the ``furniture`` row's score before the best row is chosen (more: fewer things read
as small objects); chosen on the fit seeds by the calibration script."""
MAX_FIT = 3.0
"""A blob whose mean squared standard score to its best category exceeds this is not an object."""


def area_scale(width: int) -> float:
    """How many pixels a thing covers in a frame ``width`` pixels wide for each pixel it covers
    at 320: the horizontal field of view is fixed, so the focal length grows with the width and
    an area with its square (whatever the height: pixels are square)."""
    return (width / 320) ** 2


def distance_m(view: View, bottom: int) -> float | None:
    """How far away (metres, along the ground) a surface is whose front edge shows at row
    ``bottom``, if it is ``SURFACE_HEIGHT`` high (``None`` at or above the horizon)."""
    f = view.width / 2 / math.tan(math.radians(HFOV_DEG / 2))
    below = bottom - view.height / 2
    if below <= 1:
        return None
    return (CAMERA_HEIGHT - SURFACE_HEIGHT) * f / below


def features(view: View, blob: Blob, floor: np.ndarray | None = None) -> np.ndarray:
    """The feature vector (:data:`FEATURES`) of ``blob`` in ``view``; ``floor`` marks the pixels
    that show a floor (a piece of furniture stands on the floor, a small object on furniture)."""
    assert view.rgb is not None
    h, w = blob.height, blob.width
    rows = blob.row_widths
    widest = float(rows.max()) if rows.size else 1.0
    n = len(rows)

    def band(lo: float, hi: float) -> float:
        a = int(lo * n)
        b = max(a + 1, math.ceil(hi * n))
        return float(rows[a:b].mean() / widest)

    _, xs = np.nonzero(blob.mask)
    lopsided = abs(float(xs.mean()) - (w - 1) / 2) / w if xs.size else 0.0
    own_label = COLOR_NAMES.index(blob.color)
    crop = view.labels[blob.top : blob.bottom, blob.left : blob.left + w]
    own = float((crop == own_label).mean())
    px = view.rgb[blob.top : blob.bottom, blob.left : blob.left + w].astype(np.int16)
    dark = float((px.max(axis=2) < 70).mean())
    # What shows just below the blob's middle: a lamp's stem is grey, a table top is not.
    cx = blob.left + w // 2
    half = max(1, w // 8)
    strip = view.rgb[blob.bottom : blob.bottom + max(2, h // 2), max(0, cx - half) : cx + half + 1]
    if strip.size:
        s = strip.astype(np.int16)
        grey = float(((s.max(axis=2) - s.min(axis=2)) < 18).mean())
    else:
        grey = 0.0
    under = floor[blob.bottom : blob.bottom + 3, blob.left : blob.left + w] if floor is not None else None
    floor_below = float(under.mean()) if under is not None and under.size else 0.0
    d = distance_m(view, blob.bottom)
    f = view.width / 2 / math.tan(math.radians(HFOV_DEG / 2))
    scale = (d if d is not None else 8.0) / f
    return np.array(
        [
            math.log(h / max(1, w)),
            blob.extent,
            own,
            dark,
            band(0.0, 0.25),
            band(0.375, 0.625),
            band(0.75, 1.0),
            float(np.argmax(rows)) / max(1, n - 1),
            lopsided,
            grey,
            floor_below,
            blob.flatness,
            math.log(max(h * scale, 1e-3)),
            math.log(max(w * scale, 1e-3)),
        ],
        dtype=np.float64,
    )


def fits(x: np.ndarray) -> dict[str, float]:
    """Mean squared standard score of feature vector ``x`` against every row of :data:`LOOKS`
    (smaller fits better), plus the log of the spreads so rows of wide spread pay for it."""
    out: dict[str, float] = {}
    for cat, (mean, spread) in LOOKS.items():
        m = np.asarray(mean)
        s = np.asarray(spread)
        z = (x - m) / s
        out[cat] = float((z * z).mean() + 2.0 * np.log(s).mean())
    if "furniture" in out:
        out["furniture"] -= FURNITURE_BIAS
    return out


def recognise_x(x: np.ndarray) -> tuple[str | None, float]:
    """The small-object category feature vector ``x`` looks like (``None``: not a small object)
    and how far its fit is (the mean squared standard score; smaller is surer)."""
    scores = fits(x)
    best = min(scores, key=lambda c: scores[c])
    mean, spread = LOOKS[best]
    z = (x - np.asarray(mean)) / np.asarray(spread)
    fit = float((z * z).mean())
    if best == "furniture" or fit > MAX_FIT:
        return None, fit
    return best, fit


def recognise(view: View, blob: Blob, floor: np.ndarray | None = None) -> tuple[str | None, float]:
    """:func:`recognise_x` of ``blob``'s features in ``view`` (``floor``: see :func:`features`)."""
    return recognise_x(features(view, blob, floor))
