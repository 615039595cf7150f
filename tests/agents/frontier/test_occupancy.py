"""The seen-only occupancy map: scans carve free space, frontiers sit at its edge, paths avoid walls."""

from __future__ import annotations

from eviseek.agents.frontier import RangeScan, SeenMap
from eviseek.agents.frontier.occupancy import FREE, OCCUPIED, UNKNOWN


def test_scan_marks_free_space_and_the_surface_hit() -> None:
    seen = SeenMap(resolution=0.25, extent_m=10.0)
    # Facing north, one ray straight ahead that hits something 1 m away.
    seen.integrate(0.0, 0.0, 0.0, RangeScan(ranges=(1.0,), fov_deg=1.0, max_range=3.0))
    assert seen.value(seen.cell(0.0, 0.5)) == FREE
    assert seen.value(seen.cell(0.0, 1.0)) == OCCUPIED
    assert seen.value(seen.cell(0.0, 1.5)) == UNKNOWN  # behind the surface: never seen
    assert seen.value(seen.cell(0.0, -0.5)) == UNKNOWN  # behind the agent


def test_frontiers_lie_between_free_and_unknown_and_are_nearest_first() -> None:
    seen = SeenMap(resolution=0.25, extent_m=10.0)
    scan = RangeScan(ranges=tuple([2.0] * 9), fov_deg=90.0, max_range=2.0)  # nothing hit: open
    seen.integrate(0.0, 0.0, 0.0, scan)
    found = seen.frontiers(0.0, 0.0, 0.0)
    assert found and all(seen.value(f.cell) == FREE for f in found)
    assert found == sorted(found, key=lambda f: (f.distance_m, f.cell))
    # Turned to face west (yaw +90): the frontier ahead of the first view is now to the right.
    ahead = max(found, key=lambda f: f.size)
    turned = {f.cell: f for f in seen.frontiers(0.0, 0.0, 90.0)}[ahead.cell]
    assert round(turned.bearing_deg - ahead.bearing_deg) % 360 == 270


def test_path_goes_around_an_obstacle_and_never_through_unknown() -> None:
    seen = SeenMap(resolution=0.25, extent_m=6.0)
    for cx in range(seen.half - 3, seen.half + 4):
        for cy in range(seen.half, seen.half + 5):
            seen._set((cx, cy), FREE)
    wall = [(seen.half + dx, seen.half + 2) for dx in range(-3, 3)]
    for c in wall:
        seen._set(c, OCCUPIED)
    start, goal = (seen.half, seen.half), (seen.half, seen.half + 4)
    path = seen.path(start, goal)
    assert path is not None and path[0] == start and path[-1] == goal
    assert not set(path) & set(wall)
    assert all(seen.value(c) == FREE for c in path[1:])
    seen._set((seen.half + 3, seen.half + 2), OCCUPIED)  # close the gap
    assert seen.path(start, goal) is None


def test_malformed_scans_are_ignored() -> None:
    assert RangeScan.from_metadata(None) is None
    assert RangeScan.from_metadata({"ranges": [], "fov_deg": 90, "max_range": 3}) is None
    assert RangeScan.from_metadata({"ranges": ["x"], "fov_deg": 90, "max_range": 3}) is None
    scan = RangeScan.from_metadata({"ranges": [1, 2], "fov_deg": 90, "max_range": 3})
    assert scan is not None and scan.ranges == (1.0, 2.0)
