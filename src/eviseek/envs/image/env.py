"""``eviseek/ImageZoom-v0``: one high-resolution image; the viewpoint action is a zoom-in.

The question's ``initial_image`` is the ORIGINAL image. The agent is shown a copy capped at
``max_pixels`` (what a provider or a processor would do anyway, but here the program knows the
shown size), and a zoom box written in that shown frame is cropped from the original pixels
by :func:`~eviseek.envs.image.zoom.zoom`. A bad box is not an exception: the step's feedback
says ``success=False`` with a message meant for the model, and the episode goes on.

Actions:

* ``image_zoom_in_tool(bbox_2d="[x1, y1, x2, y2]", label="...")`` - ``bbox_2d`` is JSON text
  because :class:`~eviseek.types.Action` arguments are strings;
* ``answer(text="...")`` - ends the episode (``terminated``).

Each zoom costs one step; after ``max_steps`` zooms the episode is ``truncated``.

``reset`` options ``max_pixels`` and ``max_steps`` override the constructor's for that episode
(an evaluation builds environments by id only, so an agent states its own cap and step limit
there); with ``max_pixels`` the returned crops are capped at the same area.
"""

from __future__ import annotations

import json
from typing import Any

from eviseek import env_ids
from eviseek.envs.base import question_from_options
from eviseek.envs.image.zoom import ZOOM_TOOL_NAME, ZoomResult, ZoomSettings, fit_within, zoom
from eviseek.errors import EnvArgumentError, EnvError
from eviseek.types import Action, ActionSpec, Feedback, Image, Observation, Question, StepResult
from eviseek.types.image import SHOWN_MAX_PIXELS


class ImageZoomEnv:
    """A high-resolution image question; zoom-ins return crops of the original pixels."""

    env_id = env_ids.IMAGE_ZOOM

    def __init__(
        self,
        *,
        max_pixels: int | None = SHOWN_MAX_PIXELS,
        max_steps: int = 8,
        zoom_settings: ZoomSettings | None = None,
    ) -> None:
        if max_pixels is not None and max_pixels < 28 * 28:
            raise EnvError(f"max_pixels={max_pixels} is too small to show an image; use at least 784")
        if max_steps < 0:
            raise EnvError("max_steps must be non-negative")
        self.max_pixels = max_pixels
        self.max_steps = max_steps
        self.zoom_settings = zoom_settings or ZoomSettings()
        # The constructor's settings, restored at each reset that does not override them.
        self._defaults = (max_pixels, max_steps, self.zoom_settings)
        self.question: Question | None = None
        self.original: Image | None = None
        self.shown: Image | None = None
        self.steps = 0
        self.frames = 0
        self.done = False

    @property
    def shown_size(self) -> tuple[int, int]:
        """``(width, height)`` of the image the agent was shown."""
        if self.shown is None:
            raise EnvError("call reset() before using the environment")
        return self.shown.width, self.shown.height

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode on ``options["question"]``, whose ``initial_image`` is the original.

        ``options["max_pixels"]`` / ``options["max_steps"]`` override the constructor's settings
        for this episode only.
        """
        question = question_from_options(options)
        self._apply_overrides(options or {})
        if question is None:
            raise EnvError("ImageZoomEnv.reset needs options={'question': Question}")
        if question.initial_image is None:
            raise EnvError(f"question {question.id!r} has no initial_image; image questions need one")
        self.question = question
        self.original = question.initial_image
        arr = self.original.array()
        h, w = int(arr.shape[0]), int(arr.shape[1])
        sw, sh = fit_within(w, h, self.max_pixels)
        if (sw, sh) == (w, h):
            self.shown = self.original
        else:
            from PIL import Image as PILImage

            pil = PILImage.fromarray(arr).resize((sw, sh), PILImage.Resampling.BICUBIC)
            self.shown = Image.from_pil(pil)
        self.steps = 0
        self.frames = 0
        self.done = False
        meta = {"shown_size": [sw, sh], "original_size": [w, h]}
        return Observation(image=self.shown, frame_id=0, metadata=meta), dict(meta)

    def _apply_overrides(self, options: dict[str, Any]) -> None:
        max_pixels, max_steps, settings = self._defaults
        if options.get("max_pixels") is not None:
            max_pixels = _option_int(options, "max_pixels")
            if max_pixels < 28 * 28:
                raise EnvArgumentError(
                    f"max_pixels={max_pixels} is too small to show an image; use at least 784"
                )
            settings = settings.model_copy(update={"max_output_pixels": max_pixels})
        if options.get("max_steps") is not None:
            max_steps = _option_int(options, "max_steps")
            if max_steps < 0:
                raise EnvArgumentError("max_steps must be non-negative")
        self.max_pixels, self.max_steps, self.zoom_settings = max_pixels, max_steps, settings

    def legal_actions(self) -> list[ActionSpec]:
        """The zoom tool and the answer action."""
        w, h = self.shown_size
        return [
            ActionSpec(
                name=ZOOM_TOOL_NAME,
                kind="camera",
                params=["bbox_2d", "label"],
                description=f"crop [x1, y1, x2, y2] in the shown {w}x{h} frame from the original image",
            ),
            ActionSpec(name="answer", kind="control", params=["text"], description="end with an answer"),
        ]

    def step(self, action: Action) -> StepResult:
        """Zoom or answer. A malformed zoom yields ``feedback.success=False``; it never raises."""
        if self.shown is None or self.original is None:
            raise EnvError("call reset() before step()")
        current = Observation(image=self.shown, frame_id=0)
        if self.done:
            fb = Feedback(operation=action.name, success=False, reason="the episode has already ended")
            return StepResult(observation=current, feedback=fb, terminated=True)
        if action.name == "answer":
            self.done = True
            fb = Feedback(operation="answer", success=True, state={"text": action.args.get("text", "")})
            return StepResult(observation=current, feedback=fb, terminated=True)
        if action.name != ZOOM_TOOL_NAME:
            fb = Feedback(
                operation=action.name,
                success=False,
                reason=f"unknown action {action.name!r}; use {ZOOM_TOOL_NAME} or answer",
            )
            return StepResult(observation=current, feedback=fb)
        self.steps += 1
        truncated = self.steps >= self.max_steps
        raw = action.args.get("bbox_2d", "")
        try:
            bbox: Any = json.loads(raw) if isinstance(raw, str) else raw
        except (ValueError, RecursionError):
            bbox = raw
        result = zoom(
            self.original,
            bbox,
            self.shown_size,
            label=action.args.get("label") or None,
            settings=self.zoom_settings,
        )
        if not isinstance(result, ZoomResult):
            fb = Feedback(
                operation=ZOOM_TOOL_NAME, success=False, reason=result.message, state={"code": result.code}
            )
            return StepResult(observation=current, feedback=fb, truncated=truncated)
        self.frames += 1
        state = {
            "box_original": list(result.box_original),
            "box_shown": [round(v, 2) for v in result.box_shown],
            "clamped": result.clamped,
            "crop_size": [result.crop.width, result.crop.height],
        }
        fb = Feedback(operation=ZOOM_TOOL_NAME, success=True, reason=result.describe(), state=state)
        obs = Observation(image=result.crop, frame_id=self.frames, metadata=dict(state))
        return StepResult(observation=obs, feedback=fb, truncated=truncated, info={"zoom": result})

    def close(self) -> None:
        """Drop the images."""
        self.question = self.original = self.shown = None


def _option_int(options: dict[str, Any], key: str) -> int:
    """A whole-number reset option; :class:`EnvArgumentError` (the caller's mistake, which an env
    server answers with 400) for text, a fraction or a boolean."""
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise EnvArgumentError(f"option {key} must be a whole number, got {str(value)[:40]!r}")
    try:
        number = float(value)
    except ValueError:
        raise EnvArgumentError(f"option {key} must be a whole number, got {str(value)[:40]!r}") from None
    if not number.is_integer() or abs(number) > 2**53:
        raise EnvArgumentError(f"option {key} must be a whole number, got {str(value)[:40]!r}")
    return int(number)
