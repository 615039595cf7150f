"""Rendering: RGB, metric depth and a body-id segmentation mask from a camera pose.

TinyRenderer (CPU) takes the scene's light settings; the EGL plugin, when asked for, is loaded
once per client and ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eviseek.envs.tabletop import camera as cam
from eviseek.envs.tabletop.sim.state import SimState
from eviseek.errors import EnvError
from eviseek.types import Pose

Renderer = str  # "tiny" | "egl"


@dataclass
class Frame:
    """One rendered view: pixels plus the privileged buffers."""

    rgb: np.ndarray
    depth: np.ndarray
    segmentation: np.ndarray


class RenderingMixin(SimState):
    """Camera images of the world."""

    _egl_plugin: int | None

    def _load_egl(self) -> None:
        import importlib.util

        egl = importlib.util.find_spec("eglRenderer")
        try:
            if egl is not None and egl.origin:
                plugin = self.p.loadPlugin(egl.origin, "_eglRendererPlugin", physicsClientId=self.client)
            else:
                plugin = self.p.loadPlugin("eglRendererPlugin", physicsClientId=self.client)
        except Exception as exc:  # pragma: no cover - depends on the machine's GL stack
            raise EnvError(
                f"could not load PyBullet's EGL renderer plugin ({exc}); use renderer='tiny'"
            ) from exc
        if plugin < 0:  # pragma: no cover
            raise EnvError("PyBullet's EGL renderer plugin failed to load; use renderer='tiny'")
        self._egl_plugin = plugin

    def render(self, pose: Pose, width: int | None = None, height: int | None = None) -> Frame:
        """Render RGB, metric depth and a body-id segmentation mask from ``pose``."""
        w = width or self.width
        h = height or self.height
        p = self.p
        light = self.spec.light
        kwargs: dict[str, Any] = {
            "viewMatrix": cam.view_matrix(pose),
            "projectionMatrix": cam.projection_matrix(self.spec.fov, w, h),
            "renderer": p.ER_BULLET_HARDWARE_OPENGL if self.renderer == "egl" else p.ER_TINY_RENDERER,
            "physicsClientId": self.client,
        }
        if self.renderer == "tiny":
            kwargs.update(
                lightDirection=list(light.direction),
                lightColor=list(light.color),
                lightAmbientCoeff=light.ambient,
                lightDiffuseCoeff=light.diffuse,
                lightSpecularCoeff=light.specular,
                shadow=int(light.shadow),
            )
        _, _, rgb, depth, seg = p.getCameraImage(w, h, **kwargs)
        rgb_arr = np.asarray(rgb, dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        depth_arr = cam.depth_to_metric(np.asarray(depth, dtype=np.float32).reshape(h, w))
        seg_arr = np.asarray(seg, dtype=np.int32).reshape(h, w)
        return Frame(
            rgb=np.ascontiguousarray(rgb_arr), depth=depth_arr.astype(np.float32), segmentation=seg_arr
        )
