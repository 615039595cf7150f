"""The PyBullet world behind a house: static bodies for floors, wall slabs, furniture and objects.

One :class:`HouseSim` owns one PyBullet ``DIRECT`` client and renders with the tabletop's shared
renderer (:func:`eviseek.envs.render.render_frame`). Every body has a name: ``floor:<room>``,
``wall:<room>:<side>:<k>`` and the item names, so segmentation masks say exactly what a pixel shows.
A house does not move, so no physics is stepped: collisions are decided on exact footprints
(:mod:`eviseek.envs.house.grid`).
"""

from __future__ import annotations

from typing import Any

from eviseek._lazy import require_pybullet
from eviseek.envs import view
from eviseek.envs.house.spec import HouseSpec
from eviseek.envs.render import Frame, Lighting, OwnedClient, render_frame
from eviseek.envs.tabletop.colors import rgba
from eviseek.errors import EnvError
from eviseek.types import Pose

FAR = 30.0
"""Far clipping plane (metres): longer than any house."""
PARK_Z = -50.0
LIGHT = Lighting(direction=(0.35, 0.25, 1.0), ambient=0.62, diffuse=0.42, specular=0.02, shadow=False)
"""Soft light from above, no shadows (shadows double TinyRenderer's cost; ours)."""
FLOOR_THICKNESS = 0.02


def _pb() -> Any:
    return require_pybullet("the house environment")


class HouseSim(OwnedClient):
    """A house built in PyBullet. ``uid`` maps body names to ids; ``name_of`` maps back."""

    def __init__(
        self,
        spec: HouseSpec,
        *,
        width: int = 320,
        height: int = 240,
        renderer: str = "tiny",
        parked: bool = False,
    ) -> None:
        if renderer != "tiny":
            raise EnvError(f"the house renders with TinyRenderer only; got renderer={renderer!r}, use 'tiny'")
        if width < 16 or height < 16:
            raise EnvError(f"image size {width}x{height} is too small; use at least 16x16")
        self.p = _pb()
        self.width = width
        self.height = height
        self.renderer = renderer
        self.parked = parked
        self.client = self.p.connect(self.p.DIRECT)
        self.uid: dict[str, int] = {}
        self.name_of: dict[int, str] = {}
        self.home: dict[str, tuple[float, float, float]] = {}
        """Where each body belongs (a parked probe keeps its bodies far below until asked)."""
        self.spec = spec
        self.build(spec)

    @property
    def vfov(self) -> float:
        """Vertical field of view in degrees."""
        return view.vertical_fov(self.spec.hfov, self.width, self.height)

    def build(self, spec: HouseSpec) -> None:
        """(Re)build every body of ``spec``."""
        p, c = self.p, self.client
        p.resetSimulation(physicsClientId=c)
        self.spec = spec
        self.uid.clear()
        self.name_of.clear()
        self.home.clear()
        for room in spec.rooms:
            x0, y0, x1, y1 = room.rect
            self._box(
                f"floor:{room.name}",
                ((x1 - x0) / 2, (y1 - y0) / 2, FLOOR_THICKNESS / 2),
                ((x0 + x1) / 2, (y0 + y1) / 2, -FLOOR_THICKNESS / 2),
                (*room.floor_rgb, 1.0),
            )
        for w in spec.walls:
            x0, y0, x1, y1 = w.rect
            self._box(
                w.name,
                ((x1 - x0) / 2, (y1 - y0) / 2, w.height / 2),
                ((x0 + x1) / 2, (y0 + y1) / 2, w.height / 2),
                (*w.rgb, 1.0),
            )
        for it in spec.items:
            color = rgba(it.color)
            sx, sy, sz = it.size
            if it.shape == "box":
                self._box(it.name, (sx / 2, sy / 2, sz / 2), it.position, color)
            elif it.shape == "cylinder":
                vis = p.createVisualShape(
                    p.GEOM_CYLINDER, radius=min(sx, sy) / 2, length=sz, rgbaColor=color, physicsClientId=c
                )
                self._add(it.name, vis, it.position)
            elif it.shape == "sphere":
                vis = p.createVisualShape(p.GEOM_SPHERE, radius=sx / 2, rgbaColor=color, physicsClientId=c)
                self._add(it.name, vis, it.position)
            else:
                raise EnvError(f"item {it.name!r}: unsupported shape {it.shape!r}")

    def _box(
        self,
        name: str,
        half: tuple[float, float, float],
        pos: tuple[float, float, float],
        color: tuple[float, ...],
    ) -> None:
        vis = self.p.createVisualShape(
            self.p.GEOM_BOX, halfExtents=list(half), rgbaColor=list(color), physicsClientId=self.client
        )
        self._add(name, vis, pos)

    def _add(self, name: str, vis: int, pos: tuple[float, float, float]) -> None:
        # Visual-only bodies: nothing here is simulated, so no collision shapes are needed.
        at = (pos[0], pos[1], PARK_Z) if self.parked else pos
        uid = self.p.createMultiBody(0, -1, vis, list(at), physicsClientId=self.client)
        self.uid[name] = uid
        self.name_of[uid] = name
        self.home[name] = (float(pos[0]), float(pos[1]), float(pos[2]))

    def footprints(self) -> dict[str, tuple[float, float, float, float]]:
        """Floor rectangle ``(x0, y0, x1, y1)`` of every body."""
        out = {f"floor:{r.name}": r.rect for r in self.spec.rooms}
        out.update({w.name: w.rect for w in self.spec.walls})
        out.update({it.name: it.footprint for it in self.spec.items})
        return out

    def render(self, pose: Pose) -> Frame:
        """RGB, metric depth and a body-id segmentation mask from ``pose``."""
        return render_frame(
            self.p,
            self.client,
            pose,
            fov=self.vfov,
            width=self.width,
            height=self.height,
            renderer=self.renderer,
            light=LIGHT,
            far=FAR,
        )

    def poses(self) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
        """Where every body belongs, with an identity orientation (the house is static)."""
        return {n: (pos, (0.0, 0.0, 0.0, 1.0)) for n, pos in self.home.items()}


class HouseProbe:
    """A second house whose bodies wait far below the floor, for rendering one body alone.

    The support grader needs each body's *unoccluded* pixel area from a camera: it brings the body
    home here, with everything else parked, and counts its pixels (as the tabletop's probe does).
    """

    def __init__(self, spec: HouseSpec, *, width: int, height: int) -> None:
        self.sim = HouseSim(spec, width=width, height=height, parked=True)
        self._shown: str | None = None

    def load(self, spec: HouseSpec) -> None:
        """Rebuild for another house."""
        self.sim.build(spec)
        self._shown = None

    def pixels_alone(
        self, name: str, position: tuple[float, ...], orientation: tuple[float, ...], pose: Pose
    ) -> int:
        """How many pixels body ``name`` covers from ``pose`` when nothing else is in view."""
        p, c = self.sim.p, self.sim.client
        if self._shown is not None and self._shown != name:
            x, y, _ = self.sim.home[self._shown]
            p.resetBasePositionAndOrientation(
                self.sim.uid[self._shown], [x, y, PARK_Z], [0, 0, 0, 1], physicsClientId=c
            )
        p.resetBasePositionAndOrientation(
            self.sim.uid[name], list(position), list(orientation), physicsClientId=c
        )
        self._shown = name
        frame = self.sim.render(pose)
        return int((frame.segmentation == self.sim.uid[name]).sum())

    def close(self) -> None:
        """Release the probe's client."""
        self.sim.close()
