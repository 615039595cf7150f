"""The floating camera: ESI-Bench's atomic camera actions, bounds, and view geometry.

Pure numpy, no simulator: the same functions drive the environment, the support grader and the
tests. Yaw is measured about +z from the +x axis (``turn_left`` increases it); pitch is the angle
of the view direction above the horizontal (``turn_down`` decreases it, -90 looks straight down).
Translations move along the *flattened* view vectors, so ``move_forward`` never changes height.
"""

from __future__ import annotations

import math

import numpy as np

from eviseek.envs.tabletop.scene import CameraBounds
from eviseek.envs.view import (  # shared with the house; re-exported for existing callers
    FAR,
    NEAR,
    depth_to_metric,
    position,
    project,
    projection_matrix,
    view_matrix,
    view_vectors,
    wrap_yaw,
)
from eviseek.types import ActionSpec, Pose

__all__ = [
    "CAMERA_ACTIONS",
    "FAR",
    "MOVE_STEP",
    "NEAR",
    "TURN_STEP",
    "apply_camera_action",
    "camera_action_specs",
    "depth_to_metric",
    "look_at_pose",
    "position",
    "project",
    "projection_matrix",
    "view_matrix",
    "view_vectors",
]

MOVE_STEP = 0.25
"""Metres per translation primitive (ESI-Bench's value)."""
TURN_STEP = 15.0
"""Degrees per rotation primitive (ESI-Bench's value)."""

# name -> (axis, sign, description). Axis "fwd"/"right" are horizontal, "z" vertical.
_MOVES: dict[str, tuple[str, float, str]] = {
    "move_forward": ("fwd", 1.0, "move the camera forward in the horizontal plane"),
    "move_backward": ("fwd", -1.0, "move the camera backward in the horizontal plane"),
    "move_left": ("right", -1.0, "move the camera to its left in the horizontal plane"),
    "move_right": ("right", 1.0, "move the camera to its right in the horizontal plane"),
    "move_up": ("z", 1.0, "raise the camera"),
    "move_down": ("z", -1.0, "lower the camera"),
}
_TURNS: dict[str, tuple[str, float, str]] = {
    "turn_left": ("yaw", 1.0, "rotate the view to the left (yaw)"),
    "turn_right": ("yaw", -1.0, "rotate the view to the right (yaw)"),
    "turn_up": ("pitch", 1.0, "tilt the view upward (pitch)"),
    "turn_down": ("pitch", -1.0, "tilt the view downward (pitch)"),
}

CAMERA_ACTIONS: tuple[str, ...] = (*_MOVES, *_TURNS)
"""The ten camera primitives in a fixed order."""


def camera_action_specs() -> list[ActionSpec]:
    """Action specs of the camera primitives, with their step sizes."""
    specs = [
        ActionSpec(name=n, kind="camera", magnitude=MOVE_STEP, description=d)
        for n, (_, _, d) in _MOVES.items()
    ]
    specs += [
        ActionSpec(name=n, kind="camera", magnitude=TURN_STEP, description=d)
        for n, (_, _, d) in _TURNS.items()
    ]
    return specs


def apply_camera_action(pose: Pose, name: str, bounds: CameraBounds) -> tuple[Pose, list[str]]:
    """The pose after camera primitive ``name`` and the bounds that clamped it (empty if none)."""
    clamped: list[str] = []

    def clamp(value: float, lo: float, hi: float, label: str) -> float:
        if value < lo - 1e-9:
            clamped.append(f"{label}>={lo:g}")
            return lo
        if value > hi + 1e-9:
            clamped.append(f"{label}<={hi:g}")
            return hi
        return value

    if name in _MOVES:
        axis, sign, _ = _MOVES[name]
        x, y, z = pose.x, pose.y, pose.z
        yaw = math.radians(pose.yaw)
        if axis == "fwd":
            x += sign * MOVE_STEP * math.cos(yaw)
            y += sign * MOVE_STEP * math.sin(yaw)
        elif axis == "right":
            x += sign * MOVE_STEP * math.sin(yaw)
            y -= sign * MOVE_STEP * math.cos(yaw)
        else:
            z += sign * MOVE_STEP
        new = pose.model_copy(
            update={
                "x": round(clamp(x, *bounds.x, "x"), 6) + 0.0,
                "y": round(clamp(y, *bounds.y, "y"), 6) + 0.0,
                "z": round(clamp(z, *bounds.z, "z"), 6) + 0.0,
            }
        )
        return new, clamped
    if name in _TURNS:
        axis, sign, _ = _TURNS[name]
        if axis == "yaw":
            return pose.model_copy(update={"yaw": wrap_yaw(pose.yaw + sign * TURN_STEP)}), clamped
        pitch = clamp(pose.pitch + sign * TURN_STEP, *bounds.pitch, "pitch")
        return pose.model_copy(update={"pitch": round(pitch, 6) + 0.0}), clamped
    raise ValueError(f"{name!r} is not a camera action; camera actions: {', '.join(CAMERA_ACTIONS)}")


def look_at_pose(eye: tuple[float, float, float], target: tuple[float, float, float]) -> Pose:
    """A pose at ``eye`` looking at ``target``, snapped to whole degrees."""
    d = np.asarray(target, dtype=float) - np.asarray(eye, dtype=float)
    yaw = math.degrees(math.atan2(d[1], d[0]))
    pitch = math.degrees(math.atan2(d[2], math.hypot(d[0], d[1])))
    return Pose(x=eye[0], y=eye[1], z=eye[2], yaw=round(yaw, 3) + 0.0, pitch=round(pitch, 3) + 0.0)
