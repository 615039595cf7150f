"""Culling the bodies a house camera cannot see: same bytes, fewer bodies drawn."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eviseek.envs.house import HouseEnv, build_question
from eviseek.envs.house.culling import FULL, _meet, view_arc
from eviseek.envs.house.grid import blocker_at
from eviseek.envs.house.limits import checked_house
from eviseek.envs.house.sim import HouseSim
from eviseek.envs.house.spec import HouseSpec
from eviseek.types import Action, Pose
from tests.envs.house.conftest import two_rooms

pytest.importorskip("pybullet")


def standable(spec: HouseSpec, n: int, rng: np.random.Generator) -> list[Pose]:
    """``n`` poses where the agent can stand, every other one near a doorway, at every tilt."""
    x0, y0, x1, y1 = spec.bounds
    out: list[Pose] = []
    while len(out) < n:
        d = spec.doors[int(rng.integers(len(spec.doors)))]
        x, y = (
            (d.centre[0] + rng.uniform(-0.6, 0.6), d.centre[1] + rng.uniform(-0.6, 0.6))
            if len(out) % 2
            else (rng.uniform(x0, x1), rng.uniform(y0, y1))
        )
        if blocker_at(spec, float(x), float(y)) is None:
            tilt = (-60.0, -30.0, 0.0, 30.0)[len(out) % 4]
            out.append(Pose(x=float(x), y=float(y), z=1.5, yaw=float(rng.uniform(-180, 180)), pitch=tilt))
    return out


def frame_bytes(sim: HouseSim, pose: Pose) -> bytes:
    f = sim.render(pose)
    return f.rgb.tobytes() + f.depth.tobytes() + f.segmentation.tobytes()


def test_arcs_meet_across_the_half_turn() -> None:
    a = (math.radians(170), math.radians(200))
    b = (math.radians(-175), math.radians(-100))  # 185..260 degrees: overlaps a from 185 to 200
    lo, hi = _meet(a, b)  # type: ignore[misc]
    assert math.degrees(lo) == pytest.approx(185) and math.degrees(hi) == pytest.approx(200)
    assert _meet((0.0, 0.5), (1.0, 2.0)) is None
    assert _meet((0.0, 0.5), (-2.0, -1.0)) is None


def test_the_view_arc_is_the_field_of_view_level_and_everything_when_looking_far_down() -> None:
    lo, hi = view_arc(Pose(x=0, y=0, z=1.5, yaw=90.0, pitch=0.0), 90.0, 90.0)  # type: ignore[misc]
    assert math.degrees(lo) < 45.0 and math.degrees(hi) > 135.0
    assert math.degrees(hi - lo) < 90.0 + 2 * math.degrees(0.05) + 1e-6  # the slack each side
    # Tilted 60 degrees down with a 90 degree view, straight down is in the frame.
    assert view_arc(Pose(x=0, y=0, z=1.5, yaw=0.0, pitch=-60.0), 90.0, 90.0) is None
    assert FULL[1] - FULL[0] == pytest.approx(2 * math.pi)


def test_a_room_behind_a_wall_is_hidden_and_one_through_the_doorway_is_not() -> None:
    spec = two_rooms()
    sim = HouseSim(spec, width=64, height=48)
    try:
        assert sim._culler is not None
        # In the kitchen facing away from the doorway (which is east, at x = 4): the bedroom
        # and its desk cannot show.
        away = sim._culler.hidden(Pose(x=2.0, y=2.0, z=1.5, yaw=180.0, pitch=0.0), spec.hfov, sim.vfov)
        assert {"floor:bedroom", "desk_1", "cup_1"} <= away
        assert not any(n.startswith("wall:kitchen") or n == "floor:kitchen" for n in away)
        # Facing the doorway: the desk behind it is kept.
        toward = sim._culler.hidden(Pose(x=2.0, y=2.0, z=1.5, yaw=0.0, pitch=0.0), spec.hfov, sim.vfov)
        assert "desk_1" not in toward and "floor:bedroom" not in toward
        # From outside the house (an overview), nothing is hidden.
        outside = Pose(x=-3.0, y=2.0, z=4.0, yaw=0.0, pitch=-30.0)
        assert sim._culler.hidden(outside, spec.hfov, sim.vfov) == set()
    finally:
        sim.close()


def test_culled_frames_are_byte_identical_to_drawing_every_body() -> None:
    rng = np.random.default_rng(38)
    hidden = 0
    for seed in (0, 1):
        q = build_question("long_term_navigation", seed, 0, n_rooms=6)
        spec = checked_house(q.scene, q.id)
        culled = HouseSim(spec, width=96, height=96)
        full = HouseSim(spec, width=96, height=96, cull=False)
        try:
            for pose in standable(spec, 24, rng):
                assert frame_bytes(culled, pose) == frame_bytes(full, pose), pose
                hidden += len(culled._hidden)
            assert full._hidden == set()
        finally:
            culled.close()
            full.close()
    assert hidden > 0, "culling hid nothing: the check above would prove nothing"


def test_the_same_walk_renders_the_same_bytes_in_a_fresh_env() -> None:
    """Reproducibility (resume replays a walk): what was hidden for the previous frame never
    shows in the next, so a walk gives the same frames in a new env as in one that rendered
    other poses first."""
    q = build_question("long_term_navigation", 3, 0, n_rooms=6)
    walk = ["turn_left", "move_forward", "move_forward", "turn_right", "turn_right", "move_forward"] * 3

    def frames(env: HouseEnv) -> list[bytes]:
        obs, _ = env.reset(options={"question": q})
        out = [obs.image.array().tobytes()]
        for name in walk:
            out.append(env.step(Action(name=name)).observation.image.array().tobytes())
        return out

    used = HouseEnv(width=80, height=80, privileged=False)
    fresh = HouseEnv(width=80, height=80, privileged=False)
    try:
        used.reset(options={"question": build_question("long_term_navigation", 4, 0, n_rooms=6)})
        for name in ["turn_left"] * 5:
            used.step(Action(name=name))
        assert frames(used) == frames(fresh)
    finally:
        used.close()
        fresh.close()
