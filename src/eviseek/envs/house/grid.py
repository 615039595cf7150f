"""The true occupancy grid of a house, collisions, geodesic distances and shortest paths.

The agent is a vertical cylinder of radius :data:`AGENT_RADIUS` (ours: a little wider than
Habitat's default 0.1 m so that it does not slip between furniture it could not see past). A
position is *navigable* when it lies inside a room and the agent's disc there touches no wall slab
and no piece of furniture standing on the floor. The grid marks every cell whose centre is
navigable; distances are shortest paths over 8-connected navigable cells (Dijkstra, scipy).
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.envs.house.spec import HouseSpec, Rect

AGENT_RADIUS = 0.2
RESOLUTION = 0.05
"""Metres per grid cell."""


def disc_hits_rect(x: float, y: float, radius: float, rect: Rect) -> bool:
    """Whether a disc of ``radius`` at ``(x, y)`` overlaps the rectangle."""
    x0, y0, x1, y1 = rect
    dx = max(x0 - x, 0.0, x - x1)
    dy = max(y0 - y, 0.0, y - y1)
    return dx * dx + dy * dy < radius * radius


def blocker_at(spec: HouseSpec, x: float, y: float, radius: float = AGENT_RADIUS) -> str | None:
    """What stops the agent standing at ``(x, y)``: an obstacle's name, ``"outside"`` or ``None``."""
    if spec.room_at(x, y) is None:
        return "outside"
    for name, rect in spec.obstacles():
        if disc_hits_rect(x, y, radius, rect):
            return name
    return None


def _shift(d: int, n: int) -> tuple[slice, slice]:
    """Slices pairing index ``k`` (first) with ``k + d`` (second) along an axis of length ``n``."""
    if d >= 0:
        return slice(0, n - d), slice(d, n)
    return slice(-d, n), slice(0, n + d)


class OccupancyGrid:
    """Navigable cells of a house (``True`` = the agent can stand there)."""

    def __init__(
        self, spec: HouseSpec, *, resolution: float = RESOLUTION, radius: float = AGENT_RADIUS
    ) -> None:
        self.spec = spec
        self.resolution = resolution
        self.radius = radius
        x0, y0, x1, y1 = spec.bounds
        self.origin = (x0, y0)
        self.nx = math.ceil((x1 - x0) / resolution)
        self.ny = math.ceil((y1 - y0) / resolution)
        xs = x0 + (np.arange(self.nx) + 0.5) * resolution
        ys = y0 + (np.arange(self.ny) + 0.5) * resolution
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        inside = np.zeros((self.nx, self.ny), dtype=bool)
        for room in spec.rooms:
            rx0, ry0, rx1, ry1 = room.rect
            inside |= (gx >= rx0) & (gx <= rx1) & (gy >= ry0) & (gy <= ry1)
        blocked = np.zeros_like(inside)
        for _, (ox0, oy0, ox1, oy1) in spec.obstacles():
            # Only cells within the radius (plus a cell's margin) of the footprint can be blocked
            # by it; the test runs on that window alone, with the same arithmetic per cell.
            i0, i1 = np.searchsorted(xs, (ox0 - radius - resolution, ox1 + radius + resolution))
            j0, j1 = np.searchsorted(ys, (oy0 - radius - resolution, oy1 + radius + resolution))
            wx, wy = gx[i0:i1, j0:j1], gy[i0:i1, j0:j1]
            dx = np.maximum(np.maximum(ox0 - wx, 0.0), wx - ox1)
            dy = np.maximum(np.maximum(oy0 - wy, 0.0), wy - oy1)
            blocked[i0:i1, j0:j1] |= dx * dx + dy * dy < radius * radius
        self.navigable: np.ndarray = inside & ~blocked
        """Boolean array of shape ``(nx, ny)``; index ``[i, j]`` is the cell at x index i, y index j."""
        self._fields: dict[tuple[int, int], np.ndarray] = {}
        self._graph: object | None = None

    # -- coordinates -------------------------------------------------------------------

    def cell(self, x: float, y: float) -> tuple[int, int]:
        """The cell containing a point (clipped to the grid)."""
        i = int((x - self.origin[0]) / self.resolution)
        j = int((y - self.origin[1]) / self.resolution)
        return min(max(i, 0), self.nx - 1), min(max(j, 0), self.ny - 1)

    def centre(self, i: int, j: int) -> tuple[float, float]:
        """World coordinates of a cell's centre."""
        return (
            self.origin[0] + (i + 0.5) * self.resolution,
            self.origin[1] + (j + 0.5) * self.resolution,
        )

    def snap(self, x: float, y: float) -> tuple[int, int]:
        """The navigable cell nearest (straight-line) to a point, e.g. to an object on a table."""
        i, j = self.cell(x, y)
        if self.navigable[i, j]:
            return i, j
        ii, jj = np.nonzero(self.navigable)
        if ii.size == 0:
            raise ValueError("the house has no navigable cell")
        cx = self.origin[0] + (ii + 0.5) * self.resolution
        cy = self.origin[1] + (jj + 0.5) * self.resolution
        k = int(np.argmin((cx - x) ** 2 + (cy - y) ** 2))
        return int(ii[k]), int(jj[k])

    # -- distances ---------------------------------------------------------------------

    def _csgraph(self) -> object:
        if self._graph is None:
            from scipy.sparse import coo_matrix

            idx = np.full(self.navigable.shape, -1, dtype=np.int64)
            nav = self.navigable
            idx[nav] = np.arange(int(nav.sum()))
            rows, cols, weights = [], [], []
            for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):
                ia, ib = _shift(di, self.nx)
                ja, jb = _shift(dj, self.ny)
                a, b = idx[ia, ja], idx[ib, jb]
                ok = (a >= 0) & (b >= 0)
                if di and dj:
                    # A diagonal step must not cut a blocked corner.
                    ok &= (idx[ib, ja] >= 0) & (idx[ia, jb] >= 0)
                rows.append(a[ok])
                cols.append(b[ok])
                weights.append(np.full(int(ok.sum()), math.hypot(di, dj) * self.resolution))
            n = int(nav.sum())
            r, c, w = np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)
            both = (np.concatenate([r, c]), np.concatenate([c, r]))
            self._graph = coo_matrix((np.concatenate([w, w]), both), shape=(n, n)).tocsr()
            self._index = idx
        return self._graph

    def distance_field(self, x: float, y: float) -> np.ndarray:
        """Geodesic distance (metres) from every cell to the navigable cell nearest ``(x, y)``.

        Unreachable and blocked cells hold ``inf``. Fields are cached per goal cell.
        """
        goal = self.snap(x, y)
        if goal not in self._fields:
            from scipy.sparse.csgraph import dijkstra

            graph = self._csgraph()
            # The graph holds every step in both directions already, so it is walked as given;
            # directed=False would add the transpose of a symmetric matrix for the same result.
            dist = dijkstra(graph, directed=True, indices=int(self._index[goal]))
            field = np.full(self.navigable.shape, np.inf)
            field[self.navigable] = dist
            self._fields[goal] = field
        return self._fields[goal]

    def geodesic_distance(self, a: tuple[float, float], b: tuple[float, float]) -> float:
        """Shortest walking distance between two points (each snapped to its nearest navigable cell)."""
        field = self.distance_field(*b)
        return float(field[self.snap(*a)])

    def shortest_path(self, a: tuple[float, float], b: tuple[float, float]) -> list[tuple[float, float]]:
        """Cell centres of a shortest walk from ``a`` to ``b`` (empty when unreachable)."""
        field = self.distance_field(*b)
        cur = self.snap(*a)
        if not np.isfinite(field[cur]):
            return []
        path = [self.centre(*cur)]
        while field[cur] > 1e-9:
            i, j = cur
            best = cur
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    ni, nj = i + di, j + dj
                    if 0 <= ni < self.nx and 0 <= nj < self.ny and field[ni, nj] < field[best]:
                        best = (ni, nj)
            if best == cur:
                break
            cur = best
            path.append(self.centre(*cur))
        return path

    def room_sequence(self, a: tuple[float, float], b: tuple[float, float]) -> list[str]:
        """The rooms a shortest walk from ``a`` to ``b`` passes through, in order, without repeats."""
        rooms: list[str] = []
        for x, y in self.shortest_path(a, b):
            r = self.spec.room_at(x, y)
            if r is not None and (not rooms or rooms[-1] != r):
                rooms.append(r)
        return rooms
