"""``eviseek/House-v0``: a multi-room house an agent walks through with a navigating camera.

One episode hosts one question (``reset(options={"question": q})``; without one, a question is
generated from ``seed``). Actions are the paper's navigation interface (Table 7):
``move_forward`` 0.25 m, ``turn_left``/``turn_right`` 30 degrees and ``stop``. With
``look=True`` (ours, not the paper's) ``look_up``/``look_down`` tilt the camera by 30 degrees
(tilt kept within -60..+30). A step that would put the agent's body into
a wall or a piece of furniture does not move it: it comes back as ``success=False`` with the
reason (``blocked by a wall``), never as a pass-through. Every step charges one unit of the budget
(default 120: the EviSeek paper's navigation budget, section 5.5; EXPRESS-Bench's own code
teleports between waypoints and sets no step budget or turn angle).

Agent-facing and privileged parts are kept apart, as on the tabletop: the agent gets RGB (plus
depth when ``privileged``, which an RGB-D explorer such as Fine-EQA's uses) and the
:class:`~eviseek.envs.base.Env` protocol; ground truth, the true occupancy grid, geodesic
distances, the target and visual support live behind :attr:`HouseEnv.oracle`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from eviseek.envs import view
from eviseek.envs.base import question_from_options
from eviseek.envs.budget import NAVIGATION_BUDGET
from eviseek.envs.house.grid import OccupancyGrid, blocker_at
from eviseek.envs.house.limits import checked_house
from eviseek.envs.house.questions import ENV_ID, KINDS, build_question, unknown_kinds_message
from eviseek.envs.house.seen import SeenMap
from eviseek.envs.house.sim import HouseProbe, HouseSim, check_renderer
from eviseek.envs.house.spec import HouseSpec
from eviseek.envs.range_scan import SCAN_MAX_RANGE, SCAN_RAYS, range_scan
from eviseek.envs.simulated import SimulatedEnv, SupportOracle
from eviseek.envs.support import Evidence
from eviseek.errors import EnvError
from eviseek.types import Action, ActionSpec, Feedback, Observation, Pose

DEFAULT_MAX_STEPS = NAVIGATION_BUDGET
"""The EviSeek paper's navigation step budget (section 5.5), not EXPRESS-Bench's code's."""
MOVE_STEP = 0.25
TURN_STEP = 30.0
LOOK_STEP = 30.0
PITCH_RANGE = (-60.0, 30.0)
"""Tilt limits in degrees (ours: two looks down, one up, from level)."""
_COLLISION_SAMPLES = 5

NAV_ACTIONS: tuple[str, ...] = ("move_forward", "turn_left", "turn_right")
"""The paper's navigation primitives (Table 7); ``stop`` ends the episode."""
LOOK_ACTIONS: tuple[str, ...] = ("look_up", "look_down")
"""Camera tilts, offered only with ``HouseEnv(look=True)`` (ours: Table 7 has no tilt)."""
_NAV_SPECS = [
    ActionSpec(name="move_forward", kind="camera", magnitude=MOVE_STEP, description="walk forward 0.25 m"),
    ActionSpec(name="turn_left", kind="camera", magnitude=TURN_STEP, description="turn left by 30 degrees"),
    ActionSpec(name="turn_right", kind="camera", magnitude=TURN_STEP, description="turn right by 30 degrees"),
]
_LOOK_SPECS = [
    ActionSpec(
        name="look_up",
        kind="camera",
        magnitude=LOOK_STEP,
        description="tilt the view up by 30 degrees (ours)",
    ),
    ActionSpec(
        name="look_down",
        kind="camera",
        magnitude=LOOK_STEP,
        description="tilt the view down by 30 degrees (ours)",
    ),
]
STOP_SPEC = ActionSpec(name="stop", kind="control", description="end the episode (answer from what you have)")
_EVIDENCE = TypeAdapter(list[Evidence])
__all__ = ["SCAN_MAX_RANGE", "SCAN_RAYS", "HouseEnv", "HouseOracle", "nav_action_specs", "range_scan"]


def nav_action_specs(*, look: bool = False) -> list[ActionSpec]:
    """The navigation primitives (Table 7's; with ``look``, also our tilts) followed by ``stop``."""
    specs = _NAV_SPECS + (_LOOK_SPECS if look else [])
    return [s.model_copy() for s in specs] + [STOP_SPEC.model_copy()]


class HouseEnv(SimulatedEnv["HouseOracle"]):
    """The house environment (implements ``Env`` and ``SupportGradingEnv``)."""

    env_id: str = ENV_ID

    def __init__(
        self,
        *,
        width: int = 320,
        height: int = 240,
        renderer: str = "tiny",
        max_steps: int = DEFAULT_MAX_STEPS,
        privileged: bool = True,
        kinds: list[str] | None = None,
        look: bool = False,
    ) -> None:
        """``look``: also offer ``look_up``/``look_down`` (ours; the paper's interface has no tilt)."""
        self.look = look
        check_renderer(renderer)  # when the env is built, not at its first reset
        self._setup(width=width, height=height, renderer=renderer, max_steps=max_steps, privileged=privileged)
        unknown = [k for k in kinds or [] if k not in KINDS]
        if unknown:
            raise EnvError(unknown_kinds_message(unknown))
        self.kinds = kinds
        self._sim: HouseSim | None = None
        self._probe: HouseProbe | None = None
        self._spec: HouseSpec | None = None
        self._grid: OccupancyGrid | None = None
        self._grid_key: str | None = None
        self._poses: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {}
        self._path_length = 0.0
        self._collisions = 0
        self._depths: list[tuple[np.ndarray, Pose]] = []

    # -- Env protocol ----------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode for ``options["question"]``, or a question generated from ``seed``."""
        question = question_from_options(options)
        if question is None:
            kinds = self.kinds or list(KINDS)
            s = seed or 0
            question = build_question(kinds[s % len(kinds)], s, 0)
        if question.env_id not in (None, ENV_ID):
            raise EnvError(f"question {question.id!r} is for {question.env_id}, not {ENV_ID}")
        # Bounded and validated before building: over an env server a client writes the scene.
        spec = checked_house(question.scene, question.id)
        if self._sim is None:
            self._sim = HouseSim(spec, width=self.width, height=self.height, renderer=self.renderer)
        else:
            self._sim.build(spec)
        self._spec = spec
        self._question = question
        self._poses = self._sim.poses()
        self._grader = None
        if self.privileged:
            if self._probe is None:
                self._probe = HouseProbe(spec, width=self.width, height=self.height)
            else:
                self._probe.load(spec)
            self._start_grader(
                _EVIDENCE.validate_python(question.metadata.get("evidence", [])), self._sim.vfov
            )
        self._oracle = HouseOracle(self) if self.privileged else None
        self._path_length = 0.0
        self._collisions = 0
        self._depths = []
        return self._begin_episode(spec.start)

    def _started(self) -> bool:
        return self._spec is not None

    def legal_actions(self) -> list[ActionSpec]:
        """The navigation primitives (Table 7's, plus the tilts with ``look``) and ``stop``."""
        if self._spec is None:
            raise EnvError("legal_actions() called before reset()")
        return nav_action_specs(look=self.look)

    # -- public read-only state ---------------------------------------------------------

    @property
    def path_length(self) -> float:
        """Metres walked so far in this episode (successful ``move_forward`` steps)."""
        return self._path_length

    @property
    def vfov(self) -> float:
        """The camera's vertical field of view in degrees."""
        assert self._sim is not None, "reset() first"
        return self._sim.vfov

    # -- internals -------------------------------------------------------------------

    def _grid_for(self) -> OccupancyGrid:
        assert self._spec is not None and self._question is not None
        if self._grid is None or self._grid_key != self._question.id:
            self._grid = OccupancyGrid(self._spec)
            self._grid_key = self._question.id
        return self._grid

    def _info(self) -> dict[str, Any]:
        return {
            **super()._info(),
            "path_length": round(self._path_length, 6),
            "collisions": self._collisions,
        }

    def _execute(self, action: Action) -> Feedback:
        assert self._spec is not None
        name = action.name
        pose = self._pose
        if name == "move_forward":
            yaw = math.radians(pose.yaw)
            dx, dy = MOVE_STEP * math.cos(yaw), MOVE_STEP * math.sin(yaw)
            for k in range(1, _COLLISION_SAMPLES + 1):
                t = k / _COLLISION_SAMPLES
                hit = blocker_at(self._spec, pose.x + t * dx, pose.y + t * dy)
                if hit is not None:
                    self._collisions += 1
                    what = "a wall" if hit.startswith("wall:") or hit == "outside" else "a piece of furniture"
                    return Feedback(
                        operation=name,
                        success=False,
                        reason=f"blocked by {what}; the agent did not move",
                        state={"collided": True},
                    )
            self._pose = pose.model_copy(
                update={"x": round(pose.x + dx, 6) + 0.0, "y": round(pose.y + dy, 6) + 0.0}
            )
            self._path_length += MOVE_STEP
            return Feedback(operation=name, success=True)
        if name in ("turn_left", "turn_right"):
            sign = 1.0 if name == "turn_left" else -1.0
            self._pose = pose.model_copy(update={"yaw": view.wrap_yaw(pose.yaw + sign * TURN_STEP)})
            return Feedback(operation=name, success=True)
        if name in LOOK_ACTIONS and self.look:
            sign = 1.0 if name == "look_up" else -1.0
            pitch = pose.pitch + sign * LOOK_STEP
            lo, hi = PITCH_RANGE
            if not lo - 1e-6 <= pitch <= hi + 1e-6:
                limit = hi if sign > 0 else lo
                return Feedback(
                    operation=name,
                    success=False,
                    reason=f"cannot tilt further (tilt stays within {lo:g}..{hi:g} degrees; now {limit:g})",
                )
            self._pose = pose.model_copy(update={"pitch": round(pitch, 6) + 0.0})
            return Feedback(operation=name, success=True)
        if name == "stop":
            return self._stop()
        legal = ", ".join(s.name for s in nav_action_specs(look=self.look))
        return Feedback(
            operation=name, success=False, reason=f"unknown action {name!r}; legal actions: {legal}"
        )

    def _frame_objects(self) -> tuple[dict[str, tuple[tuple[float, ...], tuple[float, ...]]], dict[str, int]]:
        assert self._sim is not None
        return self._poses, self._sim.uid

    def _observe(self) -> Observation:
        assert self._sim is not None
        frame = self._sim.render(self._pose)
        obs = self._frame_observation(frame, {})
        if self._grader is not None:
            self._depths.append((frame.depth, self._pose.model_copy()))
        scan = range_scan(frame.depth, self._pose.pitch, self._sim.spec.hfov, camera_z=self._pose.z)
        if scan is not None:
            obs.metadata["range_scan"] = scan
        self._last_obs = obs
        return obs


class HouseOracle(SupportOracle):
    """Privileged views of a house episode: truth, maps, distances, support. Never for agents."""

    def __init__(self, env: HouseEnv) -> None:
        self._env: HouseEnv = env
        self._seen: SeenMap | None = None
        self._seen_frames = 0

    @property
    def spec(self) -> HouseSpec:
        """The house (rooms, doorways, walls, items)."""
        assert self._env._spec is not None
        return self._env._spec

    @property
    def target(self) -> tuple[float, float, float]:
        """The question's target location (where its evidence is)."""
        assert self._env._question is not None
        x, y, z = self._env._question.metadata["target"]["position"]
        return (float(x), float(y), float(z))

    def occupancy(self) -> OccupancyGrid:
        """The TRUE occupancy grid (navigable cells for the agent's body)."""
        return self._env._grid_for()

    def seen_map(self) -> SeenMap:
        """The occupancy map of what this episode's frames have SEEN so far (from their depth)."""
        if self._seen is None:
            self._seen = SeenMap(centre=_centre(self.spec))
        frames = self._env._depths
        for depth, pose in frames[self._seen_frames :]:
            self._seen.integrate(depth, pose, self._env.vfov)
        self._seen_frames = len(frames)
        return self._seen

    def geodesic_distance(self, a: tuple[float, float], b: tuple[float, float]) -> float:
        """Shortest walking distance (metres) between two points."""
        return self.occupancy().geodesic_distance(a, b)

    def shortest_path(self, a: tuple[float, float], b: tuple[float, float]) -> list[tuple[float, float]]:
        """Waypoints of a shortest walk from ``a`` to ``b``."""
        return self.occupancy().shortest_path(a, b)

    def distance_to_target(self) -> float:
        """Geodesic distance from the agent's current position to the target (d_T's term)."""
        p = self._env._pose
        x, y, _ = self.target
        return self.geodesic_distance((p.x, p.y), (x, y))

    @property
    def path_length(self) -> float:
        """Metres walked in this episode."""
        return self._env.path_length

    @property
    def shortest_path_length(self) -> float:
        """Shortest walk from the start to the target (E_path's ``l``)."""
        assert self._env._question is not None
        return float(self._env._question.metadata["shortest_path_m"])

    def room_of_agent(self) -> str | None:
        """The room the agent stands in."""
        p = self._env._pose
        return self.spec.room_at(p.x, p.y)

    def body_uids(self) -> dict[str, int]:
        """Body id (value in segmentation masks) of every named body."""
        assert self._env._sim is not None
        return dict(self._env._sim.uid)


def _centre(spec: HouseSpec) -> tuple[float, float]:
    x0, y0, x1, y1 = spec.bounds
    return ((x0 + x1) / 2, (y0 + y1) / 2)
