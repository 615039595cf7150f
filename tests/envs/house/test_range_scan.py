"""The house's range scan (the frontier baseline's depth input): distances match the walls."""

from __future__ import annotations

import pytest

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.seen import MAX_RANGE
from eviseek.types import Action, Pose
from tests.envs.house.conftest import hand_question, two_rooms


def test_scan_measures_the_walls_and_sees_through_the_doorway() -> None:
    env = HouseEnv(width=160, height=120)
    try:
        # In the kitchen at (1, 2) facing east (+x): the doorway at x=4 is straight ahead.
        obs, _ = env.reset(options={"question": hand_question(two_rooms(Pose(x=1.0, y=2.0, z=1.5)))})
        scan = obs.metadata["range_scan"]
        ranges, mid = scan["ranges"], len(scan["ranges"]) // 2
        assert scan["fov_deg"] == pytest.approx(90.0, abs=1.0) and scan["max_range"] == MAX_RANGE
        # Through the doorway the ray reaches the desk in the bedroom (x=6.1) or beyond.
        assert ranges[mid] > 4.5
        # The left edge of the view (45 degrees left) meets the north wall y=4: 2 m away in y.
        assert ranges[0] == pytest.approx(2.0 * 2**0.5, abs=0.25)
        # Facing north after three left turns (90 degrees): the north wall is 2 m ahead.
        for _ in range(3):
            obs = env.step(Action(name="turn_left")).observation
        assert obs.metadata["range_scan"]["ranges"][mid] == pytest.approx(2.0, abs=0.15)
    finally:
        env.close()
