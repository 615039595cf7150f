"""An occupancy map built only from what was seen (depth frames and camera poses).

What a Fine-EQA-style explorer works with: every depth pixel is lifted to a 3-D point; points near
the floor mark their cell *free*, points between knee and head height mark it *occupied*, and the
cells along each viewing ray before its hit are *free*. Everything else stays *unknown*. Frontiers
are free cells next to unknown ones. It needs no house spec, so an agent with a depth camera can
build it; :class:`~eviseek.envs.house.env.HouseOracle` keeps one per episode for scoring coverage.
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.envs import view
from eviseek.envs.range_scan import OBSTACLE_Z
from eviseek.types import Pose

UNKNOWN, FREE, OCCUPIED = 0, 1, 2
FLOOR_MAX_Z = 0.1
MAX_RANGE = 6.0
"""Depth beyond this many metres is not trusted (ours; TinyRenderer's depth is exact, a real
sensor's is not)."""


class SeenMap:
    """A 2-D grid of UNKNOWN / FREE / OCCUPIED cells centred on ``centre``."""

    def __init__(
        self,
        centre: tuple[float, float] = (0.0, 0.0),
        *,
        size: float = 40.0,
        resolution: float = 0.1,
        stride: int = 4,
    ) -> None:
        self.resolution = resolution
        self.n = round(size / resolution)
        self.origin = (centre[0] - size / 2, centre[1] - size / 2)
        self.stride = stride
        self.cells = np.zeros((self.n, self.n), dtype=np.uint8)
        """``cells[i, j]``: the cell at x index ``i``, y index ``j``."""

    def cell(self, x: float, y: float) -> tuple[int, int]:
        """The (clipped) cell of a point."""
        i = int((x - self.origin[0]) / self.resolution)
        j = int((y - self.origin[1]) / self.resolution)
        return min(max(i, 0), self.n - 1), min(max(j, 0), self.n - 1)

    def centre(self, i: int, j: int) -> tuple[float, float]:
        """World coordinates of a cell's centre."""
        return (self.origin[0] + (i + 0.5) * self.resolution, self.origin[1] + (j + 0.5) * self.resolution)

    def integrate(self, depth: np.ndarray, pose: Pose, vfov: float) -> None:
        """Add one depth frame (metres along the view axis) taken from ``pose``."""
        h, w = depth.shape
        s = self.stride
        vs, us = np.mgrid[s // 2 : h : s, s // 2 : w : s]
        d = depth[vs, us].astype(float)
        f = (h / 2.0) / math.tan(math.radians(vfov) / 2.0)
        fwd, right, up = view.view_vectors(pose)
        x_cam = (us - w / 2.0) / f
        y_cam = (h / 2.0 - vs) / f
        ok = (d > 0.05) & (d < MAX_RANGE)
        d, x_cam, y_cam = d[ok], x_cam[ok], y_cam[ok]
        eye = view.position(pose)
        pts = eye + d[:, None] * (fwd + x_cam[:, None] * right + y_cam[:, None] * up)
        # Free space along each ray (sampled every half cell), up to just before the hit.
        steps = max(2, int(MAX_RANGE / (self.resolution / 2)))
        t = np.linspace(0.0, 1.0, steps, endpoint=False)
        ray = eye[:2] + (pts[:, None, :2] - eye[:2]) * t[None, :, None]
        ri, rj = self._index(ray.reshape(-1, 2))
        self.cells[ri, rj] = np.where(self.cells[ri, rj] == OCCUPIED, OCCUPIED, FREE)
        z = pts[:, 2]
        floor = z < FLOOR_MAX_Z
        fi, fj = self._index(pts[floor, :2])
        self.cells[fi, fj] = np.where(self.cells[fi, fj] == OCCUPIED, OCCUPIED, FREE)
        solid = (z >= OBSTACLE_Z[0]) & (z <= OBSTACLE_Z[1])
        oi, oj = self._index(pts[solid, :2])
        self.cells[oi, oj] = OCCUPIED

    def _index(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        i = np.clip(((xy[:, 0] - self.origin[0]) / self.resolution).astype(int), 0, self.n - 1)
        j = np.clip(((xy[:, 1] - self.origin[1]) / self.resolution).astype(int), 0, self.n - 1)
        return i, j

    def frontiers(self) -> list[tuple[float, float]]:
        """Centres of free cells that touch an unknown cell (4-neighbourhood)."""
        free = self.cells == FREE
        unknown = self.cells == UNKNOWN
        near = np.zeros_like(free)
        near[1:, :] |= unknown[:-1, :]
        near[:-1, :] |= unknown[1:, :]
        near[:, 1:] |= unknown[:, :-1]
        near[:, :-1] |= unknown[:, 1:]
        ii, jj = np.nonzero(free & near)
        return [self.centre(int(i), int(j)) for i, j in zip(ii, jj, strict=True)]

    def known_fraction(self, mask: np.ndarray | None = None) -> float:
        """Share of cells (within ``mask`` if given) that are no longer unknown."""
        known = self.cells != UNKNOWN
        if mask is not None:
            return float(known[mask].mean()) if mask.any() else 0.0
        return float(known.mean())
