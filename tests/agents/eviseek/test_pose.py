"""Dead-reckoned pose annotations: from commands only, never from the simulator."""

from __future__ import annotations

import pytest

from eviseek.agents.eviseek.pose import PoseTracker
from eviseek.types import Action, ActionSpec, Feedback


def run(tracker: PoseTracker, *names: str) -> None:
    for n in names:
        tracker.apply(Action(name=n))


def test_three_rises_read_like_the_paper_example() -> None:
    t = PoseTracker()
    run(t, "move_up", "move_up", "move_up")
    assert t.describe() == "d(+0.00E,+0.00N,z0.75) yaw+0 pitch+0"


def test_moves_follow_the_estimated_heading() -> None:
    t = PoseTracker()
    run(t, "move_forward", "turn_left", *["turn_left"] * 5, "move_forward", "move_right")
    # After 6 x 15 = 90 degrees to the left, forward points west and right points north.
    assert t.pose.yaw == 90
    assert t.pose.x == pytest.approx(-0.25) and t.pose.y == pytest.approx(0.50)


def test_magnitudes_come_from_the_action_specs_and_pitch_is_bounded() -> None:
    t = PoseTracker([ActionSpec(name="turn_right", magnitude=30), ActionSpec(name="turn_down", magnitude=30)])
    run(t, "turn_right", *["turn_down"] * 5)
    assert t.pose.yaw == -30 and t.pose.pitch == -90


def test_failed_commands_and_manipulations_do_not_move_the_estimate() -> None:
    t = PoseTracker()
    t.apply(Action(name="move_forward"), Feedback(operation="move_forward", success=False, reason="blocked"))
    t.apply(Action(name="pick_up", args={"object": "cube"}), Feedback(operation="pick_up"))
    assert t.describe() == "d(+0.00E,+0.00N,z0.00) yaw+0 pitch+0"


def test_declared_bounds_hold_the_estimate_and_bad_ones_are_ignored() -> None:
    t = PoseTracker(bounds={"z": [-0.3, 0.5], "pitch": [-75, 60]})
    run(t, *["move_up"] * 4, *["turn_down"] * 7)
    assert (t.pose.z, t.pose.pitch) == (0.5, -75)
    run(t, *["move_down"] * 6)
    assert t.pose.z == -0.3
    odd = PoseTracker(bounds={"z": "high", "pitch": [10, -10]})
    assert odd.bounds() == {"z": (float("-inf"), float("inf")), "pitch": (-90.0, 90.0)}


def test_a_reported_clamp_stops_the_axis_and_becomes_a_bound() -> None:
    t = PoseTracker()
    run(t, "move_up")
    clamp = Feedback(operation="move_up", reason="clamped", state={"clamped": True, "bounds": ["z<=1.6"]})
    t.apply(Action(name="move_up"), clamp)
    run(t, "move_up")
    assert t.pose.z == 0.25 and t.bounds()["z"] == (float("-inf"), 0.25)
    run(t, "move_down")
    assert t.pose.z == 0.0
