"""A relative camera pose dead-reckoned from the camera commands the agent sent.

The estimate starts at zero and moves by each command's nominal magnitude (from the action's
``ActionSpec.magnitude``). It never reads the simulator's pose, so it can drift from the true
one, exactly as the paper's annotations do. ``E``/``N`` are the agent's own axes: north is the
initial heading and yaw grows counter-clockwise (a left turn is positive).

The paper's estimate is "subject to vertical and pitch bounds" (app. E). An environment states
its bounds, relative to the start, in ``Observation.metadata["pose_bounds"]`` (``{"z": [lo, hi],
"pitch": [lo, hi]}``, metres and degrees; the tabletop does); the estimate never leaves them.
Without them, pitch stays within +-90 degrees, and a command the feedback reports as clamped on
the vertical or pitch axis (``state["bounds"]``, e.g. ``["z<=1.6"]``) leaves that axis where it
was and marks that side as a bound from then on (ours: the feedback is task-exposed, the
simulator pose is not).
"""

from __future__ import annotations

import math
from typing import Any

from eviseek.types import Action, ActionSpec, Feedback, Pose

DEFAULT_MOVE_M = 0.25
DEFAULT_TURN_DEG = 15.0
PITCH_LIMIT = 90.0


class PoseTracker:
    """Integrates camera commands into a relative pose estimate."""

    def __init__(self, legal: list[ActionSpec] | None = None, bounds: Any = None) -> None:
        self.pose = Pose()
        self._magnitude: dict[str, float] = {}
        self._bounds: dict[str, list[float]] = {
            "z": [-math.inf, math.inf],
            "pitch": [-PITCH_LIMIT, PITCH_LIMIT],
        }
        self._declared: set[str] = set()
        if legal:
            self.update_legal(legal)
        self.update_bounds(bounds)

    def update_bounds(self, bounds: Any) -> None:
        """Take the env's vertical and pitch bounds relative to the start (``pose_bounds``).

        Anything unreadable is ignored: the estimate keeps its defaults."""
        if not isinstance(bounds, dict):
            return
        for axis in ("z", "pitch"):
            pair = bounds.get(axis)
            if isinstance(pair, list | tuple) and len(pair) == 2:
                try:
                    lo, hi = float(pair[0]), float(pair[1])
                except (TypeError, ValueError):
                    continue
                if lo <= hi:
                    self._bounds[axis] = [lo, hi]
                    self._declared.add(axis)

    def bounds(self) -> dict[str, tuple[float, float]]:
        """The vertical and pitch bounds the estimate is kept within."""
        return {axis: (lo, hi) for axis, (lo, hi) in self._bounds.items()}

    def _learn_clamp(self, feedback: Feedback | None) -> set[str]:
        """Axes the feedback says were clamped; without a declared bound, the side hit becomes one."""
        if feedback is None or not feedback.state.get("clamped"):
            return set()
        hit: set[str] = set()
        for label in feedback.state.get("bounds") or []:
            text = str(label)
            for axis, attr in (("z", "z"), ("pitch", "pitch")):
                if not text.startswith(axis) or axis in self._declared:
                    continue
                hit.add(axis)
                lo, hi = self._bounds[axis]
                here = float(getattr(self.pose, attr))
                if "<=" in text and hi > here:
                    self._bounds[axis][1] = here
                elif ">=" in text and lo < here:
                    self._bounds[axis][0] = here
        return hit

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
        self._learn_clamp(feedback)
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
            z = min(self._bounds["z"][1], z + mag)
        elif name == "move_down":
            # Relative height: below the start is negative; the floor is the env's bound if stated.
            z = max(self._bounds["z"][0], z - mag)
        elif name == "turn_left":
            yaw_deg = _wrap(yaw_deg + mag)
        elif name == "turn_right":
            yaw_deg = _wrap(yaw_deg - mag)
        elif name == "turn_up":
            pitch = min(self._bounds["pitch"][1], pitch + mag)
        elif name == "turn_down":
            pitch = max(self._bounds["pitch"][0], pitch - mag)
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
