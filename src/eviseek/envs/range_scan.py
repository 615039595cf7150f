"""A range scan from a depth frame: what an RGB-D camera shows of the obstacles around it.

Shared by the house environment and the Habitat bridge (both give it to agents that declare an
RGB-D sensor, such as the frontier baseline, whose ``RangeScan`` reads it from
``Observation.metadata["range_scan"]``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs import view
from eviseek.types import Pose

SCAN_RAYS = 41
SCAN_MAX_RANGE = 6.0
"""Metres; a range scan reports this for rays that hit nothing nearer (ours)."""
OBSTACLE_Z = (0.1, 1.9)
"""Heights (metres above the floor) at which a seen point blocks walking (knee to head; ours)."""


def range_scan(
    depth: np.ndarray, pitch: float, hfov: float, *, camera_z: float = 1.5
) -> dict[str, Any] | None:
    """What a depth camera shows of the obstacles around it, as a scan in the plane it moves in.

    Returns ``{"ranges", "fov_deg", "max_range"}`` with rays evenly spaced in angle, left edge
    first (the frontier agent's ``RangeScan``). Each ray's range is the horizontal distance to the
    nearest point of its image column that stands between knee and head height (``OBSTACLE_Z``),
    so a bed or a table below the camera counts as well as a wall; a column that shows none reads
    ``max_range``. When even the top of the frame looks below level (a steep downward tilt) the
    frame cannot tell open floor from unseen space and there is no scan.
    """
    h, w = depth.shape
    f = (w / 2.0) / math.tan(math.radians(hfov) / 2.0)
    if pitch + math.degrees(math.atan((h / 2.0) / f)) < 0.0:
        return None
    cp = math.cos(math.radians(pitch))
    # The widest level bearing the frame shows (a level ray at x = tan(a) / cos(pitch)).
    half = math.degrees(math.atan((w / 2.0 - 0.5) / f * cp))
    fwd, right, up = view.view_vectors(Pose(z=camera_z, pitch=pitch))  # heading changes no distance
    rows, cols = np.arange(0, h, 3), np.arange(0, w, 2)
    y = (h / 2.0 - rows - 0.5) / f
    x = (cols + 0.5 - w / 2.0) / f
    d = depth[np.ix_(rows, cols)].astype(float)  # metres along the view axis
    rel = d[..., None] * (fwd + x[None, :, None] * right + y[:, None, None] * up)
    z = camera_z + rel[..., 2]
    # Each point goes to the ray of its own bearing (positive = left): in a tilted frame one image
    # column does not hold one bearing.
    bearing = np.degrees(np.arctan2(rel[..., 1], rel[..., 0]))
    slot = np.nan_to_num(
        (half - bearing) / (2.0 * half) * (SCAN_RAYS - 1), nan=-1.0, posinf=-1.0, neginf=-1.0
    )
    ray = np.round(slot).astype(int)
    seen = np.isfinite(d) & (d > 0.05) & (ray >= 0) & (ray < SCAN_RAYS)
    solid = seen & (z >= OBSTACLE_Z[0]) & (z <= OBSTACLE_Z[1])
    dist = np.hypot(rel[..., 0], rel[..., 1])[solid]
    order = np.argsort(-dist)  # farthest first, so the nearest point of each ray is written last
    ranges = np.full(SCAN_RAYS, SCAN_MAX_RANGE)
    ranges[ray[solid][order]] = dist[order]
    ranges = np.minimum(ranges, SCAN_MAX_RANGE)
    return {
        "ranges": [round(float(r), 3) for r in ranges],
        "fov_deg": round(2 * half, 3),
        "max_range": SCAN_MAX_RANGE,
    }
