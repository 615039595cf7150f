"""A relative camera pose dead-reckoned from the camera commands the agent sent.

The estimate starts at zero and moves by each command's nominal magnitude (from the action's
``ActionSpec.magnitude``). It never reads the simulator's pose, so it can drift from the true
one, exactly as the paper's annotations do. ``E``/``N`` are the agent's own axes: north is the
initial heading and yaw grows counter-clockwise (a left turn is positive).
"""

from __future__ import annotations

import math

from eviseek.types import Action, ActionSpec, Feedback, Pose

DEFAULT_MOVE_M = 0.25
DEFAULT_TURN_DEG = 15.0
PITCH_LIMIT = 90.0


class PoseTracker:
    """Integrates camera commands into a relative pose estimate."""

    def __init__(self, legal: list[ActionSpec] | None = None) -> None:
        self.pose = Pose()
        self._magnitude: dict[str, float] = {}
        if legal:
            self.update_legal(legal)

    def update_legal(self, legal: list[ActionSpec]) -> None:
        """Learn each camera primitive's step size from the environment's action list."""
        for spec in legal:
            if spec.magnitude is not None:
                self._magnitude[spec.name] = float(spec.magnitude)

    def _mag(self, name: str) -> float:
        default = DEFAULT_TURN_DEG if name.startswith("turn_") else DEFAULT_MOVE_M
        return self._magnitude.get(name, default)

    def apply(self, action: Action, feedback: Feedback | None = None) -> Pose:
        """Advance the estimate by ``action``; a failed command (per its feedback) moves nothing."""
        if feedback is not None and not feedback.success:
            return self.pose
        p = self.pose
        name = action.name
        mag = self._mag(name)
        yaw = math.radians(p.yaw)
        fwd = (-math.sin(yaw), math.cos(yaw))
        right = (math.cos(yaw), math.sin(yaw))
        x, y, z, yaw_deg, pitch = p.x, p.y, p.z, p.yaw, p.pitch
        if name == "move_forward":
            x, y = x + fwd[0] * mag, y + fwd[1] * mag
        elif name == "move_backward":
            x, y = x - fwd[0] * mag, y - fwd[1] * mag
        elif name == "move_right":
            x, y = x + right[0] * mag, y + right[1] * mag
        elif name == "move_left":
            x, y = x - right[0] * mag, y - right[1] * mag
        elif name == "move_up":
            z += mag
        elif name == "move_down":
            z -= mag  # relative height: below the start is negative; the true floor is unknown
        elif name == "turn_left":
            yaw_deg = _wrap(yaw_deg + mag)
        elif name == "turn_right":
            yaw_deg = _wrap(yaw_deg - mag)
        elif name == "turn_up":
            pitch = min(PITCH_LIMIT, pitch + mag)
        elif name == "turn_down":
            pitch = max(-PITCH_LIMIT, pitch - mag)
        else:
            return self.pose  # manipulation and control commands leave the camera where it is
        self.pose = Pose(x=round(x, 4), y=round(y, 4), z=round(z, 4), yaw=yaw_deg, pitch=pitch)
        return self.pose

    def describe(self) -> str:
        """The annotation shown to the seeker, e.g. ``d(+0.25E,+0.50N,z0.75) yaw+15 pitch-30``."""
        return describe_pose(self.pose)


def describe_pose(p: Pose) -> str:
    """Text form of a relative pose estimate."""
    return f"d({p.x:+.2f}E,{p.y:+.2f}N,z{p.z:.2f}) yaw{p.yaw:+.0f} pitch{p.pitch:+.0f}"


def _wrap(deg: float) -> float:
    """Yaw in (-180, 180]."""
    deg = (deg + 180.0) % 360.0 - 180.0
    return 180.0 if deg == -180.0 else deg
