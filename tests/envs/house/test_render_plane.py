"""A house render always returns: no body corner is left in the camera's own plane.

Issue 38's endless episode (``house-existence-s4805-0005``, 512x512): after 37 steps of 0.25 m and
30 degrees the eye stood exactly level with a door post's back face, and TinyRenderer, which
divides by each vertex's distance along the view, never returned from that frame."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from eviseek.envs.house import HouseEnv, build_question
from eviseek.envs.house.sim import NUDGE_M, HouseSim
from eviseek.envs.house.spec import HouseSpec
from eviseek.types import Action, Pose

pytest.importorskip("pybullet")

# The walk the reference policy took in that episode, up to the step whose frame never came.
WALK = (
    ["turn_left"] * 15
    + ["move_forward"] * 18
    + ["turn_right", "move_forward", "turn_right", "turn_right", "move_forward"]
)
BUDGET = 40


def _play(out: mp.Queue) -> None:  # type: ignore[type-arg]
    env = HouseEnv(width=512, height=512, max_steps=BUDGET)
    env.reset(options={"question": build_question("existence", 4805, 5)})
    steps, ended = 0, False
    for name in WALK + ["turn_left"] * BUDGET:
        result = env.step(Action(name=name))
        steps += 1
        if result.truncated or result.terminated:
            ended = True
            break
    out.put((steps, ended, env._pose.x, env._pose.y))


def test_the_walk_that_hung_a_render_ends_within_its_step_budget() -> None:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=_play, args=(out,), daemon=True)
    child.start()
    child.join(timeout=120)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail("a house render never returned: the episode did not end within its step budget")
    steps, ended, x, y = out.get(timeout=5)
    assert ended and steps == BUDGET
    # The walk did reach the pose that hung (its 38th step's; only turns follow it).
    assert (round(x, 2), round(y, 2)) == (1.66, 3.10)


def _spec() -> HouseSpec:
    return HouseSpec.from_question(build_question("existence", 4805, 5).scene)


def test_only_a_pose_whose_plane_holds_a_corner_is_moved_and_then_barely() -> None:
    sim = HouseSim(_spec(), width=64, height=64)
    try:
        # The post of the dining room / bedroom doorway spans y 3.10-3.16 at x 3.6: an eye at
        # y 3.10 facing +y (yaw 90) has its back face in its own plane.
        hung = Pose(x=1.66, y=3.10, z=1.5, yaw=90.0, pitch=0.0)
        moved = sim.clear_of_corners(hung)
        assert moved != hung
        assert 0 < hung.y - moved.y <= 8 * NUDGE_M
        assert (moved.x, moved.z, moved.yaw) == (hung.x, hung.z, hung.yaw)
        # A centimetre away nothing lies in the plane: the pose is drawn as given.
        fine = Pose(x=1.66, y=3.11, z=1.5, yaw=90.0, pitch=0.0)
        assert sim.clear_of_corners(fine) is fine
        # Tilted cameras are covered too: the plane is square to the tilted view.
        assert sim.clear_of_corners(Pose(x=1.66, y=3.11, z=1.5, yaw=90.0, pitch=-30.0)).pitch == -30.0
    finally:
        sim.close()
