"""Rendering: RGB, metric depth and a body-id segmentation mask from a camera pose.

The render call itself is shared with the house (:func:`eviseek.envs.render.render_frame`).
TinyRenderer (CPU) takes the scene's light settings (direction, colour, ambient, diffuse and
specular shares, shadows); the EGL plugin, when asked for, is loaded once per client and ignores
them. Mirrors and glass are extra passes composited by :mod:`.optics`; a scene with neither
costs exactly one pass. Mirrors are composited under TinyRenderer only: rendering a scene that
holds a mirror with the EGL renderer raises :class:`~eviseek.errors.EnvError` (it would show a
plain white board where the question needs a reflection).
"""

from __future__ import annotations

import numpy as np

from eviseek.envs.render import Frame, Lighting, render_frame
from eviseek.envs.tabletop import camera as cam
from eviseek.envs.tabletop.colors import rgb
from eviseek.envs.tabletop.scene import LightSpec
from eviseek.envs.tabletop.sim.optics import MirrorPlane, composite_glass, composite_mirror, pixel_points
from eviseek.envs.tabletop.sim.state import PARK_Z, SimState
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

    def render(
        self,
        pose: Pose,
        width: int | None = None,
        height: int | None = None,
        *,
        light: LightSpec | None = None,
    ) -> Frame:
        """Render RGB, metric depth and a body-id segmentation mask from ``pose``, under ``light``
        (default: the scene's own)."""
        w = width or self.width
        h = height or self.height
        if self.renderer != "tiny" and self._with_material("mirror"):
            raise EnvError(
                f"the {self.renderer!r} renderer does not draw mirrors, and this scene has "
                f"{', '.join(self._with_material('mirror'))}: its questions (the Specular Reflection "
                "subcategories) need renderer='tiny'"
            )
        return self._render_scene(
            pose, w, h, hidden=frozenset(), mirrors=True, light=light or self.spec.light
        )

    def _render_scene(
        self, pose: Pose, w: int, h: int, *, hidden: frozenset[int], mirrors: bool, light: LightSpec
    ) -> Frame:
        frame = self._pass(pose, w, h, hidden, light)
        if mirrors and self.renderer == "tiny":
            for name in self._with_material("mirror"):
                if self.uid[name] not in hidden:
                    self._show_mirror(frame, pose, name, hidden, light)
        glass = frozenset(self.uid[n] for n in self._with_material("glass")) - hidden
        mask = np.isin(frame.segmentation, list(glass)) if glass else None
        if mask is not None and mask.any():
            # What the glass hides may include a mirror only if a mirror was in view at all.
            behind = self._render_scene(
                pose,
                w,
                h,
                hidden=hidden | glass,
                mirrors=mirrors and frame.reflection is not None,
                light=light,
            )
            # An object seen through glass is visible, so the buffers show it; where only the
            # table, floor or sky lies behind, they show the glass itself.
            through = mask & np.isin(behind.segmentation, [u for u in self.uid.values() if u not in glass])
            frame = Frame(
                rgb=composite_glass(frame.rgb, behind.rgb, mask),
                depth=np.where(through, behind.depth, frame.depth),
                segmentation=np.where(through, behind.segmentation, frame.segmentation),
                reflection=behind.reflection if frame.reflection is None else frame.reflection,
            )
        return frame

    def _with_material(self, material: str) -> list[str]:
        return [o.name for o in self.spec.objects if o.material == material and o.name in self.uid]

    def _show_mirror(
        self, frame: Frame, pose: Pose, name: str, hidden: frozenset[int], light: LightSpec
    ) -> None:
        """Composite what mirror ``name`` shows into ``frame`` (in place)."""
        uid = self.uid[name]
        on_mirror = frame.segmentation == uid
        if not on_mirror.any():
            return
        pos, orn = self.pose_of(name)
        plane = MirrorPlane(pos, orn, self.spec.object(name).size)
        if plane.side(cam.position(pose)) <= 0:
            return  # seen from behind: just the back of a board
        points = pixel_points(pose, self.spec.fov, frame.depth)
        mask = on_mirror & plane.face_mask(points, tolerance=0.002 + 0.004 * frame.depth)
        if not mask.any():
            return
        behind = {
            u for n, u in self.uid.items() if u != uid and plane.side(np.asarray(self.pose_of(n)[0])) < 0
        }
        h, w = frame.depth.shape
        seen = self._render_scene(
            plane.reflect_pose(pose), w, h, hidden=hidden | {uid} | behind, mirrors=False, light=light
        )
        frame.rgb = composite_mirror(frame.rgb, mask, seen.rgb, rgb(self.spec.object(name).color))
        reflection = (
            np.full(frame.segmentation.shape, -1, dtype=np.int32)
            if frame.reflection is None
            else frame.reflection
        )
        reflection[mask] = seen.segmentation[:, ::-1][mask]
        frame.reflection = reflection

    def _pass(self, pose: Pose, w: int, h: int, hidden: frozenset[int] | set[int], light: LightSpec) -> Frame:
        """One renderer call, with the bodies in ``hidden`` moved out of the world meanwhile."""
        p = self.p
        moved = []
        for uid in hidden:
            moved.append((uid, p.getBasePositionAndOrientation(uid, physicsClientId=self.client)))
            p.resetBasePositionAndOrientation(
                uid, [0, 0, 2 * PARK_Z], [0, 0, 0, 1], physicsClientId=self.client
            )
        try:
            return self._camera_image(pose, w, h, light)
        finally:
            for uid, (pos, orn) in moved:
                p.resetBasePositionAndOrientation(uid, pos, orn, physicsClientId=self.client)

    def _camera_image(self, pose: Pose, w: int, h: int, light: LightSpec) -> Frame:
        return render_frame(
            self.p,
            self.client,
            pose,
            fov=self.spec.fov,
            width=w,
            height=h,
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
