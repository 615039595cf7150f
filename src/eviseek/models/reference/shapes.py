"""A shape guess for one blob: cube, cylinder, ball, cone or pyramid.

Three cues do most of the work. *Flatness*: a flat face renders in one exact colour, so boxes
and pyramids are made of a few uniform patches while balls, cylinder sides and many-faceted
cones are gradients. *Top width*: seen from the side or at a slant, a cone or a pyramid narrows
to a point, a box or a cylinder does not, a ball is in between. *Outline fill*: a disc fills
about 79 per cent of its bounding box, a triangle about half.

Each shape has a prototype cue vector for a low view and one for a view looking down (the cues
change with elevation); the guess is the nearest prototype among the shapes allowed. Prototype
values were read off renders of scenes from generator seeds that belong to neither the dev nor
the test split, then rounded; they encode "what these shapes look like", not any question.
"""

from __future__ import annotations

from eviseek.models.reference.vision import Blob

SHAPES: tuple[str, ...] = ("cube", "cylinder", "ball", "cone", "pyramid")
FLAT_FACED = ("cube", "pyramid")
"""Shapes made of flat faces, each rendering in one uniform shade."""
CURVED = ("cylinder", "ball", "cone")
"""Shapes with curved surfaces, rendering as gradients."""

# cue: (weight, spread). Distances are sums of ((value - prototype) / spread)^2 * weight.
_CUES: dict[str, tuple[float, float]] = {
    "flat": (1.0, 0.12),
    "top": (1.0, 0.18),
    "fill": (0.7, 0.1),
    "main": (0.6, 0.15),
    "two": (0.6, 0.15),
    "around": (0.5, 0.2),
    "rings": (0.5, 0.12),
    "inner": (0.8, 0.05),
}

_LOW: dict[str, dict[str, float]] = {
    "cube": {"flat": 0.97, "top": 0.92, "fill": 0.92, "two": 0.99},
    "cylinder": {"flat": 0.58, "top": 0.92, "fill": 0.9, "main": 0.33},
    "ball": {"flat": 0.5, "top": 0.57, "fill": 0.77, "main": 0.4},
    "cone": {"flat": 0.72, "top": 0.15, "fill": 0.54},
    "pyramid": {"flat": 0.95, "top": 0.17, "fill": 0.55, "two": 0.99},
}
"""Cue prototypes for views from near table height (open space visible above the table)."""

_STEEP: dict[str, dict[str, float]] = {
    "cube": {"flat": 0.93, "two": 0.94, "main": 0.65, "fill": 0.75, "inner": 0.05},
    "cylinder": {"flat": 0.3, "main": 0.12, "fill": 0.78, "around": 0.55, "rings": 0.19, "inner": 0.07},
    "ball": {"flat": 0.14, "main": 0.08, "fill": 0.77, "around": 0.47, "rings": 0.32, "inner": 0.08},
    "cone": {"flat": 0.56, "main": 0.3, "fill": 0.72, "around": 0.75, "rings": 0.06, "inner": 0.16},
    "pyramid": {"flat": 0.85, "two": 0.76, "main": 0.45, "fill": 0.64, "around": 0.68, "rings": 0.04},
}
"""Cue prototypes for views looking straight down on the table."""

_MID: dict[str, dict[str, float]] = {
    "cube": {"flat": 0.93, "two": 0.94, "main": 0.57, "top": 0.52, "fill": 0.7, "inner": 0.22},
    "cylinder": {"flat": 0.36, "main": 0.18, "top": 0.7, "fill": 0.8, "inner": 0.14},
    "ball": {"flat": 0.18, "main": 0.14, "top": 0.61, "fill": 0.78, "inner": 0.13},
    "cone": {"flat": 0.52, "main": 0.22, "top": 0.25, "fill": 0.66, "inner": 0.12},
    "pyramid": {"flat": 0.87, "two": 0.92, "main": 0.55, "top": 0.38, "fill": 0.63, "inner": 0.15},
}
"""Cue prototypes for views looking down at a slant (30 to 60 degrees below the horizon).
A picture does not say which of the two downward kinds it is, so a steep view is compared with
both and each shape keeps its nearer prototype."""


def cues(blob: Blob) -> dict[str, float]:
    """The cue values of ``blob``."""
    shades = blob.shades or [0.0]
    around, rings, inner = blob.radial
    return {
        "around": around,
        "rings": rings,
        "inner": inner,
        "flat": blob.flatness,
        "top": blob.band_width(0.0, 0.2),
        "fill": blob.extent,
        "main": shades[0],
        "two": sum(shades[:2]),
    }


def shape_scores(blob: Blob, *, steep: bool) -> dict[str, float]:
    """Distance of ``blob`` to each shape's prototype (smaller is more alike)."""
    values = cues(blob)
    tables = [_STEEP, _MID] if steep else [_LOW]
    out: dict[str, float] = {}
    for shape in SHAPES:
        best = float("inf")
        for table in tables:
            d = 0.0
            for cue, target in table[shape].items():
                weight, spread = _CUES[cue]
                d += weight * ((values[cue] - target) / spread) ** 2
            best = min(best, d)
        out[shape] = best
    return out


def classify(blob: Blob, *, steep: bool, allowed: list[str] | None = None) -> tuple[str, float]:
    """The most alike shape among ``allowed`` (default: all) and a margin-based confidence in [0, 1].

    The confidence grows with the gap between the best and the second-best distance; a blob too
    small to show shading gets a low one whatever its scores.
    """
    scores = shape_scores(blob, steep=steep)
    names = [s for s in (allowed or SHAPES) if s in scores] or list(SHAPES)
    ranked = sorted(names, key=lambda s: scores[s])
    best = ranked[0]
    if len(ranked) == 1:
        return best, 1.0
    gap = scores[ranked[1]] - scores[best]
    conf = gap / (gap + 4.0)
    if blob.area < 40:
        conf *= blob.area / 40.0
    return best, float(conf)
