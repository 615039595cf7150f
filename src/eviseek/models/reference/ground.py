"""Where a pixel lies on the tabletop: back-projection through a pinhole camera of known tilt.

The renders use a 60-degree vertical field of view (what any camera model of the picture would
have to assume; the policy takes it as known, as it does the picture's size). A pixel's ray meets
the plane of the table at a point whose distance scales with the camera's height above it, which
the policy does not know; so the points come out in units of that height. Comparisons between
points of one view (which is nearer, how far from a path relative to an object's width) do not
need the height.
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.models.reference.vision import View

HALF_FOV_DEG = 30.0
"""Half the vertical field of view of the tabletop renders."""


def focal_px(view: View) -> float:
    """The focal length in pixels."""
    return (view.height / 2) / math.tan(math.radians(HALF_FOV_DEG))


def ground_point(view: View, x: float, y: float, down_deg: float) -> np.ndarray | None:
    """The point (ahead, right) on the table plane that pixel (x, y) shows, in units of the
    camera's height above that plane, for a camera tilted ``down_deg`` below the horizon; None for
    a pixel at or above the horizon."""
    f = focal_px(view)
    u, v = (x - view.width / 2) / f, (y - view.height / 2) / f
    p = math.radians(down_deg)
    drop = math.sin(p) + v * math.cos(p)
    if drop <= 1e-6:
        return None
    t = 1.0 / drop
    return np.array([t * (math.cos(p) - v * math.sin(p)), t * u])
