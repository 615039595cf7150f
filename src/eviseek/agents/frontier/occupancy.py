"""An occupancy grid built only from what the agent has seen, with frontiers and grid paths.

The grid lives in the agent's own dead-reckoned frame (origin at the start, north = the initial
heading, yaw counter-clockwise). Cells start unknown; a range scan marks the cells along each ray
free and the cell where the ray hit a surface occupied; a blocked forward move marks the cell
ahead occupied; every cell the agent stood in is free. A frontier is a free cell next to an
unknown one: the edge of the explored space. Nothing here reads the simulator.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

UNKNOWN, FREE, OCCUPIED = 0, 1, 2
_N8 = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


@dataclass(frozen=True)
class RangeScan:
    """Distances to the first surface along rays across the horizontal field of view.

    ``ranges`` run from the left edge of the view to the right edge; a value at or beyond
    ``max_range`` means nothing was hit within it.
    """

    ranges: tuple[float, ...]
    fov_deg: float
    max_range: float

    @classmethod
    def from_metadata(cls, data: object) -> RangeScan | None:
        """The scan in an observation's ``metadata["range_scan"]``, or ``None`` if absent or malformed."""
        if not isinstance(data, dict):
            return None
        try:
            ranges = tuple(float(r) for r in data["ranges"])
            fov = float(data["fov_deg"])
            max_range = float(data["max_range"])
        except (KeyError, TypeError, ValueError):
            return None
        if not ranges or fov <= 0 or max_range <= 0:
            return None
        return cls(ranges=ranges, fov_deg=fov, max_range=max_range)


@dataclass(frozen=True)
class Frontier:
    """A cluster of frontier cells: its representative cell, size and straight-line distance."""

    cell: tuple[int, int]
    size: int
    distance_m: float
    bearing_deg: float
    """Bearing from the agent, relative to its heading (positive = to the left)."""


class SeenMap:
    """A square occupancy grid of ``cells`` x ``cells`` at ``resolution`` metres per cell."""

    def __init__(self, *, resolution: float = 0.25, extent_m: float = 40.0) -> None:
        self.resolution = resolution
        self.cells = round(extent_m / resolution) | 1  # odd, so the start is a cell centre
        self.grid = np.full((self.cells, self.cells), UNKNOWN, dtype=np.uint8)
        self.half = self.cells // 2

    # --- coordinates ---------------------------------------------------------------------------
    def cell(self, x: float, y: float) -> tuple[int, int]:
        """The (column, row) of a point; row grows northward."""
        return (self.half + round(x / self.resolution), self.half + round(y / self.resolution))

    def centre(self, cell: tuple[int, int]) -> tuple[float, float]:
        """The point at a cell's centre."""
        return ((cell[0] - self.half) * self.resolution, (cell[1] - self.half) * self.resolution)

    def inside(self, cell: tuple[int, int]) -> bool:
        """Whether a cell is on the grid."""
        return 0 <= cell[0] < self.cells and 0 <= cell[1] < self.cells

    def value(self, cell: tuple[int, int]) -> int:
        """UNKNOWN, FREE or OCCUPIED (off the grid counts as occupied)."""
        return int(self.grid[cell[1], cell[0]]) if self.inside(cell) else OCCUPIED

    def _set(self, cell: tuple[int, int], value: int) -> None:
        if self.inside(cell):
            self.grid[cell[1], cell[0]] = value

    # --- updates -------------------------------------------------------------------------------
    def mark_visited(self, x: float, y: float) -> None:
        """The agent stood here, so the cell is free."""
        self._set(self.cell(x, y), FREE)

    def mark_blocked(self, x: float, y: float, yaw_deg: float, distance: float) -> None:
        """A forward move failed: something occupies the first other cell up to ``2 * distance`` ahead."""
        rad = math.radians(yaw_deg)
        here = self.cell(x, y)
        for reach in (distance, 2 * distance):
            cell = self.cell(x - math.sin(rad) * reach, y + math.cos(rad) * reach)
            if cell != here:
                self._set(cell, OCCUPIED)
                return

    def integrate(self, x: float, y: float, yaw_deg: float, scan: RangeScan) -> None:
        """Carve free space along each ray and mark the surfaces hit."""
        n = len(scan.ranges)
        step = self.resolution / 2
        for i, r in enumerate(scan.ranges):
            offset = scan.fov_deg / 2 - (scan.fov_deg * i / (n - 1) if n > 1 else scan.fov_deg / 2)
            rad = math.radians(yaw_deg + offset)
            dx, dy = -math.sin(rad), math.cos(rad)
            hit = r < scan.max_range
            reach = min(r, scan.max_range)
            t = 0.0
            while t < reach - step:
                cell = self.cell(x + dx * t, y + dy * t)
                if self.value(cell) != OCCUPIED:
                    self._set(cell, FREE)
                t += step
            if hit:
                self._set(self.cell(x + dx * reach, y + dy * reach), OCCUPIED)
        self.mark_visited(x, y)

    # --- queries -------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """How many cells are free, occupied and unknown."""
        return {
            "free": int((self.grid == FREE).sum()),
            "occupied": int((self.grid == OCCUPIED).sum()),
            "unknown": int((self.grid == UNKNOWN).sum()),
        }

    def frontiers(self, x: float, y: float, yaw_deg: float, *, min_size: int = 2) -> list[Frontier]:
        """Clusters of free cells bordering unknown space, nearest first."""
        free = self.grid == FREE
        unknown = self.grid == UNKNOWN
        near_unknown = np.zeros_like(free)
        near_unknown[1:, :] |= unknown[:-1, :]
        near_unknown[:-1, :] |= unknown[1:, :]
        near_unknown[:, 1:] |= unknown[:, :-1]
        near_unknown[:, :-1] |= unknown[:, 1:]
        mask = free & near_unknown
        rows, cols = np.nonzero(mask)
        todo = {(int(c), int(r)) for r, c in zip(rows, cols, strict=True)}
        here = (x, y)
        out: list[Frontier] = []
        while todo:
            seed = todo.pop()
            cluster = [seed]
            queue = deque([seed])
            while queue:
                cx, cy = queue.popleft()
                for dx, dy in _N8:
                    nb = (cx + dx, cy + dy)
                    if nb in todo:
                        todo.remove(nb)
                        cluster.append(nb)
                        queue.append(nb)
            if len(cluster) < min_size:
                continue
            mx = sum(c[0] for c in cluster) / len(cluster)
            my = sum(c[1] for c in cluster) / len(cluster)
            rep = min(cluster, key=lambda c: (c[0] - mx) ** 2 + (c[1] - my) ** 2)
            px, py = self.centre(rep)
            dist = math.hypot(px - here[0], py - here[1])
            bearing = math.degrees(math.atan2(-(px - here[0]), py - here[1]))
            rel = (bearing - yaw_deg + 180.0) % 360.0 - 180.0
            out.append(Frontier(cell=rep, size=len(cluster), distance_m=dist, bearing_deg=rel))
        return sorted(out, key=lambda f: (f.distance_m, f.cell))

    def path(
        self, start: tuple[int, int], goal: tuple[int, int], *, clearance: int = 0
    ) -> list[tuple[int, int]] | None:
        """The shortest 8-connected path over free cells (the start always allowed), or ``None``.

        ``clearance`` keeps the path that many cells away from every occupied cell (a body has a
        radius); the start may be closer, so an agent next to a wall can still leave it.
        """
        if start == goal:
            return [start]
        walkable = self.grid == FREE
        if clearance > 0:
            occupied = self.grid == OCCUPIED
            near = occupied.copy()
            for dy in range(-clearance, clearance + 1):
                for dx in range(-clearance, clearance + 1):
                    near |= np.roll(np.roll(occupied, dy, axis=0), dx, axis=1)
            walkable &= ~near

        def ok(c: tuple[int, int]) -> bool:
            return self.inside(c) and bool(walkable[c[1], c[0]])

        prev: dict[tuple[int, int], tuple[int, int]] = {start: start}
        queue = deque([start])
        while queue:
            cur = queue.popleft()
            for dx, dy in _N8:
                nb = (cur[0] + dx, cur[1] + dy)
                if nb in prev or not ok(nb):
                    continue
                if dx and dy and not (ok((cur[0] + dx, cur[1])) and ok((cur[0], cur[1] + dy))):
                    continue  # no corner cutting past an obstacle
                prev[nb] = cur
                if nb == goal:
                    out = [nb]
                    while out[-1] != start:
                        out.append(prev[out[-1]])
                    return out[::-1]
                queue.append(nb)
        return None
