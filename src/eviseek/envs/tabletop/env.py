"""``eviseek/Tabletop-v0``: the tabletop environment agents act in.

One episode hosts one question (``reset(options={"question": q})``; without a question a fresh
one is generated from ``seed``). Every step charges one unit of the budget (default 30), renders a
new frame and returns ESI-Bench-style feedback. Bad actions never raise: they come back as
``success=False`` feedback naming the legal choices.

Agent-facing and privileged parts are kept apart. What an agent may use is the :class:`Env`
protocol (``reset``, ``step``, ``legal_actions``) and the RGB image. Ground truth, segmentation,
depth and visual support live behind :attr:`TabletopEnv.oracle`; with ``privileged=False`` the
oracle raises and observations carry no depth or masks, so a test can prove an agent never
reaches for them.
"""

from __future__ import annotations

from typing import Any

from eviseek import env_ids
from eviseek.envs.base import question_from_options
from eviseek.envs.budget import TABLETOP_BUDGET
from eviseek.envs.simulated import PrivilegedAccessError, SimulatedEnv, SupportOracle
from eviseek.envs.tabletop import camera as cam
from eviseek.envs.tabletop.families import TaskFamily, World, get_family
from eviseek.envs.tabletop.limits import checked_scene
from eviseek.envs.tabletop.manipulation import Manipulator
from eviseek.envs.tabletop.sim import ProbeSim, TabletopSim
from eviseek.envs.tabletop.support import ActionEvent
from eviseek.errors import EnvError
from eviseek.types import Action, ActionSpec, Feedback, Observation

__all__ = [
    "DEFAULT_MAX_STEPS",
    "ENV_ID",
    "STOP_SPEC",
    "PrivilegedAccessError",
    "TabletopEnv",
    "TabletopOracle",
]

ENV_ID = env_ids.TABLETOP
DEFAULT_MAX_STEPS = TABLETOP_BUDGET

STOP_SPEC = ActionSpec(name="stop", kind="control", description="end the episode (answer from what you have)")


class TabletopEnv(SimulatedEnv["TabletopOracle"]):
    """The tabletop benchmark environment (implements ``Env`` and ``SupportGradingEnv``)."""

    env_id: str = ENV_ID

    def __init__(
        self,
        *,
        width: int = 320,
        height: int = 240,
        renderer: str = "tiny",
        max_steps: int = DEFAULT_MAX_STEPS,
        privileged: bool = True,
        subcategories: list[str] | None = None,
    ) -> None:
        self._setup(width=width, height=height, renderer=renderer, max_steps=max_steps, privileged=privileged)
        if renderer not in ("tiny", "egl"):
            raise EnvError(f"unknown renderer {renderer!r}; use 'tiny' (TinyRenderer) or 'egl'")
        self.subcategories = subcategories
        self._sim: TabletopSim | None = None
        self._probe: ProbeSim | None = None
        self._family: TaskFamily | None = None
        self._world: World | None = None
        self._action_frames: list[Observation] = []

    # -- Env protocol ----------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode for ``options["question"]``, or a question generated from ``seed``."""
        question = question_from_options(options)
        if question is None:
            from eviseek.envs.tabletop.generate import sample_question

            question = sample_question(seed or 0, subcategories=self.subcategories, render_images=False)
        try:
            family = get_family(question.metadata.get("slug") or question.subcategory)
        except Exception as exc:
            raise EnvError(f"question {question.id!r} is not a tabletop question: {exc}") from exc
        # A private copy (the sim may mutate state), bounded before anything is built: over an env
        # server the scene is whatever a client sent.
        spec = checked_scene(question.scene)
        if self._sim is None:
            self._sim = TabletopSim(spec, width=self.width, height=self.height, renderer=self.renderer)
        else:
            self._sim.build(spec)
        for change in spec.changes:
            self._sim.apply_change(change)
        self._question = question
        self._family = family
        self._world = World(
            sim=self._sim, manipulator=Manipulator(self._sim), scene=spec, metadata=dict(question.metadata)
        )
        self._grader = None
        if self.privileged:
            if self._probe is None:
                self._probe = ProbeSim(width=self.width, height=self.height)
            self._probe.load(spec)
            self._start_grader(family.evidence(spec, question.metadata), spec.fov)
        self._oracle = TabletopOracle(self) if self.privileged else None
        self._action_frames = []
        return self._begin_episode(spec.camera)

    def _started(self) -> bool:
        return self._world is not None and self._family is not None

    def legal_actions(self) -> list[ActionSpec]:
        """Camera primitives, ``stop``, and this question's manipulation primitives."""
        if self._world is None or self._family is None:
            raise EnvError("legal_actions() called before reset()")
        scene, meta = self._world.scene, self._world.metadata
        specs = [*cam.camera_action_specs(), STOP_SPEC]
        if self._family.manipulations:
            specs += self._world.manipulator.specs(
                list(self._family.manipulations),
                self._family.manipulable(scene, meta),
                self._family.targets(scene, meta),
            )
        specs += self._family.custom_actions(scene, meta)
        return specs

    # -- internals -------------------------------------------------------------------

    def _execute(self, action: Action) -> Feedback:
        assert self._world is not None and self._family is not None and self._sim is not None
        name = action.name
        world = self._world
        if name in cam.CAMERA_ACTIONS:
            assert self._world is not None
            self._pose, clamped = cam.apply_camera_action(self._pose, name, world.scene.bounds)
            if clamped:
                return Feedback(
                    operation=name,
                    success=True,
                    reason=f"clamped at the workspace bound ({', '.join(clamped)})",
                    state={"clamped": True, "bounds": clamped},
                )
            return Feedback(operation=name, success=True)
        if name == "stop":
            return self._stop()
        scene, meta = world.scene, world.metadata
        fb: Feedback | None = None
        before = self._frame_id
        if name in self._family.manipulations:
            fb = world.manipulator.execute(
                name,
                dict(action.args),
                self._family.manipulable(scene, meta),
                self._family.targets(scene, meta),
            )
        elif name in {s.name for s in self._family.custom_actions(scene, meta)}:
            world.record = self._record_action_frame
            try:
                fb = self._family.handle_action(world, action)
            finally:
                world.record = None
            if fb is None:
                raise EnvError(f"family {self._family.slug} declared {name!r} but did not handle it")
        if fb is None:
            legal = ", ".join(s.name for s in self.legal_actions())
            return Feedback(
                operation=name, success=False, reason=f"unknown action {name!r}; legal actions: {legal}"
            )
        fb.state.update(self._family.task_state(world))
        if self._grader is not None:
            # Frames recorded while the action ran (a slide) show its outcome unfolding, all but
            # the first (the moment of release); a slid object may have left the final view.
            recorded = self._frame_id > before
            self._grader.add_event(
                ActionEvent(
                    name=name,
                    args=dict(action.args),
                    success=fb.success,
                    frame_after=before + 2 if recorded else self._frame_id + 1,
                )
            )
        return fb

    def _pose_bounds(self) -> dict[str, list[float]]:
        """The camera's vertical and pitch bounds relative to its start pose: part of the
        interface (how far up, down and how steeply the camera can go), so an agent's
        dead-reckoned pose estimate can respect them without reading the camera pose."""
        assert self._world is not None
        bounds, start = self._world.scene.bounds, self._world.scene.camera
        return {
            "z": [round(bounds.z[0] - start.z, 6), round(bounds.z[1] - start.z, 6)],
            "pitch": [round(bounds.pitch[0] - start.pitch, 6), round(bounds.pitch[1] - start.pitch, 6)],
        }

    def _frame_objects(self) -> tuple[dict[str, tuple[tuple[float, ...], tuple[float, ...]]], dict[str, int]]:
        assert self._sim is not None
        return self._sim.poses(), dict(self._sim.uid)

    def _record_action_frame(self) -> None:
        """Render the scene now as one of the running action's frames (see ``World.record``)."""
        self._action_frames.append(self._render_frame())

    def _render_frame(self) -> Observation:
        assert self._sim is not None
        frame = self._sim.render(self._pose)
        return self._frame_observation(frame, {"pose_bounds": self._pose_bounds()})

    def _observe(self) -> Observation:
        obs = self._render_frame()
        obs.action_frames, self._action_frames = self._action_frames, []
        self._last_obs = obs
        return obs


class TabletopOracle(SupportOracle):
    """Privileged views of an episode: ground truth, evidence, masks, visual support.

    For scoring and tests only. Agents get none of this.
    """

    def __init__(self, env: TabletopEnv) -> None:
        self._env: TabletopEnv = env

    def visible_fraction(self, frame_id: int, name: str) -> float:
        """Share of ``name``'s unoccluded pixel area visible in frame ``frame_id``."""
        return self._grader().visible_fraction(frame_id, name)

    def visibility(self, frame_id: int, name: str) -> tuple[int, int]:
        """(visible pixels, unoccluded pixels) of ``name`` in frame ``frame_id``."""
        return self._grader().visibility(frame_id, name)

    def object_uids(self) -> dict[str, int]:
        """Body id of every object (values in segmentation masks)."""
        assert self._env._sim is not None
        return dict(self._env._sim.uid)

    @property
    def evidence(self) -> list[Any]:
        """The declared evidence pieces."""
        return list(self._grader().evidence)

    @property
    def world(self) -> World:
        """The live simulator world (for tests that inspect physical state)."""
        if self._env._world is None:
            raise EnvError("no episode yet; call reset() first")
        return self._env._world
