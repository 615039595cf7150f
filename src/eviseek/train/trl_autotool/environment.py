"""The zoom tool as a TRL environment (``environment_factory``): one rollout's image and its tool."""

from __future__ import annotations

from typing import Any

from eviseek.autotool.prompts import ZOOM_ERROR_PREFIX
from eviseek.envs.image.zoom import ZoomError, ZoomSettings, zoom
from eviseek.train.autotool_config import Coordinates
from eviseek.train.frames import ImageFrame, box_frame


class ZoomToolEnvironment:
    """One rollout's image and its zoom tool, for TRL's ``environment_factory``.

    TRL builds a pool of these, calls :meth:`reset` with each dataset row before generation,
    and exposes every public method except ``reset`` as a tool whose JSON schema comes from
    the type hints and docstring. :attr:`calls` records what happened, for tests and debugging.
    """

    def __init__(
        self,
        coordinates: Coordinates = "shown",
        frame: ImageFrame | None = None,
        settings: ZoomSettings | None = None,
    ) -> None:
        self.coordinates: Coordinates = coordinates
        self.frame = frame or ImageFrame()
        self.settings = settings or ZoomSettings()
        self.image: Any = None
        self.calls: list[dict[str, Any]] = []
        """This rollout's calls (cleared by :meth:`reset`)."""
        self.total_calls = 0
        self.total_crops = 0
        """Calls and returned crops over the instance's life (TRL reuses instances)."""

    def reset(self, **row: Any) -> None:
        """Take the row's first image as the one to zoom into (TRL passes every column)."""
        images = row.get("images") or ([row["image"]] if row.get("image") is not None else [])
        self.image = images[0].convert("RGB") if images else None
        self.calls = []
        return None

    def image_zoom_in_tool(self, bbox_2d: list[float], label: str = "") -> list[dict[str, Any]] | str:
        """Crop the image to a region and return the crop at full resolution.

        Args:
            bbox_2d: The region as [x1, y1, x2, y2] in the coordinates stated in the question: (x1, y1) is the top-left corner and (x2, y2) the bottom-right corner.
            label: Optional name of what the region should contain.

        Returns:
            The cropped image with a line describing the crop, or an error message.
        """  # noqa: E501 - TRL reads each argument's description from a single docstring line
        if self.image is None:
            return f"{ZOOM_ERROR_PREFIX} this question has no image to zoom into; answer directly."
        shown = box_frame(self.coordinates, self.frame, self.image.width, self.image.height)
        result = zoom(self.image, bbox_2d, shown, label=label or None, settings=self.settings)
        self.total_calls += 1
        if isinstance(result, ZoomError):
            self.calls.append({"bbox_2d": bbox_2d, "ok": False, "error": result.message})
            return f"{ZOOM_ERROR_PREFIX} {result.message}"
        self.total_crops += 1
        self.calls.append({"bbox_2d": bbox_2d, "ok": True, "box_original": list(result.box_original)})
        x1, y1, x2, y2 = result.box_shown
        text = f"Zoomed into [{x1:g}, {y1:g}, {x2:g}, {y2:g}]."
        return [{"type": "image", "image": result.crop.to_pil()}, {"type": "text", "text": text}]
