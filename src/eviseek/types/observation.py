"""What an environment shows after reset or a step, and the actions it accepts."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from eviseek.types.image import Image


class Pose(BaseModel):
    """A camera pose: position in metres, yaw and pitch in degrees."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw: float = 0.0
    pitch: float = 0.0

    def describe(self) -> str:
        """Compact text form used in prompts."""
        return (
            f"x={self.x:+.2f}m y={self.y:+.2f}m z={self.z:+.2f}m "
            f"yaw={self.yaw:+.0f}deg pitch={self.pitch:+.0f}deg"
        )


class Observation(BaseModel):
    """An egocentric observation.

    ``image`` is what an agent may look at. ``depth`` and ``segmentation`` are privileged
    simulator outputs kept for scoring (visual support); they are never serialised and no
    agent prompt may include them.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    image: Image
    pose: Pose | None = None
    """The true pose, recorded for analysis. Agents must dead-reckon their own."""
    frame_id: int = 0
    """Index of this frame within the episode (0 is the initial view)."""
    depth: np.ndarray | None = Field(default=None, exclude=True, repr=False)
    segmentation: np.ndarray | None = Field(default=None, exclude=True, repr=False)
    metadata: dict[str, Any] = Field(default_factory=dict)
    action_frames: list[Observation] = Field(default_factory=list)
    """Frames rendered while the step's action ran, oldest first, each with its own ``frame_id``
    (e.g. the slide after ``put_on_slope``); this observation is the frame after them. Empty for
    actions that show only their end state."""

    def motion(self) -> list[Observation]:
        """The action's whole frame sequence: :attr:`action_frames`, then this frame."""
        if not self.action_frames:
            return []
        return [*self.action_frames, self.model_copy(update={"action_frames": []})]


class Action(BaseModel):
    """An atomic action: a primitive name plus named arguments.

    Camera primitives take no arguments (``move_forward``); manipulation primitives name
    objects, e.g. ``Action(name="put_on", args={"object": "red_cube", "target": "blue_box"})``.
    """

    name: str
    args: dict[str, str] = Field(default_factory=dict)

    def text(self) -> str:
        """A readable one-line form, e.g. ``put_on(object=red_cube, target=blue_box)``."""
        if not self.args:
            return self.name
        inner = ", ".join(f"{k}={v}" for k, v in self.args.items())
        return f"{self.name}({inner})"


ActionKind = Literal["camera", "manipulation", "control"]


class ActionSpec(BaseModel):
    """A primitive an environment accepts for the current question."""

    name: str
    kind: ActionKind = "camera"
    params: list[str] = Field(default_factory=list)
    """Argument names, e.g. ``["object", "target"]``."""
    choices: dict[str, list[str]] = Field(default_factory=dict)
    """Legal values per argument (object names in the scene)."""
    magnitude: float | None = None
    """Step size of a camera primitive: metres for moves, degrees for turns."""
    description: str = ""


class Feedback(BaseModel):
    """The outcome of an action, mirroring the benchmark's feedback fields."""

    operation: str
    success: bool = True
    reason: str = ""
    state: dict[str, Any] = Field(default_factory=dict)
    """Task-specific state, e.g. ``{"current_stack": [...]}``, ``{"clamped": True}``."""

    def summary(self, limit: int = 220) -> str:
        """A one-line summary for prompts, cut to ``limit`` characters."""
        status = "ok" if self.success else "failed"
        parts = [f"{self.operation}: {status}"]
        if self.reason:
            parts.append(self.reason)
        for key, value in self.state.items():
            parts.append(f"{key}={value}")
        text = "; ".join(parts)
        return text if len(text) <= limit else text[: limit - 3] + "..."


class StepResult(BaseModel):
    """What ``Env.step`` returns (Gymnasium's five values, named)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    observation: Observation
    feedback: Feedback
    terminated: bool = False
    """The episode ended by the task itself (e.g. a ``stop``/answer action)."""
    truncated: bool = False
    """The episode ended because a limit (step budget) was reached."""
    info: dict[str, Any] = Field(default_factory=dict)
