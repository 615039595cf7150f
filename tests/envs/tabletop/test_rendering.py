"""Mirrors, glass, cloth and lighting in the tabletop renderer, checked against geometry worked out
by hand (not through the optics module's own helpers)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eviseek.envs.tabletop import camera as cam
from eviseek.envs.tabletop.colors import PALETTE
from eviseek.envs.tabletop.scene import LightSpec, ObjectSpec, SceneSpec, yaw_quat
from eviseek.envs.tabletop.sim import TabletopSim
from eviseek.envs.tabletop.sim.cloth import THICKNESS
from eviseek.types import Pose

W, H = 160, 120


def _cube(color: str, x: float, y: float, s: float = 0.06) -> ObjectSpec:
    return ObjectSpec(
        name=f"{color}_cube",
        shape="box",
        category="cube",
        color=color,
        size=(s, s, s),
        position=(x, y, s / 2),
        mass=0.0,
    )


def _mirror(x: float, yaw: float = 180.0) -> ObjectSpec:
    """A 0.5 x 0.3 m mirror standing at ``x``, its face towards -x (yaw 180)."""
    return ObjectSpec(
        name="mirror",
        shape="box",
        category="mirror",
        color="white",
        size=(0.02, 0.5, 0.3),
        position=(x, 0.0, 0.15),
        orientation=yaw_quat(yaw),
        mass=0.0,
        movable=False,
        material="mirror",
    )


def _sim(objects: list[ObjectSpec], light: LightSpec | None = None) -> TabletopSim:
    return TabletopSim(SceneSpec(objects=objects, light=light or LightSpec()), width=W, height=H)


def test_a_mirror_shows_the_mirror_image_of_what_stands_in_front_of_it() -> None:
    # The mirror face is the plane x = 0.29 (centre 0.3, 2 cm thick, facing -x). The red cube sits
    # at x = 0.1, off to the side, where the camera does not see it directly; its mirror image is
    # at x = 2 * 0.29 - 0.1 = 0.48.
    sim = _sim([_mirror(0.3), _cube("red", 0.1, 0.12)])
    pose = Pose(x=-0.4, y=-0.05, z=0.12, yaw=0.0, pitch=-5.0)
    frame = sim.render(pose)
    assert frame.reflection is not None
    (uv,), _ = cam.project(np.array([[0.48, 0.12, 0.03]]), pose, 60.0, W, H)
    u, v = int(uv[0]), int(uv[1])
    red = sim.uid["red_cube"]
    assert frame.reflection[v, u] == red
    assert frame.segmentation[v, u] == sim.uid["mirror"]  # the surface there is the mirror's
    r, g, b = frame.rgb[v, u].astype(int)
    assert r > 2 * g and r > 2 * b, "the mirror shows the red cube in red"
    # Nothing red where the reflection does not show the cube.
    assert np.count_nonzero(frame.reflection == red) > 20


def test_a_mirror_seen_from_behind_reflects_nothing() -> None:
    sim = _sim([_mirror(0.3, yaw=0.0), _cube("red", 0.1, 0.12)])
    frame = sim.render(Pose(x=-0.4, y=-0.05, z=0.12, yaw=0.0, pitch=-5.0))
    assert frame.reflection is None or not (frame.reflection >= 0).any()


def test_glass_lets_the_object_inside_show_through() -> None:
    jar = ObjectSpec(
        name="jar",
        shape="container",
        category="jar",
        color="white",
        size=(0.12, 0.12, 0.14),
        position=(0.0, 0.0, 0.07),
        mass=0.0,
        material="glass",
    )
    ball = ObjectSpec(
        name="blue_ball",
        shape="sphere",
        category="ball",
        color="blue",
        size=(0.06, 0.06, 0.06),
        position=(0.0, 0.0, 0.04),
        mass=0.0,
    )
    sim = _sim([jar, ball])
    pose = Pose(x=-0.5, y=0.0, z=0.04, yaw=0.0, pitch=0.0)  # level with the ball, through the wall
    frame = sim.render(pose)
    (uv,), _ = cam.project(np.array([[0.0, 0.0, 0.04]]), pose, 60.0, W, H)
    u, v = int(uv[0]), int(uv[1])
    assert frame.segmentation[v, u] == sim.uid["blue_ball"]
    r, g, b = frame.rgb[v, u].astype(int)
    assert b > r + 40 and b > g + 40, "the ball reads blue through the clear wall"
    assert np.count_nonzero(frame.segmentation == sim.uid["jar"]) > 0, (
        "the jar shows where only the table is behind it"
    )
    # The same scene with an opaque jar hides the ball completely.
    opaque = _sim([jar.model_copy(update={"material": "matte"}), ball])
    assert np.count_nonzero(opaque.render(pose).segmentation == opaque.uid["blue_ball"]) == 0


@pytest.mark.parametrize("category", ["cube", "cone"])
def test_cloth_takes_the_outline_of_what_it_covers(category: str) -> None:
    s = 0.08
    if category == "cube":
        under = _cube("red", 0.0, 0.0, s)
    else:
        under = ObjectSpec(
            name="red_cone",
            shape="cone",
            category="cone",
            color="red",
            size=(s, s, 0.1),
            position=(0.0, 0.0, 0.05),
            mass=0.0,
        )
    cloth = ObjectSpec(
        name="cloth",
        shape="cloth",
        category="cloth",
        color="cyan",
        size=(0.24, 0.24, 0.01),
        position=(0.0, 0.0, 0.0),
        mass=0.0,
        movable=False,
    )
    sim = _sim([under, cloth])
    pts = sim.cloth_vertices["cloth"]
    top = under.size[2]
    assert pts[:, 2].max() == pytest.approx(top + THICKNESS, abs=0.004)
    # A flat top is as high as the object over its whole footprint; a cone's top is one point.
    near_top = pts[pts[:, 2] > top + THICKNESS - 0.004]
    spread = float(np.ptp(near_top[:, 0])) if len(near_top) > 1 else 0.0
    if category == "cube":
        assert spread >= 0.05
    else:
        assert spread <= 0.025
    assert pts[:, 2].min() == pytest.approx(THICKNESS, abs=1e-6), "the edges lie on the table"
    frame = sim.render(Pose(x=-0.45, y=0.0, z=0.3, yaw=0.0, pitch=-30.0))
    assert np.count_nonzero(frame.segmentation == sim.uid[under.name]) == 0, "the cloth hides it"
    assert np.count_nonzero(frame.segmentation == sim.uid["cloth"]) > 200


def test_light_colour_and_intensity_change_the_pixels() -> None:
    pose = Pose(x=-0.4, y=0.0, z=0.25, yaw=0.0, pitch=-30.0)
    white = _sim([_cube("white", 0.0, 0.0, 0.1)]).render(pose)
    sim = _sim(
        [_cube("white", 0.0, 0.0, 0.1)],
        LightSpec(direction=(-0.5, 0.2, 1.0), color=(1.0, 0.5, 0.25), ambient=0.25, diffuse=0.5),
    )
    warm = sim.render(pose)
    mask = white.segmentation == sim.uid["white_cube"]
    assert mask.any()
    w_mean = white.rgb[mask].astype(float).mean(axis=0)
    k_mean = warm.rgb[mask].astype(float).mean(axis=0)
    assert k_mean.sum() < 0.8 * w_mean.sum(), "dimmer light, darker cube"
    assert k_mean[0] > 1.5 * k_mean[2], "an orange light turns the white cube warm"
    assert abs(w_mean[0] - w_mean[2]) < 10, "under white light it stays neutral"
    assert math.isclose(PALETTE["white"][0], PALETTE["white"][2])
