"""``eviseek/ESIBench-v0``: ESI-Bench's OmniGibson tasks behind eviseek's Env protocol.

Runs inside ESI-Bench's own environment (its conda env with OmniGibson and the BEHAVIOR assets,
the checkout at ``$ESI_BENCH_ROOT``). Questions come from ``esibench:PATH``; each names its record
file, which the official pipeline loads. Every simulator call goes through
:class:`~eviseek.envs.esibench.simulator.ESIBenchSimulator`; this class only translates:

* actions: the ten camera primitives and ``stop`` keep their names. The task's own actions are
  offered by name, with their arguments and the scene's object names, as its task module's
  prompt lists them (:mod:`.task_text`: ``put_on_slope``, ``pickup``, ``pick_up(object)``,
  ``place_on_top_of(object, target)``, ``fill_water_in(object)``, ``pour_into(object, target)``,
  ``put_inside(object, container)``...), and written back as the task's phrase. For older
  callers ``physical(command=...)`` still passes a free phrase, and ``pick_up``,
  ``place_on_top`` and ``put_back`` with ``object``/``target`` are written as the pipeline's
  generic phrases, but neither is offered;
* feedback: the official result dict becomes a :class:`Feedback` of its operation, success,
  error/reason and the allowed task fields (:data:`FEEDBACK_STATE`; never ``gt_orders`` or a
  world pose); its extra images (Inclined Plane's slide frames) become
  the observation's ``action_frames``, so agents answer on them as on the tabletop.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

from eviseek import env_ids
from eviseek.envs.base import question_from_options
from eviseek.envs.esibench.checkout import import_pipeline
from eviseek.envs.esibench.simulator import ESIBenchSimulator
from eviseek.envs.esibench.task_text import TaskAction, TaskText, task_text_of
from eviseek.errors import EnvError
from eviseek.types import Action, ActionSpec, Feedback, Image, Observation, Pose, StepResult

ENV_ID = env_ids.ESIBENCH

CAMERA_MOVES = {
    "move_forward": "move 0.25 m forward (horizontal)",
    "move_backward": "move 0.25 m backward (horizontal)",
    "move_left": "move 0.25 m left",
    "move_right": "move 0.25 m right",
    "move_up": "raise the camera 0.25 m",
    "move_down": "lower the camera 0.25 m (not below 0.01 m)",
}
CAMERA_TURNS = {
    "turn_left": "turn 15 degrees left",
    "turn_right": "turn 15 degrees right",
    "turn_up": "tilt 15 degrees up",
    "turn_down": "tilt 15 degrees down",
}
_PHRASES = {
    "pick_up": "pick up {object}",
    "place_on_top": "place {object} on top of {target}",
    "put_on": "place {object} on top of {target}",
    "put_back": "put back {object}",
}


def action_command(action: Action) -> str:
    """The official action string for an eviseek action (raises ValueError when it has none)."""
    if action.name in CAMERA_MOVES or action.name in CAMERA_TURNS:
        return action.name
    if action.name == "physical":
        command = action.args.get("command", "").strip()
        if not command:
            raise ValueError("physical needs command=<the action phrase>, e.g. 'pick up the mug'")
        return command
    if action.name in _PHRASES:
        try:
            return _PHRASES[action.name].format(**action.args)
        except KeyError as exc:
            raise ValueError(f"{action.name} needs the argument {exc.args[0]}") from None
    raise ValueError(f"unknown action {action.name!r}; use a camera primitive, stop or physical(command=...)")


def pose_of(position: Any, quaternion: Any) -> Pose:
    """Position plus yaw/pitch (degrees) of the camera looking along its -z axis."""
    x, y, z, w = (float(v) for v in quaternion)
    # The camera looks along its local -z; rotate that direction by the quaternion.
    fx = -(2 * (x * z + w * y))
    fy = -(2 * (y * z - w * x))
    fz = -(1 - 2 * (x * x + y * y))
    yaw = math.degrees(math.atan2(fy, fx))
    pitch = math.degrees(math.atan2(fz, math.hypot(fx, fy)))
    px, py, pz = (float(v) for v in position)
    return Pose(x=px, y=py, z=pz, yaw=round(yaw, 3), pitch=round(pitch, 3))


FEEDBACK_STATE = frozenset(
    {
        # what the action was done to
        "action",
        "object",
        "target",
        "container",
        "reference",
        "side",
        "source_side",
        # the task's state after it, as the task reports it
        "current_stack",
        "physical_state",
        "attempts",
        "n_left",
        "n_right",
        "lift_m",
        "visibility",
        "grasp_success",
        "navigation_success",
    }
)
"""The fields of a task's action result that reach the agents besides operation, success and
reason: the objects the action was on and the task's own states (appendix D of the paper names
operation, success, reason and "task-dependent states such as current_stack"; this list is every
such field the 19 task modules return at ESI-Bench 9f35528, ours). Anything else is dropped,
among them what the paper says its history serializer never forwards (world ``position``,
``quaternion_xyzw``, stacking's accepted orders ``gt_orders``), the images (shown as frames
instead) and a task's own answer bookkeeping (Inclined Plane's ``final_answer``,
``history_update``)."""


def feedback_of(result: dict[str, Any]) -> Feedback:
    """The official result dict as eviseek feedback: operation, success and reason, and the
    fields of :data:`FEEDBACK_STATE` as state; nothing else."""
    handled = bool(result.get("handled", False))
    success = bool(result.get("success", handled))
    reason = str(
        result.get("error") or result.get("reason") or ("" if handled else "the task did not handle it")
    )
    state = {k: v for k, v in result.items() if k in FEEDBACK_STATE}
    return Feedback(
        operation=str(result.get("operation") or "noop"), success=success, reason=reason, state=state
    )


def offered_actions(task_text: TaskText | None, objects: list[str]) -> list[ActionSpec]:
    """What the bridge offers: the camera primitives, ``stop``, and the task's own actions by name
    (with the scene's object names as each argument's choices); without a task text, one free
    ``physical(command)`` phrase."""
    specs = [
        ActionSpec(name=n, kind="camera", magnitude=0.25, description=d) for n, d in CAMERA_MOVES.items()
    ]
    specs += [
        ActionSpec(name=n, kind="camera", magnitude=15.0, description=d) for n, d in CAMERA_TURNS.items()
    ]
    specs.append(ActionSpec(name="stop", kind="control", description="end the episode and answer"))
    if task_text is not None:
        for a in task_text.actions:
            said = f"{a.phrase}: {a.description}" if a.description else a.phrase
            specs.append(
                ActionSpec(
                    name=a.name,
                    kind="manipulation",
                    params=list(a.params),
                    choices={p: objects for p in a.params} if objects else {},
                    description=f"the task's action '{said}'",
                )
            )
        return specs
    listed = f"; objects: {', '.join(objects)}" if objects else ""
    specs.append(
        ActionSpec(
            name="physical",
            kind="manipulation",
            params=["command"],
            description="a physical action phrase the task allows, e.g. 'pick up X', "
            "'place X on top of Y', 'put back X'" + listed,
        )
    )
    return specs


class ESIBenchEnv:
    """One ESI-Bench question per episode, on the official simulator set-up."""

    env_id = ENV_ID

    def __init__(
        self,
        root: str | None = None,
        *,
        step_image_root: str | None = None,
        simulator: ESIBenchSimulator | None = None,
        **settings: Any,
    ) -> None:
        if simulator is None:
            folder = (
                step_image_root or os.environ.get("ESI_BENCH_STEPS") or tempfile.mkdtemp(prefix="esibench-")
            )
            simulator = ESIBenchSimulator(import_pipeline(root), step_image_root=Path(folder), **settings)
        self.sim = simulator
        self._frame = 0
        self._names: dict[str, str] = {}
        self._last: Observation | None = None
        self.task_text: TaskText | None = None
        self._task_actions: dict[str, TaskAction] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Load the question's record through the official pipeline and show the first view."""
        question = question_from_options(options)
        meta = (question.metadata.get("esibench") if question is not None else None) or {}
        source, task = meta.get("source"), meta.get("task")
        if not source or not task or not Path(str(source)).is_file():
            raise EnvError(
                "ESIBench-v0 hosts questions loaded with esibench:PATH whose record file is on this "
                f"machine (got source={source!r})"
            )
        state = self.sim.start(Path(str(source)), str(task))
        self._frame, self._last = 0, None
        self._names = self.sim.object_names()
        self.task_text = task_text_of(
            self.sim.pipeline,
            state.task,
            str(task),
            state.payload,
            state.camera_info,
            state.task_state,
            threshold=self.sim.threshold,
            min_steps=self.sim.min_steps,
        )
        self._task_actions = {a.name: a for a in self.task_text.actions}
        if question is not None and not meta.get("task_text"):
            # Loaded without a checkout at hand: the question gets its task text now, at reset.
            # Agents in this process hold the same question, so they see it from their first call.
            meta["task_text"] = self.task_text.model_dump(mode="json")
            question.guidance = self.task_text.guidance
            question.contract.task_format = self.task_text.answer_format
        info = {
            "references": [str(p) for p in state.references],
            "task": task,
            "objects": sorted(set(self._names.values())),
            "task_text": self.task_text.model_dump(mode="json"),
        }
        return self._observe(), info

    def step(self, action: Action) -> StepResult:
        """Run one action; an unusable one gives a failed feedback, never an exception."""
        if action.name == "stop":
            return StepResult(
                observation=self._observe(capture=False), feedback=Feedback(operation="stop"), terminated=True
            )
        try:
            own = self._task_actions.get(action.name)
            command = own.command(action.args) if own is not None else action_command(action)
        except ValueError as exc:
            return StepResult(
                observation=self._observe(capture=False),
                feedback=Feedback(operation=action.name, success=False, reason=str(exc)),
            )
        result = self.sim.act(command, step=self._frame + 1)
        self._frame += 1
        obs = self._observe()
        extra = [str(p) for p in result.get("extra_image_paths") or []]
        if extra:
            obs.metadata["extra_image_paths"] = extra
            obs.action_frames = self._action_frames(extra)
            obs.frame_id = self._frame
        return StepResult(observation=obs, feedback=feedback_of(result))

    def _action_frames(self, paths: list[str]) -> list[Observation]:
        """The task's extra images of one action (the slide after ``put_on_slope``), oldest first,
        as frames of their own; the observation after them keeps the frame id that follows."""
        frames: list[Observation] = []
        base = self._last
        for path in paths:
            if not Path(path).is_file():
                continue
            frames.append(
                Observation(
                    image=Image.open(path),
                    pose=base.pose if base is not None else Pose(),
                    frame_id=self._frame,
                    metadata={"image_path": path, "action_frame": True},
                )
            )
            self._frame += 1
        if frames and self._last is not None:
            self._last = self._last.model_copy(update={"frame_id": self._frame})
        return frames

    def legal_actions(self) -> list[ActionSpec]:
        """The camera primitives, ``stop``, and the task's own actions by name (see the module
        docstring); before a task text exists, one free ``physical(command)`` phrase."""
        return offered_actions(self.task_text, sorted(set(self._names.values())))

    def close(self) -> None:
        """Clean up the question and release the simulator (as the official pipeline does)."""
        self.sim.close()

    def _observe(self, capture: bool = True) -> Observation:
        state = self.sim.episode
        if state is None:
            raise EnvError("reset() first")
        if not capture and self._last is not None:
            return self._last.model_copy()  # nothing moved: the same view again
        path = self.sim.capture(self._frame + 1)
        self._last = Observation(
            image=Image.open(path),
            pose=pose_of(state.position, state.quaternion),
            frame_id=self._frame,
            metadata={"image_path": str(path)},
        )
        return self._last.model_copy()
