"""Cloth: a square sheet draped over whatever lies under it, computed once when it is built.

Why not a PyBullet soft body: measured here (``benchmarks/tabletop_rendering.py`` prints it), a
25x25-vertex soft-body cloth took over 10 s of CPU per simulated second and its vertices blew up
with the solver's default stiffness, while PyBullet's stock 5x5 cloth is too coarse to
show what is under it. A drape model gives the same evidence (the sheet takes the outline of the
object it covers) deterministically and in milliseconds.

The model (ours): the sheet is a ``n x n`` height field. Rays cast straight down through the
sheet's footprint find the support height ``H(q)`` under every grid point (the table top is 0),
widened by one grid cell so that no edge pokes through between points. A sheet that cannot
stretch falls off a supporting edge at a bounded slope, so each point rests at
``h(p) = max(H(q) - slope * |p - q|)`` over the grid, never below the table plus its own
thickness. A cube thus shows a flat top with steep skirts, a cone a peak, a pyramid its ridges,
a ball a dome, a cylinder a round flat top.

The cloth has no collision shape: it never disturbs the physics, and the object under it keeps its
own collision shape (so grasping or contact tests still see the real object).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs.tabletop.sim.meshes import Mesh

GRID = 25
"""Vertices per side of the sheet."""
DRAPE_SLOPE = 3.0
"""How steeply the sheet falls away from a supporting edge (rise over run, about 72 degrees)."""
THICKNESS = 0.003
"""Metres the sheet lies above the surface under it."""


def support_heights(p: Any, client: int, xs: np.ndarray, ys: np.ndarray, top: float) -> np.ndarray:
    """Height of the highest surface under each (x, y), by rays cast down from ``top``."""
    starts = [[float(x), float(y), top] for x, y in zip(xs, ys, strict=True)]
    ends = [[float(x), float(y), -0.01] for x, y in zip(xs, ys, strict=True)]
    hits = p.rayTestBatch(starts, ends, physicsClientId=client)
    return np.array([max(h[3][2], 0.0) if h[0] >= 0 else 0.0 for h in hits])


def drape_heights(support: np.ndarray, spacing: float, slope: float = DRAPE_SLOPE) -> np.ndarray:
    """The sheet's height on a square grid given the support heights under it (see the module)."""
    n = support.shape[0]
    # Each grid point takes the highest support of its 3x3 neighbourhood: between grid points the
    # mesh is flat, so without this an edge or corner between two points pokes through the sheet.
    padded = np.pad(support, 1)
    support = np.max(
        np.stack([padded[di : di + n, dj : dj + n] for di in range(3) for dj in range(3)]), axis=0
    )
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    pts = np.stack([ii.ravel(), jj.ravel()], axis=1).astype(float) * spacing
    flat = support.ravel()
    keep = flat > 1e-4  # points resting on the bare table cannot lift anything
    if not keep.any():
        return np.full_like(support, THICKNESS)
    src, src_h = pts[keep], flat[keep]
    dist = np.linalg.norm(pts[:, None, :] - src[None, :, :], axis=2)
    h = np.max(src_h[None, :] - slope * dist, axis=1)
    return np.maximum(h, 0.0).reshape(n, n) + THICKNESS


def sheet_mesh(heights: np.ndarray, side: float) -> Mesh:
    """A smooth-shaded triangle mesh of a height field over a ``side``-metre square, centred on
    the square's centre and on the table plane (local z = 0 is the table top)."""
    n = heights.shape[0]
    spacing = side / (n - 1)
    coords = np.arange(n) * spacing - side / 2
    gx, gy = np.gradient(heights, spacing)
    verts: list[list[float]] = []
    norms: list[list[float]] = []
    for i in range(n):
        for j in range(n):
            verts.append([float(coords[i]), float(coords[j]), float(heights[i, j])])
            nrm = np.array([-gx[i, j], -gy[i, j], 1.0])
            norms.append([float(v) for v in nrm / np.linalg.norm(nrm)])
    idx: list[int] = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b = i * n + j, (i + 1) * n + j
            idx += [a, b, b + 1, a, b + 1, a + 1]
    return verts, idx, norms


def drape(p: Any, client: int, centre: tuple[float, float], side: float, yaw_deg: float) -> Mesh:
    """The draped sheet of ``side`` metres centred at ``centre``, as a mesh in the sheet's frame."""
    spacing = side / (GRID - 1)
    local = np.arange(GRID) * spacing - side / 2
    li, lj = np.meshgrid(local, local, indexing="ij")
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    xs = centre[0] + c * li.ravel() - s * lj.ravel()
    ys = centre[1] + s * li.ravel() + c * lj.ravel()
    support = support_heights(p, client, xs, ys, top=1.0).reshape(GRID, GRID)
    return sheet_mesh(drape_heights(support, spacing), side)
