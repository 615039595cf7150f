"""The house's range scan (the frontier baseline's depth input): distances match the walls."""

from __future__ import annotations

import pytest

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.env import SCAN_MAX_RANGE
from eviseek.types import Action, Pose
from tests.envs.house.conftest import hand_question, two_rooms


def test_scan_measures_the_walls_and_sees_through_the_doorway() -> None:
    env = HouseEnv(width=160, height=120)
    try:
        # In the kitchen at (1, 1.8) facing east (+x): the doorway (y 1.5-2.5) at x=4 is ahead.
        obs, _ = env.reset(options={"question": hand_question(two_rooms(Pose(x=1.0, y=1.8, z=1.5)))})
        scan = obs.metadata["range_scan"]
        ranges, mid = scan["ranges"], len(scan["ranges"]) // 2
        assert scan["fov_deg"] == pytest.approx(90.0, abs=1.0) and scan["max_range"] == SCAN_MAX_RANGE
        # Through the doorway the ray meets the desk in the bedroom (0.75 m high, its near face at
        # x = 6.1): furniture below the camera counts, not only walls.
        assert ranges[mid] == pytest.approx(5.1, abs=0.15)
        # The left edge of the view (45 degrees left) meets the north wall's face at y = 3.95, the
        # right edge the south wall's face at y = 0.05 (the start is off centre, at y = 1.8).
        assert ranges[0] == pytest.approx(2.15 * 2**0.5, rel=0.05)
        assert ranges[-1] == pytest.approx(1.75 * 2**0.5, rel=0.05)
        # Facing north after three left turns (90 degrees): the north wall is 2 m ahead.
        for _ in range(3):
            obs = env.step(Action(name="turn_left")).observation
        assert obs.metadata["range_scan"]["ranges"][mid] == pytest.approx(2.15, abs=0.05)
    finally:
        env.close()
