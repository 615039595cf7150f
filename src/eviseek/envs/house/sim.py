"""The PyBullet world behind a house: static bodies for floors, wall slabs, furniture and objects.

One :class:`HouseSim` owns one PyBullet ``DIRECT`` client and renders with the tabletop's shared
renderer (:func:`eviseek.envs.render.render_frame`). Every body has a name: ``floor:<room>``,
``wall:<room>:<side>:<k>`` and the item names, so segmentation masks say exactly what a pixel shows.
A house does not move, so no physics is stepped: collisions are decided on exact footprints
(:mod:`eviseek.envs.house.grid`). Before each render the bodies that cannot show from the camera
(behind walls, outside the doorways in view: :mod:`eviseek.envs.house.culling`) are parked below
the house, which leaves every pixel as it was and spares TinyRenderer drawing them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek._lazy import require_pybullet
from eviseek.envs import view
from eviseek.envs.colors import rgba
from eviseek.envs.house import looks
from eviseek.envs.house.catalogue import DOOR_FRAME_RGB, WALL_HEIGHT, WALL_THICKNESS
from eviseek.envs.house.culling import Body, Culler
from eviseek.envs.house.spec import HouseSpec, ItemSpec
from eviseek.envs.render import Frame, Lighting, OwnedClient, render_frame
from eviseek.errors import EnvError
from eviseek.types import Pose

FAR = 30.0
"""Far clipping plane (metres): longer than any house."""
PARK_Z = -50.0
LIGHT = Lighting(direction=(0.35, 0.25, 1.0), ambient=0.62, diffuse=0.42, specular=0.02, shadow=False)
"""Soft light from above, no shadows (shadows double TinyRenderer's cost; ours)."""
FLOOR_THICKNESS = 0.02
PLANE_EPS_M = 1e-5
"""How near the camera's own plane (the plane through the eye square to the view) a corner of a
body may lie before the eye is moved off it (:meth:`HouseSim.render`): a few float32 steps at house
coordinates (ours)."""
NUDGE_M = 1e-4
"""How far back along the view the eye moves when a corner lies in its plane (ours): a twentieth
of a pixel for a thing 1 m away at 512x512, far below anything a reader of the frame can see."""


def _pb() -> Any:
    return require_pybullet("the house environment")


def check_renderer(renderer: str) -> None:
    """Refuse any renderer but TinyRenderer, the only one whose houses were measured and checked
    (docs/house.md, "Speed": PyBullet's EGL plugin lights them differently)."""
    if renderer != "tiny":
        raise EnvError(f"the house renders with TinyRenderer only; got renderer={renderer!r}, use 'tiny'")


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
        cull: bool = True,
    ) -> None:
        """``cull``: hide the bodies the camera cannot see before each render (same pixels,
        less work; ``False`` draws every body, for comparisons). A parked probe never culls."""
        check_renderer(renderer)
        if width < 16 or height < 16:
            raise EnvError(f"image size {width}x{height} is too small; use at least 16x16")
        self.p = _pb()
        self.width = width
        self.height = height
        self.renderer = renderer
        self.parked = parked
        self.cull = cull and not parked
        self.client = self.p.connect(self.p.DIRECT)
        self.uid: dict[str, int] = {}
        self.name_of: dict[int, str] = {}
        self.home: dict[str, tuple[float, float, float]] = {}
        """Where each body belongs (a parked probe keeps its bodies far below until asked)."""
        self._bodies: list[Body] = []
        self._culler: Culler | None = None
        self._hidden: set[str] = set()
        """Bodies parked below the house for the current frame (culling)."""
        self._corners: list[tuple[float, float, float]] = []
        """Corners of every body's box (or of the box around a round part), where it belongs and
        where it is parked: the points :meth:`render` keeps out of the camera's plane."""
        self._corner_array: np.ndarray | None = None
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
        self._bodies = []
        self._hidden = set()
        self._corners = []
        self._corner_array = None
        for room in spec.rooms:
            x0, y0, x1, y1 = room.rect
            self._box(
                f"floor:{room.name}",
                ((x1 - x0) / 2, (y1 - y0) / 2, FLOOR_THICKNESS / 2),
                ((x0 + x1) / 2, (y0 + y1) / 2, -FLOOR_THICKNESS / 2),
                (*room.floor_rgb, 1.0),
                (room.name,),
            )
        for w in spec.walls:
            x0, y0, x1, y1 = w.rect
            self._box(
                w.name,
                ((x1 - x0) / 2, (y1 - y0) / 2, w.height / 2),
                ((x0 + x1) / 2, (y0 + y1) / 2, w.height / 2),
                (*w.rgb, 1.0),
                (w.room,),
            )
        backs = {
            it.name: looks.facing(it, spec.room(it.room).rect) for it in spec.items if it.kind == "furniture"
        }
        for it in spec.items:
            if it.shape not in ("box", "cylinder", "sphere"):
                raise EnvError(f"item {it.name!r}: unsupported shape {it.shape!r}")
            back = backs.get(it.on or it.name) or looks.facing(it, spec.room(it.room).rect)
            self._compound(it, back)
        self._fixtures(spec)
        self._culler = Culler(spec, self._bodies) if self.cull else None

    def _compound(self, it: ItemSpec, back: str) -> None:
        """One body for an item, one link per drawn part (segmentation shows the body's id)."""
        p, c = self.p, self.client
        main = rgba(it.color)
        shapes, offsets, turns = [], [], []
        x0, y0, x1, y1 = it.footprint
        for part in looks.parts_of(it):
            centre, (ex, ey, ez) = looks.place(part, it, back)
            # The culling footprint covers every part, whatever overhangs the item's own.
            x0, y0 = min(x0, centre[0] - ex / 2), min(y0, centre[1] - ey / 2)
            x1, y1 = max(x1, centre[0] + ex / 2), max(y1, centre[1] + ey / 2)
            colour = (
                list(main)
                if part.colour == "main"
                else [*looks.shade(tuple(main[:3])), 1.0]  # type: ignore[arg-type]
                if part.colour == "shade"
                else [*part.colour, 1.0]
            )
            turn = [0.0, 0.0, 0.0, 1.0]
            if part.shape == "box":
                vis = p.createVisualShape(
                    p.GEOM_BOX, halfExtents=[ex / 2, ey / 2, ez / 2], rgbaColor=colour, physicsClientId=c
                )
            elif part.shape == "sphere":
                vis = p.createVisualShape(
                    p.GEOM_SPHERE, radius=min(ex, ey, ez) / 2, rgbaColor=colour, physicsClientId=c
                )
            elif part.axis == "v":
                along_y = back in ("south", "north")
                length, radius = (ey, min(ex, ez) / 2) if along_y else (ex, min(ey, ez) / 2)
                h = math.sqrt(0.5)
                turn = [h, 0.0, 0.0, h] if along_y else [0.0, h, 0.0, h]
                vis = p.createVisualShape(
                    p.GEOM_CYLINDER, radius=radius, length=length, rgbaColor=colour, physicsClientId=c
                )
            else:
                vis = p.createVisualShape(
                    p.GEOM_CYLINDER, radius=min(ex, ey) / 2, length=ez, rgbaColor=colour, physicsClientId=c
                )
            self._add_corners((ex / 2, ey / 2, ez / 2), (centre[0], centre[1], centre[2]), it.position[2])
            shapes.append(vis)
            offsets.append([centre[k] - it.position[k] for k in range(3)])
            turns.append(turn)
        self._add_links(it.name, it.position, shapes, offsets, turns)
        self._bodies.append(Body(it.name, (x0, y0, x1, y1), (it.room,)))

    def _fixtures(self, spec: HouseSpec) -> None:
        """Ceilings, skirting boards and door frames: what makes a room read as a room."""
        for room in spec.rooms:
            x0, y0, x1, y1 = room.rect
            self._box(
                f"ceiling:{room.name}",
                ((x1 - x0) / 2, (y1 - y0) / 2, 0.01),
                ((x0 + x1) / 2, (y0 + y1) / 2, WALL_HEIGHT + 0.01),
                (*looks.CEILING, 1.0),
                (room.name,),
            )
        for w in spec.walls:
            x0, y0, x1, y1 = w.rect
            # A skirting board 1 cm proud of the wall's face on the room's side.
            grow = {"north": (0, -0.01, 0, 0), "south": (0, 0, 0, 0.01), "east": (-0.01, 0, 0, 0)}
            gx0, gy0, gx1, gy1 = grow.get(w.side, (0, 0, 0.01, 0))
            ax0, ay0, ax1, ay1 = x0 + gx0, y0 + gy0, x1 + gx1, y1 + gy1
            self._box(
                f"skirting:{w.name}",
                ((ax1 - ax0) / 2, (ay1 - ay0) / 2, looks.SKIRTING_HEIGHT / 2),
                ((ax0 + ax1) / 2, (ay0 + ay1) / 2, looks.SKIRTING_HEIGHT / 2),
                (*looks.SKIRTING, 1.0),
                (w.room,),
            )
        frame = (*DOOR_FRAME_RGB, 1.0)
        for k, d in enumerate(spec.doors):
            cx, cy = d.centre
            half, post, deep = d.width / 2, 0.06, WALL_THICKNESS + 0.03
            top = (WALL_HEIGHT - looks.DOOR_HEIGHT) / 2
            if d.axis == "x":  # the shared wall runs along x
                lintel = ((half, WALL_THICKNESS, top), (cx, cy, looks.DOOR_HEIGHT + top))
                posts = [(cx - half - post / 2, cy), (cx + half + post / 2, cy)]
                post_half = (post / 2, deep, looks.DOOR_HEIGHT / 2)
                beam = ((half + post, deep, 0.04), (cx, cy, looks.DOOR_HEIGHT + 0.04))
            else:
                lintel = ((WALL_THICKNESS, half, top), (cx, cy, looks.DOOR_HEIGHT + top))
                posts = [(cx, cy - half - post / 2), (cx, cy + half + post / 2)]
                post_half = (deep, post / 2, looks.DOOR_HEIGHT / 2)
                beam = ((deep, half + post, 0.04), (cx, cy, looks.DOOR_HEIGHT + 0.04))
            wall_rgb = spec.room(d.rooms[0]).wall_rgb
            self._box(f"lintel:{k}", lintel[0], lintel[1], (*wall_rgb, 1.0), d.rooms)
            self._box(f"doorframe:{k}:top", beam[0], beam[1], frame, d.rooms)
            for j, (px, py) in enumerate(posts):
                self._box(f"doorframe:{k}:{j}", post_half, (px, py, looks.DOOR_HEIGHT / 2), frame, d.rooms)

    def _box(
        self,
        name: str,
        half: tuple[float, float, float],
        pos: tuple[float, float, float],
        color: tuple[float, ...],
        rooms: tuple[str, ...],
    ) -> None:
        """A plain box body; ``rooms``: the rooms it belongs to (a doorway's parts: both)."""
        vis = self.p.createVisualShape(
            self.p.GEOM_BOX, halfExtents=list(half), rgbaColor=list(color), physicsClientId=self.client
        )
        self._add(name, vis, pos)
        self._add_corners(half, pos, pos[2])
        footprint = (pos[0] - half[0], pos[1] - half[1], pos[0] + half[0], pos[1] + half[1])
        self._bodies.append(Body(name, footprint, rooms))

    def _add_links(
        self,
        name: str,
        pos: tuple[float, float, float],
        shapes: list[int],
        offsets: list[list[float]],
        turns: list[list[float]],
    ) -> None:
        n = len(shapes)
        at = (pos[0], pos[1], PARK_Z) if self.parked else pos
        uid = self.p.createMultiBody(
            0,
            -1,
            -1,
            list(at),
            linkMasses=[0.0] * n,
            linkCollisionShapeIndices=[-1] * n,
            linkVisualShapeIndices=shapes,
            linkPositions=offsets,
            linkOrientations=turns,
            linkInertialFramePositions=[[0.0, 0.0, 0.0]] * n,
            linkInertialFrameOrientations=[[0.0, 0.0, 0.0, 1.0]] * n,
            linkParentIndices=[0] * n,
            linkJointTypes=[self.p.JOINT_FIXED] * n,
            linkJointAxis=[[0.0, 0.0, 1.0]] * n,
            physicsClientId=self.client,
        )
        self.uid[name] = uid
        self.name_of[uid] = name
        self.home[name] = (float(pos[0]), float(pos[1]), float(pos[2]))

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

    def _add_corners(
        self, half: tuple[float, float, float], centre: tuple[float, float, float], base_z: float
    ) -> None:
        """Record the eight corners of a box centred at ``centre`` on a body whose base stands at
        height ``base_z``, where it belongs and where the body is parked (base at :data:`PARK_Z`)."""
        cx, cy, cz = centre
        for z in (cz, PARK_Z + cz - base_z):
            for sx in (-1, 1):
                for sy in (-1, 1):
                    for sz in (-1, 1):
                        self._corners.append((cx + sx * half[0], cy + sy * half[1], z + sz * half[2]))

    def clear_of_corners(self, pose: Pose) -> Pose:
        """``pose``, or when a body's corner lies in the camera's own plane, the same pose with the
        eye moved back along the view by :data:`NUDGE_M` (repeated until no corner does).

        TinyRenderer divides by each vertex's distance along the view and does not clip a vertex
        that lies exactly in the eye's plane: that division by zero sends the rasteriser over an
        unbounded box, and the render never returns (issue 38: ``house-existence-s4805-0005``
        hung at 512x512 with the eye 0.03 m behind a door post's centre, exactly level with its
        back face, 0.25 m steps from the start having landed on it). Frames whose eye lies in no
        body's corner plane are drawn from the pose as given, so they stay byte-identical."""
        if self._corner_array is None:
            self._corner_array = np.asarray(self._corners, dtype=float).reshape(-1, 3)
        if self._corner_array.size == 0:
            return pose
        fwd, _, _ = view.view_vectors(pose)
        eye = view.position(pose)
        moved = pose
        for _ in range(8):
            depth = (self._corner_array - eye) @ fwd
            if float(np.abs(depth).min()) >= PLANE_EPS_M:
                return moved
            eye = eye - NUDGE_M * fwd
            moved = pose.model_copy(update={"x": float(eye[0]), "y": float(eye[1]), "z": float(eye[2])})
        return moved

    def render(self, pose: Pose) -> Frame:
        """RGB, metric depth and a body-id segmentation mask from ``pose``."""
        if self._culler is not None:
            self._show_only(self._culler.hidden(pose, self.spec.hfov, self.vfov))
        return render_frame(
            self.p,
            self.client,
            self.clear_of_corners(pose),
            fov=self.vfov,
            width=self.width,
            height=self.height,
            renderer=self.renderer,
            light=LIGHT,
            far=FAR,
        )

    def _show_only(self, hidden: set[str]) -> None:
        """Park exactly the bodies in ``hidden`` below the house; bring the others home."""
        p, c = self.p, self.client
        for name in hidden ^ self._hidden:
            x, y, z = self.home[name]
            at = [x, y, PARK_Z] if name in hidden else [x, y, z]
            p.resetBasePositionAndOrientation(self.uid[name], at, [0, 0, 0, 1], physicsClientId=c)
        self._hidden = hidden

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
