"""The house environment: navigation primitives, collisions, budget, support and the oracle."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.grid import blocker_at
from eviseek.envs.tabletop import PrivilegedAccessError
from eviseek.errors import EnvError
from eviseek.types import Action, Pose
from tests.envs.house.conftest import hand_question, two_rooms


@pytest.fixture
def env() -> Iterator[HouseEnv]:
    e = HouseEnv(width=160, height=120)
    yield e
    e.close()


def _do(env: HouseEnv, *names: str) -> None:
    for n in names:
        env.step(Action(name=n))


def test_primitives_move_by_their_step_sizes(env: HouseEnv) -> None:
    env.reset(options={"question": hand_question(two_rooms())})
    res = env.step(Action(name="move_forward"))
    assert res.feedback.success and env.pose.x == pytest.approx(1.25) and env.path_length == 0.25
    _do(env, "turn_left")
    assert env.pose.yaw == 30.0
    _do(env, "turn_right", "turn_right")
    assert env.pose.yaw == -30.0
    # The paper's navigation interface (Table 7) has no tilt.
    assert [s.name for s in env.legal_actions()] == ["move_forward", "turn_left", "turn_right", "stop"]
    res = env.step(Action(name="look_down"))
    assert not res.feedback.success and "legal actions" in res.feedback.reason and env.pose.pitch == 0.0


def test_tilts_are_an_option_of_ours() -> None:
    env = HouseEnv(width=64, height=48, look=True)
    try:
        env.reset(options={"question": hand_question(two_rooms())})
        names = [s.name for s in env.legal_actions()]
        assert names == ["move_forward", "turn_left", "turn_right", "look_up", "look_down", "stop"]
        assert all("ours" in s.description for s in env.legal_actions() if s.name.startswith("look"))
        _do(env, "look_down", "look_down")
        assert env.pose.pitch == -60.0
        res = env.step(Action(name="look_down"))
        assert not res.feedback.success and "tilt" in res.feedback.reason and env.pose.pitch == -60.0
    finally:
        env.close()


def test_walking_into_a_wall_fails_and_never_passes_through(env: HouseEnv) -> None:
    start = Pose(x=1.0, y=0.8, z=1.5, yaw=0.0, pitch=0.0)  # facing the shared wall, beside the door
    env.reset(options={"question": hand_question(two_rooms(start))})
    blocked = 0
    for _ in range(20):
        res = env.step(Action(name="move_forward"))
        if not res.feedback.success:
            blocked += 1
            assert res.feedback.state["collided"] is True and "wall" in res.feedback.reason
        assert blocker_at(env.oracle.spec, env.pose.x, env.pose.y) is None
    # 11 steps reach x = 3.75 (the slab starts at 3.95, the body is 0.2 m wide); the rest bump.
    assert blocked == 9 and env.pose.x == pytest.approx(3.75)
    assert env.path_length == pytest.approx(0.25 * (20 - blocked))
    assert res.info["collisions"] == blocked


def test_furniture_blocks_too(env: HouseEnv) -> None:
    start = Pose(x=5.0, y=2.0, z=1.5, yaw=0.0, pitch=0.0)  # in the bedroom, facing the desk
    env.reset(options={"question": hand_question(two_rooms(start))})
    for _ in range(8):
        res = env.step(Action(name="move_forward"))
    assert not res.feedback.success and "furniture" in res.feedback.reason
    assert env.pose.x < 6.1 - 0.2 + 1e-6


def test_budget_truncates_and_stop_terminates() -> None:
    env = HouseEnv(width=64, height=48, max_steps=3)
    try:
        env.reset(options={"question": hand_question(two_rooms())})
        _do(env, "turn_left", "turn_left")
        res = env.step(Action(name="turn_left"))
        assert res.truncated and not res.terminated
        after = env.step(Action(name="turn_left"))
        assert not after.feedback.success and "over" in after.feedback.reason
        env.reset(options={"question": hand_question(two_rooms())})
        res = env.step(Action(name="stop"))
        assert res.terminated and not res.truncated
    finally:
        env.close()


def test_support_needs_the_cup_in_view_and_distance_to_target_shrinks(env: HouseEnv) -> None:
    env.reset(options={"question": hand_question(two_rooms())})
    oracle = env.oracle
    assert env.visual_support([0]) == 0.0  # from the kitchen, through the doorway, too far and small
    d0 = oracle.distance_to_target()
    _do(env, *["move_forward"] * 16)  # along y = 2 through the doorway to x = 5.0
    assert oracle.room_of_agent() == "bedroom"
    assert oracle.distance_to_target() < d0 - 3.5
    assert env.visual_support([env.steps_taken]) == 1.0
    seg = oracle.segmentation(env.steps_taken)
    assert (seg == oracle.body_uids()["cup_1"]).sum() >= 30  # a 7 cm cup and its handle at 160x120
    assert oracle.path_length == pytest.approx(4.0)


def test_seen_map_grows_and_has_frontiers(env: HouseEnv) -> None:
    env.reset(options={"question": hand_question(two_rooms())})
    first = env.oracle.seen_map().known_fraction()
    _do(env, "turn_left", "turn_left", "turn_left", "turn_left", "turn_left", "turn_left")
    seen = env.oracle.seen_map()
    assert seen.known_fraction() > first > 0.0
    assert seen.frontiers()
    # What was seen agrees with the truth: the kitchen's far wall is occupied, its middle is free.
    from eviseek.envs.house.seen import FREE, OCCUPIED

    assert seen.cells[seen.cell(2.0, 2.0)] == FREE
    assert seen.cells[seen.cell(1.0, 3.98)] == OCCUPIED or seen.cells[seen.cell(1.0, 3.92)] == OCCUPIED


def test_unprivileged_env_hides_the_oracle() -> None:
    env = HouseEnv(width=64, height=48, privileged=False)
    try:
        obs, _ = env.reset(options={"question": hand_question(two_rooms())})
        assert obs.depth is None and obs.segmentation is None
        with pytest.raises(PrivilegedAccessError):
            _ = env.oracle
    finally:
        env.close()


def test_reset_without_a_question_generates_one(env: HouseEnv) -> None:
    obs, info = env.reset(seed=3)
    assert info["question_id"].startswith("house-") and obs.image.array().shape == (120, 160, 3)


@pytest.mark.parametrize("pitch", [0.0, -30.0])
def test_range_scan_measures_level_distances(pitch: float) -> None:
    from eviseek.envs.house.env import SCAN_RAYS, range_scan

    env = HouseEnv(width=160, height=120)
    try:
        start = Pose(x=2.0, y=2.0, z=1.5, yaw=90.0, pitch=pitch)  # facing the kitchen's north wall
        obs, _ = env.reset(options={"question": hand_question(two_rooms(start))})
        scan = obs.metadata["range_scan"]
        assert len(scan["ranges"]) == SCAN_RAYS
        mid = scan["ranges"][SCAN_RAYS // 2]
        assert mid == pytest.approx(4.0 - 0.05 - 2.0, abs=0.05)  # the wall slab's face at y = 3.95
        # The left edge ray, fov/2 to the left of +y, hits the same wall farther away.
        edge = scan["ranges"][0]
        expect = 1.95 / math.cos(math.radians(scan["fov_deg"] / 2))
        assert edge == pytest.approx(min(expect, scan["max_range"]), rel=0.05)
        assert obs.depth is not None and range_scan(obs.depth, -60.0, 90.0) is None
    finally:
        env.close()


def test_room_evidence_needs_both_floors_in_one_view(env: HouseEnv) -> None:
    from eviseek.envs.house.questions import _room_piece

    piece = _room_piece("kitchen", "bedroom").model_dump()
    q = hand_question(two_rooms(), evidence=[piece])
    env.reset(options={"question": q})  # at (1, 2) facing the doorway: the bedroom floor shows through
    assert env.visual_support([0]) == 1.0
    _do(env, "turn_left", "turn_left", "turn_left", "turn_left", "turn_left", "turn_left")  # facing away
    assert env.visual_support([env.steps_taken]) == 0.0


def test_the_house_refuses_any_renderer_but_tinyrenderer_when_built() -> None:
    """PyBullet's EGL plugin shades houses differently (docs/house.md, "Speed"): refused at once."""
    with pytest.raises(EnvError, match="TinyRenderer only; got renderer='egl', use 'tiny'"):
        HouseEnv(renderer="egl")
