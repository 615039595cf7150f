"""Rendering: RGB, metric depth and a body-id segmentation mask from a camera pose.

The render call itself is shared with the house (:func:`eviseek.envs.render.render_frame`).

TinyRenderer (CPU) takes the scene's light settings; the EGL plugin, when asked for, is loaded
once per client and ignores them.
"""

from __future__ import annotations

from eviseek.envs.render import Frame, Lighting, render_frame
from eviseek.envs.tabletop.sim.state import SimState
from eviseek.errors import EnvError
from eviseek.types import Pose

Renderer = str  # "tiny" | "egl"

__all__ = ["Frame", "Renderer", "RenderingMixin"]


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
        light = self.spec.light
        return render_frame(
            self.p,
            self.client,
            pose,
            fov=self.spec.fov,
            width=width or self.width,
            height=height or self.height,
            renderer=self.renderer,
            light=Lighting(
                direction=light.direction,
                color=light.color,
                ambient=light.ambient,
                diffuse=light.diffuse,
                specular=light.specular,
                shadow=light.shadow,
            ),
        )
