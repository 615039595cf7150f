"""The floating camera: step sizes, flattened moves, turns, clamping, projection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eviseek.envs.tabletop import camera as cam
from eviseek.envs.tabletop.scene import CameraBounds
from eviseek.types import Pose

B = CameraBounds()


def test_forward_moves_in_the_horizontal_plane_along_the_yaw_even_when_looking_down() -> None:
    p = Pose(x=0.0, y=0.0, z=0.5, yaw=90.0, pitch=-60.0)
    q, clamped = cam.apply_camera_action(p, "move_forward", B)
    assert not clamped
    assert q.x == pytest.approx(0.0, abs=1e-9) and q.y == pytest.approx(0.25) and q.z == 0.5


def test_right_left_up_down_and_turns() -> None:
    p = Pose(x=0.0, y=0.0, z=0.5, yaw=0.0, pitch=0.0)
    r, _ = cam.apply_camera_action(p, "move_right", B)
    assert (r.x, r.y) == (0.0, -0.25)  # facing +x, right is -y
    left, _ = cam.apply_camera_action(p, "move_left", B)
    assert left.y == 0.25
    assert cam.apply_camera_action(p, "move_up", B)[0].z == 0.75
    assert cam.apply_camera_action(p, "move_down", B)[0].z == 0.25
    assert cam.apply_camera_action(p, "turn_left", B)[0].yaw == 15.0
    assert cam.apply_camera_action(p, "turn_right", B)[0].yaw == -15.0
    assert cam.apply_camera_action(p, "turn_down", B)[0].pitch == -15.0
    # Twenty-four left turns come back to the start without drift.
    q = p
    for _ in range(24):
        q, _ = cam.apply_camera_action(q, "turn_left", B)
    assert q.yaw == 0.0


def test_moves_and_tilts_past_a_bound_are_clamped_and_reported() -> None:
    p = Pose(x=1.4, y=0.0, z=0.05, yaw=0.0, pitch=-90.0)
    q, clamped = cam.apply_camera_action(p, "move_forward", B)
    assert q.x == B.x[1] and clamped == [f"x<={B.x[1]:g}"]
    q, clamped = cam.apply_camera_action(p, "move_down", B)
    assert q.z == B.z[0] and clamped
    q, clamped = cam.apply_camera_action(p, "turn_down", B)
    assert q.pitch == -90.0 and clamped == ["pitch>=-90"]


def test_unknown_camera_action_is_a_value_error_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="move_forward"):
        cam.apply_camera_action(Pose(), "fly", B)


def test_view_vectors_are_orthonormal_also_straight_down() -> None:
    for pitch in (0.0, -45.0, -90.0):
        f, r, u = cam.view_vectors(Pose(yaw=30.0, pitch=pitch))
        m = np.stack([f, r, u])
        assert np.allclose(m @ m.T, np.eye(3), atol=1e-9)
    f, _, _ = cam.view_vectors(Pose(pitch=-90.0))
    assert np.allclose(f, [0, 0, -1])


def test_projection_puts_the_look_at_point_in_the_image_centre() -> None:
    pose = cam.look_at_pose((-0.5, 0.2, 0.4), (0.1, 0.0, 0.0))
    uv, depth = cam.project(np.array([[0.1, 0.0, 0.0]]), pose, 60.0, 320, 240)
    assert uv[0] == pytest.approx([160, 120], abs=0.5)
    assert depth[0] == pytest.approx(math.dist((-0.5, 0.2, 0.4), (0.1, 0.0, 0.0)))


def test_camera_specs_carry_magnitudes() -> None:
    specs = {s.name: s for s in cam.camera_action_specs()}
    assert set(specs) == set(cam.CAMERA_ACTIONS) and len(specs) == 10
    assert specs["move_up"].magnitude == 0.25 and specs["turn_left"].magnitude == 15.0
