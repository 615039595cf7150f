"""``eviseek/Express-v0``: EXPRESS-Bench's HM3D scenes behind the Env protocol (Habitat bridge).

NOT RUN HERE (no habitat-sim build for our machines, HM3D is gated). Serve it where Habitat runs
and evaluate from anywhere::

    # on the Habitat machine
    export EVISEEK_ENV_TOKEN=...   # a long random secret
    eviseek env serve --env eviseek/Express-v0 --env-arg scene_root=/data/EXPRESS-Bench/data --host 0.0.0.0
    # here
    eviseek eval --dataset express:express-bench.json --env-url http://HABITAT:8731 --agents eviseek-nav ...

Actions are the EviSeek paper's navigation interface (Table 7; EXPRESS-Bench's own ``main.py``
teleports between waypoints and sets no step size or turn angle): ``move_forward`` 0.25 m,
``turn_left``/``turn_right`` 30 degrees and ``stop``; ``ExpressEnv(look=True)`` adds Habitat's
``look_up``/``look_down`` (ours). A move the navmesh stops is a failed action (``blocked``).
An agent that declares an RGB-D sensor (``reset(options={"sensors": ["rgb", "depth"]})``, as the
frontier baseline does) also gets the depth frame (``Observation.depth``) and the range scan built
from it (``metadata["range_scan"]``, :func:`eviseek.envs.range_scan.range_scan`).

Poses are reported in eviseek's frame (x = Habitat x, y = -Habitat z, z up, yaw
from +x), so path lengths follow from ``true_pose``. The episode's last step (stop, or the step
that spends the budget) reports the geodesic distance to the goal in
``feedback.state["distance_to_target"]``, which EXPRESS-Bench's d_T reads; no earlier step does, so
the agent cannot steer by it.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from eviseek.envs.base import question_from_options
from eviseek.envs.budget import NAVIGATION_BUDGET
from eviseek.envs.express.dataset import ENV_ID
from eviseek.envs.express.habitat import ACTIONS, LOOK_ACTIONS, HabitatBridge
from eviseek.envs.range_scan import range_scan
from eviseek.errors import EnvError
from eviseek.types import Action, ActionSpec, Feedback, Image, Observation, Pose, Question, StepResult

DEFAULT_MAX_STEPS = NAVIGATION_BUDGET
PITCH_LIMIT = 60.0

_SPECS = [
    ActionSpec(name=n, kind="camera", magnitude=amount, description=f"{n.replace('_', ' ')} ({amount:g})")
    for n, (_, amount) in ACTIONS.items()
] + [ActionSpec(name="stop", kind="control", description="end the episode (answer from what you have)")]


def _specs(look: bool) -> list[ActionSpec]:
    return [s.model_copy() for s in _SPECS if look or s.name not in LOOK_ACTIONS]


def wants_depth(options: dict[str, Any] | None) -> bool:
    """Whether reset options declare an RGB-D agent (``options["sensors"]`` names ``depth``)."""
    sensors = (options or {}).get("sensors") or []
    return isinstance(sensors, (list, tuple)) and "depth" in sensors


def pose_of(
    position: np.ndarray, rotation_wxyz: tuple[float, float, float, float], camera_height: float, pitch: float
) -> Pose:
    """eviseek's pose for a Habitat agent state (Habitat's forward is -z; yaw 90 faces it)."""
    w, _, y, _ = rotation_wxyz
    turn = math.degrees(2.0 * math.atan2(y, w))  # rotation about Habitat's up axis, left positive
    yaw = math.fmod(90.0 + turn + 540.0, 360.0) - 180.0
    return Pose(
        x=round(float(position[0]), 6) + 0.0,
        y=round(-float(position[2]), 6) + 0.0,
        z=round(float(position[1]) + camera_height, 6) + 0.0,
        yaw=round(yaw, 6) + 0.0,
        pitch=pitch,
    )


class ExpressEnv:
    """An EXPRESS-Bench question in its HM3D scene (implements ``Env``)."""

    env_id: str = ENV_ID

    def __init__(
        self,
        *,
        scene_root: str = ".",
        width: int = 512,
        height: int = 512,
        max_steps: int = DEFAULT_MAX_STEPS,
        habitat: ModuleType | None = None,
        look: bool = False,
    ) -> None:
        """``look``: also offer ``look_up``/``look_down`` (ours; not in the paper's Table 7)."""
        if max_steps < 1:
            raise EnvError(f"max_steps must be at least 1, got {max_steps}")
        self.bridge = HabitatBridge(scene_root, width=width, height=height, habitat=habitat)
        self.max_steps = max_steps
        self.look = look
        self._question: Question | None = None
        self._goal: list[float] = []
        self._pitch = 0.0
        self._steps = 0
        self._frame_id = -1
        self._done = False
        self._truncated = False
        self._last: Observation | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Load the question's scene and put the agent at its start."""
        question = question_from_options(options)
        if question is None:
            raise EnvError(
                "eviseek/Express-v0 needs a question: reset(options={'question': q}) from express:PATH"
            )
        scene = question.scene
        try:
            scene_id, start, rotation, goal = (
                scene["scene_id"],
                scene["start_position"],
                scene["start_rotation"],
                scene["goal_position"],
            )
        except KeyError as exc:
            raise EnvError(
                f"question {question.id!r} is not an EXPRESS-Bench question (scene lacks {exc})"
            ) from None
        self.bridge.load(scene_id, depth=wants_depth(options))
        self.bridge.place(start, rotation)
        self._question, self._goal = question, list(goal)
        self._pitch, self._steps, self._frame_id = 0.0, 0, -1
        self._done = self._truncated = False
        return self._observe(), self._info()

    def step(self, action: Action) -> StepResult:
        """One action; a blocked move or a tilt past the limit is a failed action."""
        if self._last is None:
            raise EnvError("step() called before reset()")
        if self._done or self._truncated:
            fb = Feedback(
                operation=action.name, success=False, reason="the episode is over; call reset() for a new one"
            )
            return StepResult(
                observation=self._last,
                feedback=fb,
                terminated=self._done,
                truncated=self._truncated,
                info=self._info(),
            )
        self._steps += 1
        fb = self._execute(action)
        if not self._done and self._steps >= self.max_steps:
            self._truncated = True
        if self._done or self._truncated:
            fb.state["distance_to_target"] = round(self.distance_to_target(), 4)
        return StepResult(
            observation=self._observe(),
            feedback=fb,
            terminated=self._done,
            truncated=self._truncated,
            info=self._info(),
        )

    def legal_actions(self) -> list[ActionSpec]:
        """EXPRESS-Bench's moves and turns (with ``look``, Habitat's tilts) and ``stop``."""
        return _specs(self.look)

    def close(self) -> None:
        """Release the simulator."""
        self.bridge.close()

    def distance_to_target(self) -> float:
        """Geodesic distance from the agent to the question's goal (d_T's term)."""
        position, _ = self.bridge.state()
        return self.bridge.geodesic(position, self._goal)

    def _execute(self, action: Action) -> Feedback:
        name = action.name
        if name == "stop":
            self._done = True
            return Feedback(operation="stop", success=True, reason="episode ended by the agent")
        if name not in ACTIONS or (name in LOOK_ACTIONS and not self.look):
            legal = ", ".join(s.name for s in _specs(self.look))
            return Feedback(
                operation=name, success=False, reason=f"unknown action {name!r}; legal actions: {legal}"
            )
        if name in ("look_up", "look_down"):
            pitch = self._pitch + (30.0 if name == "look_up" else -30.0)
            if abs(pitch) > PITCH_LIMIT + 1e-6:
                return Feedback(
                    operation=name,
                    success=False,
                    reason=f"cannot tilt further (limit {PITCH_LIMIT:g} degrees)",
                )
            self._pitch = pitch
        before, _ = self.bridge.state()
        collided = self.bridge.act(name)
        if name == "move_forward":
            after, _ = self.bridge.state()
            if collided and float(np.linalg.norm(after - before)) < 0.05:
                return Feedback(
                    operation=name,
                    success=False,
                    reason="blocked by the scene; the agent did not move",
                    state={"collided": True},
                )
            if collided:
                return Feedback(
                    operation=name, success=True, reason="slid along an obstacle", state={"collided": True}
                )
        return Feedback(operation=name, success=True)

    def _observe(self) -> Observation:
        position, rotation = self.bridge.state()
        self._frame_id += 1
        depth = self.bridge.depth_frame()
        metadata: dict[str, Any] = {"steps_left": self.max_steps - self._steps}
        if depth is not None:
            scan = range_scan(depth, self._pitch, self.bridge.hfov, camera_z=self.bridge.camera_height)
            if scan is not None:
                metadata["range_scan"] = scan
        obs = Observation(
            image=Image.from_array(self.bridge.rgb()),
            depth=depth,
            pose=pose_of(position, rotation, self.bridge.camera_height, self._pitch),
            frame_id=self._frame_id,
            metadata=metadata,
        )
        self._last = obs
        return obs

    def _info(self) -> dict[str, Any]:
        q = self._question
        return {
            "question_id": q.id if q else None,
            "steps": self._steps,
            "steps_left": self.max_steps - self._steps,
            "frame_id": self._frame_id,
        }
