"""A Gymnasium wrapper of the zoom-in image environment, registered as ``eviseek/ImageZoom-v0``.

``import eviseek`` registers the id (see :mod:`eviseek._gymnasium`); the questions come from the
caller, since the image environment has no question generator of its own::

    env = gymnasium.make("eviseek/ImageZoom-v0", questions=my_questions)

Observations are fixed-size ``uint8`` frames: the current view (the shown image, then the last
crop) fitted into a ``height x width`` canvas with its aspect ratio kept, padded with black on
the right or bottom. ``info["view_size"]`` gives the part of the canvas the view fills.

Actions are a ``Dict`` with two keys:

- ``kind``: ``0`` zooms; ``1 + i`` answers slot ``i`` (the question's options in order, or the
  integers 0, 1, 2... for other contracts), which ends the episode with the answer's score as
  reward. Slots that mean nothing for the question are masked out in ``info["action_mask"]``;
  choosing one anyway costs nothing and does nothing.
- ``box``: for a zoom, ``[x1, y1, x2, y2]`` as fractions of the shown image. A bad box is
  feedback (``info["success"]`` is False), as in the wrapped environment.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np

from eviseek._lazy import require
from eviseek.envs.image.env import ImageZoomEnv
from eviseek.envs.image.zoom import ZOOM_TOOL_NAME
from eviseek.types import Action, Question
from eviseek.types.image import SHOWN_MAX_PIXELS

gym = require("gymnasium", "sim", "the Gymnasium wrapper")
spaces = gym.spaces

ANSWER_SLOTS = 16


class ImageZoomGymEnv(gym.Env):  # type: ignore[misc,name-defined]
    """Gymnasium view of :class:`~eviseek.envs.image.env.ImageZoomEnv`."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        *,
        questions: list[Question] | None = None,
        render_mode: str | None = None,
        width: int = 448,
        height: int = 448,
        max_steps: int = 8,
        max_pixels: int | None = SHOWN_MAX_PIXELS,
    ) -> None:
        """``questions``: episodes are drawn from these by seed unless reset gets one."""
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.questions = list(questions or [])
        self.inner = ImageZoomEnv(max_pixels=max_pixels, max_steps=max_steps)
        self.width, self.height = width, height
        self.observation_space = spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8)
        self.action_space = spaces.Dict(
            {
                "kind": spaces.Discrete(1 + ANSWER_SLOTS),
                "box": spaces.Box(0.0, 1.0, shape=(4,), dtype=np.float32),
            }
        )
        self._answers: list[str] = []
        self._frame = np.zeros((height, width, 3), dtype=np.uint8)
        self._view_size = (0, 0)
        self._question: Question | None = None

    def _canvas(self, view: np.ndarray) -> np.ndarray:
        from PIL import Image as PILImage

        h, w = view.shape[:2]
        scale = min(self.width / w, self.height / h)
        vw, vh = max(1, round(w * scale)), max(1, round(h * scale))
        resized = np.asarray(PILImage.fromarray(view).resize((vw, vh), PILImage.Resampling.BILINEAR))
        canvas = np.zeros((self.height, self.width, 3), dtype=np.uint8)
        canvas[:vh, :vw] = resized[..., :3]
        self._view_size = (vw, vh)
        return canvas

    def action_mask(self) -> np.ndarray:
        """For ``kind``: 1 for zoom and the answer slots the question has, 0 otherwise."""
        mask = np.zeros(1 + ANSWER_SLOTS, dtype=np.int8)
        mask[0] = 1
        mask[1 : 1 + len(self._answers)] = 1
        return mask

    def _info(self, extra: dict[str, Any]) -> dict[str, Any]:
        assert self._question is not None
        return {
            **extra,
            "question": self._question.text,
            "question_id": self._question.id,
            "answers": list(self._answers),
            "action_mask": self.action_mask(),
            "view_size": self._view_size,
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode on ``options["question"]``, else on one of ``questions`` drawn by seed."""
        super().reset(seed=seed)
        question = (options or {}).get("question")
        if question is None:
            if not self.questions:
                raise ValueError(
                    "eviseek/ImageZoom-v0 needs questions: gymnasium.make(..., questions=[...]) or "
                    "reset(options={'question': q})"
                )
            question = self.questions[int(self.np_random.integers(len(self.questions)))]
        obs, info = self.inner.reset(options={"question": question})
        self._question = question
        contract = question.contract
        self._answers = (
            list(contract.options) if contract.options else [str(i) for i in range(ANSWER_SLOTS)]
        )[:ANSWER_SLOTS]
        self._frame = self._canvas(obs.image.array())
        return self._frame.copy(), self._info(info)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Zoom on ``action["box"]`` or answer slot ``action["kind"] - 1``."""
        kind = int(action["kind"])
        if not 0 <= kind <= ANSWER_SLOTS:
            raise ValueError(f"action kind {kind} outside Discrete({1 + ANSWER_SLOTS})")
        if kind > 0:
            if kind > len(self._answers):
                return self._frame.copy(), 0.0, False, False, self._info({"success": False})
            from eviseek.answers import score_answer

            assert self._question is not None
            answer = self._answers[kind - 1]
            result = self.inner.step(Action(name="answer", args={"text": answer}))
            reward = float(score_answer(self._question, answer).score)
            return self._frame.copy(), reward, True, False, self._info({"answer": answer, "success": True})
        w, h = self.inner.shown_size
        x1, y1, x2, y2 = (float(v) for v in np.asarray(action["box"], dtype=np.float64))
        bbox = json.dumps([round(x1 * w), round(y1 * h), round(x2 * w), round(y2 * h)])
        result = self.inner.step(Action(name=ZOOM_TOOL_NAME, args={"bbox_2d": bbox}))
        if result.feedback.success:
            self._frame = self._canvas(result.observation.image.array())
        info = {"feedback": result.feedback.summary(), "success": result.feedback.success}
        return self._frame.copy(), 0.0, result.terminated, result.truncated, self._info(info)

    def render(self) -> np.ndarray | None:
        """The current frame (``rgb_array`` mode)."""
        if self.render_mode == "rgb_array":
            return self._frame.copy()
        return None

    def close(self) -> None:
        """Drop the images."""
        self.inner.close()
