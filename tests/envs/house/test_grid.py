"""The true occupancy grid: navigability, geodesic distances through doorways, shortest paths."""

from __future__ import annotations

import math

from eviseek.envs.house.grid import AGENT_RADIUS, OccupancyGrid, blocker_at
from tests.envs.house.conftest import two_rooms


def test_walls_and_furniture_block_and_rooms_are_free() -> None:
    spec = two_rooms()
    assert blocker_at(spec, 1.0, 2.0) is None
    assert blocker_at(spec, 4.0, 0.5, AGENT_RADIUS).startswith("wall:")  # the shared wall beside the door
    assert blocker_at(spec, 4.0, 2.0) is None  # the doorway itself
    assert blocker_at(spec, 6.5, 2.0) == "desk_1"
    assert blocker_at(spec, -1.0, 2.0) == "outside"
    grid = OccupancyGrid(spec)
    assert grid.navigable[grid.cell(1.0, 2.0)] and not grid.navigable[grid.cell(6.5, 2.0)]


def test_geodesic_distance_goes_through_the_doorway() -> None:
    grid = OccupancyGrid(two_rooms())
    a, b = (2.0, 0.5), (6.0, 0.5)
    straight = math.dist(a, b)
    walk = grid.geodesic_distance(a, b)
    # The straight line crosses a wall; the walk must climb to the doorway, where the body's
    # centre needs y >= 1.7 (opening 1.5..2.5, radius 0.2), and back: at least 2 * hypot(2, 1.2).
    assert walk >= 2 * math.hypot(2.0, 1.2) > straight + 0.6
    assert walk < 2 * math.hypot(2.0, 1.2) * 1.1
    path = grid.shortest_path(a, b)
    assert path[0] == grid.centre(*grid.cell(*a)) and math.dist(path[-1], b) < 0.1
    assert any(abs(x - 4.0) < 0.05 and 1.5 < y < 2.5 for x, y in path)
    assert grid.room_sequence(a, b) == ["kitchen", "bedroom"]
    assert grid.geodesic_distance(a, a) == 0.0


def test_a_target_on_furniture_is_reached_at_its_nearest_free_cell() -> None:
    grid = OccupancyGrid(two_rooms())
    d = grid.geodesic_distance((1.0, 2.0), (6.4, 2.0))  # the cup, on the desk
    # Snapped to the free cell in front of the desk (x about 6.1 - AGENT_RADIUS).
    assert 4.5 < d < 5.2
