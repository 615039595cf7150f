"""The zoom-in tool for verl's multi-turn tool agent loop (``BaseTool``).

Declared in ``zoom_tool.yaml`` (pass it as
``actor_rollout_ref.rollout.multi_turn.tool_config_path``). Each call crops the question's image
with :func:`eviseek.envs.image.zoom.zoom` and returns the crop as an image in the tool reply, so
the next turn sees it. A bad box is the model's mistake: the reply is an error text for the
model (starting ``Zoom failed:``), the step reward is ``invalid_penalty``, nothing raises.

Which image is cropped, in order of preference:

1. ``create_kwargs["image"]`` from the row's ``extra_info.tools_kwargs.image_zoom_in_tool``
   (bytes, a ``{"bytes": ...}`` dict, a path or a PIL image): the full-resolution original;
2. the first image of the episode (``agent_data.image_data[0]``), i.e. the copy the model was
   shown after verl's resize.

Boxes are read in the frame set by ``config.coordinates``: ``shown`` (pixels of the image the
model saw: the episode's first image), ``original`` or ``normalized_1000``.

This module imports verl; only verl's tool registry loads it.
"""

from __future__ import annotations

import io
from typing import Any
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from eviseek.autotool.prompts import ZOOM_ERROR_PREFIX
from eviseek.autotool.protocol import ZOOM_TOOL_SCHEMA
from eviseek.envs.image.zoom import ZoomError, ZoomSettings, zoom


def _pil(value: Any) -> Any:
    """A PIL image from bytes, ``{"bytes": ...}``, a path or a PIL image (``None`` passes)."""
    from PIL import Image as PILImage

    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("bytes") or value.get("path") or value.get("image")
    if isinstance(value, (bytes, bytearray)):
        return PILImage.open(io.BytesIO(value)).convert("RGB")
    if isinstance(value, str):
        return PILImage.open(value).convert("RGB")
    if hasattr(value, "convert"):
        return value.convert("RGB")
    raise TypeError(f"cannot read an image from {type(value).__name__}")


class ZoomInTool(BaseTool):
    """``image_zoom_in_tool(bbox_2d, label)`` for verl; see the module docstring."""

    def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None) -> None:
        schema = tool_schema or OpenAIFunctionToolSchema.model_validate(ZOOM_TOOL_SCHEMA)
        super().__init__(config, schema)
        self.coordinates = str(config.get("coordinates", "shown"))
        if self.coordinates not in ("shown", "original", "normalized_1000"):
            raise ValueError(
                f"zoom tool config: coordinates={self.coordinates!r}; use shown, original or normalized_1000"
            )
        self.settings = ZoomSettings(**(config.get("zoom") or {}))
        self.invalid_penalty = float(config.get("invalid_penalty", -0.05))
        self._instances: dict[str, dict[str, Any]] = {}

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        """Start an instance; ``create_kwargs={"image": ...}`` may carry the original image."""
        instance_id = instance_id or str(uuid4())
        create_kwargs = kwargs.get("create_kwargs") or {}
        self._instances[instance_id] = {"image": _pil(create_kwargs.get("image")), "calls": 0, "crops": 0}
        return instance_id, ToolResponse()

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[ToolResponse, float, dict[str, Any]]:
        """Crop and return ``(ToolResponse(image=[crop], text=...), step_reward, metrics)``."""
        state = self._instances.setdefault(instance_id, {"image": None, "calls": 0, "crops": 0})
        state["calls"] += 1
        shown_image = None
        agent_data = kwargs.get("agent_data")
        images = getattr(agent_data, "image_data", None) if agent_data is not None else None
        if images:
            shown_image = _pil(images[0] if isinstance(images, list) else images)
        original = state["image"] or shown_image
        if original is None:
            return (
                ToolResponse(
                    text=f"{ZOOM_ERROR_PREFIX} this question has no image to zoom into; answer directly."
                ),
                self.invalid_penalty,
                {"zoom_ok": 0.0},
            )
        if self.coordinates == "normalized_1000":
            frame = (1000, 1000)
        elif self.coordinates == "shown" and shown_image is not None:
            frame = shown_image.size
        else:
            frame = original.size
        label = parameters.get("label")
        result = zoom(
            original,
            parameters.get("bbox_2d"),
            frame,
            label=str(label) if label else None,
            settings=self.settings,
        )
        if isinstance(result, ZoomError):
            return (
                ToolResponse(text=f"{ZOOM_ERROR_PREFIX} {result.message}"),
                self.invalid_penalty,
                {"zoom_ok": 0.0, "zoom_error": result.code},
            )
        state["crops"] += 1
        x1, y1, x2, y2 = result.box_shown
        text = f"Zoomed into [{x1:g}, {y1:g}, {x2:g}, {y2:g}]."
        return ToolResponse(image=[result.crop.to_pil()], text=text), 0.0, {"zoom_ok": 1.0}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """No reward of its own beyond the step penalties: MSPO lives in the outcome reward."""
        return 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance."""
        self._instances.pop(instance_id, None)
