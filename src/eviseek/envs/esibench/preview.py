"""A stand-in environment for looking at an ESI-Bench question's first request, without a simulator.

``eviseek esibench prompts`` runs an agent on it until the agent's first model call: it shows a
placeholder first view (flat grey; the real view comes from OmniGibson) and offers exactly what
the bridge offers for the question (:func:`~eviseek.envs.esibench.env.offered_actions` over the
question's task text). Nothing is simulated: any action fails with a note saying so.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eviseek.envs.base import question_from_options
from eviseek.envs.esibench.env import offered_actions
from eviseek.envs.esibench.task_text import TaskText
from eviseek.errors import EnvError
from eviseek.types import Action, ActionSpec, Feedback, Image, Observation, Pose, StepResult

PREVIEW_SIZE = (480, 640)
"""Height and width of the placeholder view (ESI-Bench's capture size is the simulator's)."""


class PromptPreviewEnv:
    """Offers a question's bridge actions and a placeholder view; simulates nothing."""

    env_id = "eviseek/ESIBench-preview"

    def __init__(self) -> None:
        self.task_text: TaskText | None = None
        self._obs: Observation | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        question = question_from_options(options)
        text = ((question.metadata.get("esibench") or {}).get("task_text") if question else None) or None
        if text is None:
            raise EnvError(
                "the preview needs a question loaded with its task text (esibench:PATH on a checkout)"
            )
        self.task_text = TaskText.model_validate(text)
        grey = np.full((*PREVIEW_SIZE, 3), 128, np.uint8)
        self._obs = Observation(
            image=Image.from_array(grey), pose=Pose(), frame_id=0, metadata={"preview": True}
        )
        return self._obs.model_copy(), {"task_text": text, "objects": self.task_text.objects}

    def step(self, action: Action) -> StepResult:
        if self._obs is None:
            raise EnvError("reset() first")
        feedback = Feedback(operation=action.name, success=False, reason="preview: there is no simulator")
        return StepResult(
            observation=self._obs.model_copy(), feedback=feedback, terminated=action.name == "stop"
        )

    def legal_actions(self) -> list[ActionSpec]:
        return offered_actions(self.task_text, self.task_text.objects if self.task_text else [])

    def close(self) -> None:
        self._obs = None
