"""Physical actions with real PyBullet physics: outcomes are decided by simulation."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from eviseek.envs.tabletop import ObjectSpec, SceneSpec
from eviseek.envs.tabletop.families._common import make_object
from eviseek.envs.tabletop.manipulation import Manipulator
from eviseek.envs.tabletop.sim import TabletopSim


def _container(name: str, inner: float, xy: tuple[float, float]) -> ObjectSpec:
    wall = 0.01
    size = inner + 2 * wall
    return ObjectSpec(
        name=name,
        shape="container",
        category="box",
        color="gray",
        size=(size, size, 0.08),
        position=(xy[0], xy[1], 0.04),
        mass=0.5,
        wall=wall,
        movable=False,
    )


@pytest.fixture
def world() -> Iterator[tuple[TabletopSim, Manipulator, list[str]]]:
    objs = [
        make_object("cube", "red", (-0.2, 0.0), 0.06),
        make_object("cube", "blue", (0.0, 0.0), 0.08),
        make_object("ball", "green", (0.2, 0.0), 0.07),
        make_object("cube", "yellow", (0.0, 0.25), 0.05),
        _container("gray_box", 0.07, (0.3, 0.25)),
    ]
    sim = TabletopSim(SceneSpec(objects=objs), width=64, height=48)
    sim.settle()
    names = [o.name for o in objs]
    yield sim, Manipulator(sim), names
    sim.close()


def test_put_on_a_cube_stays_and_reports_the_stack(world: tuple[TabletopSim, Manipulator, list[str]]) -> None:
    sim, m, names = world
    fb = m.execute("put_on", {"object": "red_cube", "target": "blue_cube"}, names, names)
    assert fb.success, fb.reason
    assert fb.state["current_stack"] == ["blue_cube", "red_cube"]
    # Independent check from the settled state: the red cube's bottom sits on the blue cube's top.
    assert sim.aabb("red_cube")[0][2] == pytest.approx(sim.aabb("blue_cube")[1][2], abs=0.004)
    fb = m.execute("put_on", {"object": "yellow_cube", "target": "red_cube"}, names, names)
    assert fb.success and fb.state["current_stack"] == ["blue_cube", "red_cube", "yellow_cube"]
    # The bottom cube cannot be lifted out from under the stack.
    fb = m.execute("pick_up", {"object": "blue_cube"}, names, names)
    assert not fb.success and "rests on" in fb.reason


def test_put_on_a_ball_falls_off(world: tuple[TabletopSim, Manipulator, list[str]]) -> None:
    sim, m, names = world
    fb = m.execute("put_on", {"object": "yellow_cube", "target": "green_ball"}, names, names)
    assert not fb.success
    # Re-simulated fact: the cube ended below the top of the ball.
    assert sim.aabb("yellow_cube")[0][2] < sim.aabb("green_ball")[1][2] - 0.01


def test_put_inside_depends_on_size(world: tuple[TabletopSim, Manipulator, list[str]]) -> None:
    sim, m, names = world
    fb = m.execute("put_inside", {"object": "yellow_cube", "target": "gray_box"}, names, names)
    assert fb.success and fb.state["inside"]
    lo, hi = sim.aabb("gray_box")
    centre = np.mean(sim.aabb("yellow_cube"), axis=0)
    assert lo[0] < centre[0] < hi[0] and lo[1] < centre[1] < hi[1] and centre[2] < hi[2]
    fb = m.execute("put_inside", {"object": "blue_cube", "target": "gray_box"}, names, names)
    assert not fb.success and "does not fit" in fb.reason
    fb = m.execute("put_inside", {"object": "red_cube", "target": "blue_cube"}, names, names)
    assert not fb.success and "not a container" in fb.reason and "gray_box" in fb.reason


def test_pick_up_place_and_put_back(world: tuple[TabletopSim, Manipulator, list[str]]) -> None:
    sim, m, names = world
    start = np.asarray(sim.pose_of("red_cube")[0])
    fb = m.execute("pick_up", {"object": "red_cube"}, names, names)
    assert fb.success and fb.state["held"] == "red_cube"
    sim.step(240)  # held objects stay up while time passes
    assert sim.pose_of("red_cube")[0][2] > 0.15
    fb = m.execute("place_on_table", {"object": "red_cube"}, names, names)
    assert fb.success and fb.state["held"] is None and "table" in sim.contacts("red_cube")
    m.execute("put_on", {"object": "red_cube", "target": "blue_cube"}, names, names)
    fb = m.execute("put_back", {"object": "red_cube"}, names, names)
    assert fb.success
    assert np.linalg.norm(np.asarray(sim.pose_of("red_cube")[0]) - start) < 0.01


def test_bad_requests_are_feedback(world: tuple[TabletopSim, Manipulator, list[str]]) -> None:
    _, m, names = world
    assert not m.execute("juggle", {"object": "red_cube"}, names, names).success
    fb = m.execute("put_on", {"object": "red_cube"}, names, names)
    assert not fb.success and "target" in fb.reason
    fb = m.execute("put_on", {"object": "red_cube", "target": "moon"}, names, names)
    assert not fb.success and "blue_cube" in fb.reason
    fb = m.execute("pick_up", {"object": "gray_box"}, ["red_cube"], names)
    assert not fb.success and "red_cube" in fb.reason
    assert not m.execute("put_on", {"object": "red_cube", "target": "red_cube"}, names, names).success


def test_liquid_is_simulated_state_drawn_in_its_container() -> None:
    box = _container("gray_box", 0.08, (0.0, 0.0)).model_copy(update={"state": {"liquid_ml": 192.0}})
    sim = TabletopSim(SceneSpec(objects=[box]), width=64, height=48)
    try:
        assert sim.liquid_level("gray_box") == pytest.approx(192e-6 / (0.08 * 0.08))
        assert "gray_box" in sim.liquid_uid
        sim.set_liquid("gray_box", 0.0)
        assert "gray_box" not in sim.liquid_uid
    finally:
        sim.close()
