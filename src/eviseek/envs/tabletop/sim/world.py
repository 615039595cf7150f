"""The PyBullet world behind a tabletop scene: building it from a spec, stepping and settling.

One :class:`TabletopSim` owns one PyBullet ``DIRECT`` client. It knows nothing about questions or
agents; the environment and the task families drive it. Its concerns live in their own modules
(:mod:`.state` queries, :mod:`.liquid`, :mod:`.holding`, :mod:`.rendering`) and are assembled here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs import deadline
from eviseek.envs.render import OwnedClient
from eviseek.envs.tabletop.colors import FLOOR_RGBA, rgba
from eviseek.envs.tabletop.limits import asset_path
from eviseek.envs.tabletop.scene import WINDOW_BOTTOM, WINDOW_TOP, WINDOW_WIDTH, ObjectSpec, SceneSpec
from eviseek.envs.tabletop.sim.cloth import drape
from eviseek.envs.tabletop.sim.holding import HoldingMixin
from eviseek.envs.tabletop.sim.liquid import LiquidMixin
from eviseek.envs.tabletop.sim.meshes import cone_mesh, pyramid_mesh, wedge_mesh
from eviseek.envs.tabletop.sim.rendering import Renderer, RenderingMixin
from eviseek.envs.tabletop.sim.state import SIM_HZ, pybullet_module
from eviseek.errors import EnvError


class TabletopSim(LiquidMixin, HoldingMixin, RenderingMixin, OwnedClient):
    """A PyBullet world built from a :class:`SceneSpec`.

    ``uid`` maps object names to body ids; ``name_of`` maps back. Segmentation masks hold body ids.
    """

    def __init__(
        self, spec: SceneSpec, *, width: int = 320, height: int = 240, renderer: Renderer = "tiny"
    ) -> None:
        if renderer not in ("tiny", "egl"):
            raise EnvError(f"unknown renderer {renderer!r}; use 'tiny' (TinyRenderer) or 'egl'")
        if width < 16 or height < 16:
            raise EnvError(f"image size {width}x{height} is too small; use at least 16x16")
        self.p = pybullet_module()
        self.width = width
        self.height = height
        self.renderer = renderer
        self.client = self.p.connect(self.p.DIRECT)
        self._egl_plugin: int | None = None
        if renderer == "egl":
            self._load_egl()
        self.spec = spec
        self.uid: dict[str, int] = {}
        self.name_of: dict[int, str] = {}
        self.table_uid = -1
        self.floor_uid = -1
        self.liquid_uid: dict[str, int] = {}
        self.holds: dict[str, int] = {}
        """Objects held in the air by a fixed constraint (name -> constraint id)."""
        self.cloth_vertices: dict[str, np.ndarray] = {}
        """Each cloth's draped vertices in its own frame (local z = 0 is the table top)."""
        self.build(spec)

    # -- lifecycle -----------------------------------------------------------------

    def build(self, spec: SceneSpec) -> None:
        """(Re)build the world from ``spec``: floor, table, every object at its spec pose."""
        p, c = self.p, self.client
        p.resetSimulation(physicsClientId=c)
        p.setGravity(0, 0, spec.gravity, physicsClientId=c)
        p.setTimeStep(1.0 / SIM_HZ, physicsClientId=c)
        p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=c)
        self.spec = spec
        self.uid.clear()
        self.name_of.clear()
        self.liquid_uid.clear()
        self.holds.clear()
        self.cloth_vertices.clear()
        t = spec.table
        floor_half = [6.0, 6.0, 0.01]
        self.floor_uid = p.createMultiBody(
            0,
            p.createCollisionShape(p.GEOM_BOX, halfExtents=floor_half, physicsClientId=c),
            p.createVisualShape(p.GEOM_BOX, halfExtents=floor_half, rgbaColor=FLOOR_RGBA, physicsClientId=c),
            [0, 0, -t.height - 0.01],
            physicsClientId=c,
        )
        half = [t.size[0] / 2, t.size[1] / 2, t.thickness / 2]
        self.table_uid = p.createMultiBody(
            0,
            p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=c),
            p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=t.rgba, physicsClientId=c),
            [0, 0, -t.thickness / 2],
            physicsClientId=c,
        )
        p.changeDynamics(self.table_uid, -1, lateralFriction=t.friction, physicsClientId=c)
        # Cloth last: it drapes over whatever the other objects put under it.
        for obj in spec.objects:
            if obj.shape != "cloth":
                deadline.check()  # an env server's call past its timeout stops here
                self._add_object(obj)
        for obj in spec.objects:
            if obj.shape == "cloth":
                deadline.check()
                self._add_cloth(obj)

    def _add_cloth(self, obj: ObjectSpec) -> int:
        p, c = self.p, self.client
        yaw = math.degrees(2 * math.atan2(obj.orientation[2], obj.orientation[3]))
        verts, idx, norms = drape(p, c, (obj.position[0], obj.position[1]), obj.size[0], yaw)
        self.cloth_vertices[obj.name] = np.asarray(verts)
        vis = p.createVisualShape(
            p.GEOM_MESH,
            vertices=verts,
            indices=idx,
            normals=norms,
            rgbaColor=rgba(obj.color),
            physicsClientId=c,
        )
        uid = p.createMultiBody(0, -1, vis, obj.position, obj.orientation, physicsClientId=c)
        self.uid[obj.name] = uid
        self.name_of[uid] = obj.name
        return uid

    def _add_object(self, obj: ObjectSpec) -> int:
        p, c = self.p, self.client
        color = rgba(obj.color)
        _sx, _sy, _sz = obj.size
        if obj.shape == "asset":
            path = asset_path(obj.asset or "")  # only URDFs of pybullet_data, never another file
            try:
                uid = p.loadURDF(
                    path, obj.position, obj.orientation, globalScaling=obj.scale, physicsClientId=c
                )
            except Exception as exc:
                raise EnvError(f"object {obj.name!r}: cannot load asset {obj.asset!r} ({exc})") from exc
            p.changeVisualShape(uid, -1, rgbaColor=color, physicsClientId=c)
        else:
            col, vis = self._shapes(obj, color)
            uid = p.createMultiBody(obj.mass, col, vis, obj.position, obj.orientation, physicsClientId=c)
        if obj.shape != "asset" or obj.mass > 0:
            p.changeDynamics(
                uid,
                -1,
                mass=obj.mass,
                lateralFriction=obj.friction,
                restitution=obj.restitution,
                rollingFriction=0.0005 if obj.shape in ("sphere", "cylinder") else 0.0,
                spinningFriction=0.0005 if obj.shape in ("sphere", "cylinder") else 0.0,
                physicsClientId=c,
            )
        self.uid[obj.name] = uid
        self.name_of[uid] = obj.name
        if obj.shape == "container" and "liquid_ml" in obj.state:
            self.set_liquid(obj.name, float(obj.state["liquid_ml"]))
        return uid

    def _shapes(self, obj: ObjectSpec, color: tuple[float, float, float, float]) -> tuple[int, int]:
        p, c = self.p, self.client
        sx, sy, sz = obj.size
        if obj.shape == "box":
            h = [sx / 2, sy / 2, sz / 2]
            return (
                p.createCollisionShape(p.GEOM_BOX, halfExtents=h, physicsClientId=c),
                p.createVisualShape(p.GEOM_BOX, halfExtents=h, rgbaColor=color, physicsClientId=c),
            )
        if obj.shape == "cylinder":
            r = sx / 2
            return (
                p.createCollisionShape(p.GEOM_CYLINDER, radius=r, height=sz, physicsClientId=c),
                p.createVisualShape(p.GEOM_CYLINDER, radius=r, length=sz, rgbaColor=color, physicsClientId=c),
            )
        if obj.shape == "sphere":
            r = sx / 2
            return (
                p.createCollisionShape(p.GEOM_SPHERE, radius=r, physicsClientId=c),
                p.createVisualShape(p.GEOM_SPHERE, radius=r, rgbaColor=color, physicsClientId=c),
            )
        if obj.shape in ("cone", "pyramid", "wedge"):
            if obj.shape == "cone":
                verts, idx, norms = cone_mesh(sx / 2, sz)
            elif obj.shape == "pyramid":
                verts, idx, norms = pyramid_mesh(sx, sy, sz)
            else:
                verts, idx, norms = wedge_mesh(sx, sy, sz)
            return (
                p.createCollisionShape(p.GEOM_MESH, vertices=verts, physicsClientId=c),
                p.createVisualShape(
                    p.GEOM_MESH,
                    vertices=verts,
                    indices=idx,
                    normals=norms,
                    rgbaColor=color,
                    physicsClientId=c,
                ),
            )
        if obj.shape == "container":
            w = obj.wall
            halves = [
                [sx / 2, sy / 2, w / 2],
                [w / 2, sy / 2, sz / 2],
                [w / 2, sy / 2, sz / 2],
                [sx / 2, w / 2, sz / 2],
                [sx / 2, w / 2, sz / 2],
            ]
            frames = [
                [0, 0, -sz / 2 + w / 2],
                [sx / 2 - w / 2, 0, 0],
                [-sx / 2 + w / 2, 0, 0],
                [0, sy / 2 - w / 2, 0],
                [0, -sy / 2 + w / 2, 0],
            ]
            return self._boxes(halves, frames, color)
        if obj.shape == "robot":
            return self._robot_shapes(obj, color)
        if obj.shape == "window":
            return self._window_shapes(obj, color)
        raise EnvError(f"object {obj.name!r}: unsupported shape {obj.shape!r}")  # pragma: no cover

    def _window_shapes(self, obj: ObjectSpec, color: tuple[float, float, float, float]) -> tuple[int, int]:
        """An upright board with a hole: four boxes around it (left, right, below, above)."""
        sx, sy, sz = obj.size
        bottom, top, half_w = -sz / 2 + WINDOW_BOTTOM, -sz / 2 + WINDOW_TOP, WINDOW_WIDTH / 2
        side = (sy / 2 - half_w) / 2
        halves = [
            [sx / 2, side, sz / 2],
            [sx / 2, side, sz / 2],
            [sx / 2, half_w, (bottom + sz / 2) / 2],
            [sx / 2, half_w, (sz / 2 - top) / 2],
        ]
        frames = [
            [0, half_w + side, 0],
            [0, -half_w - side, 0],
            [0, 0, (-sz / 2 + bottom) / 2],
            [0, 0, (top + sz / 2) / 2],
        ]
        return self._boxes(halves, frames, color)

    def _boxes(
        self, halves: list[list[float]], frames: list[list[float]], color: tuple[float, float, float, float]
    ) -> tuple[int, int]:
        """Collision and visual shapes of one body made of boxes (half extents, centres), one colour."""
        p, c, n = self.p, self.client, len(halves)
        return (
            p.createCollisionShapeArray(
                [p.GEOM_BOX] * n, halfExtents=halves, collisionFramePositions=frames, physicsClientId=c
            ),
            p.createVisualShapeArray(
                [p.GEOM_BOX] * n,
                halfExtents=halves,
                visualFramePositions=frames,
                rgbaColors=[color] * n,
                physicsClientId=c,
            ),
        )

    def _robot_shapes(self, obj: ObjectSpec, color: tuple[float, float, float, float]) -> tuple[int, int]:
        """A wheeled robot filling ``obj.size`` (x forward): four wheels under a flat base (the
        lowest fifth of its height is wheel), a mast, and a camera head at the top, nose forward."""
        p, c = self.p, self.client
        sx, sy, sz = obj.size
        bottom = -sz / 2
        wheel_r = 0.11 * sz
        base_h = 0.2 * sz
        head_h = 0.2 * sz
        base_z = bottom + wheel_r + base_h / 2
        head_z = sz / 2 - head_h / 2
        mast_lo, mast_hi = base_z + base_h / 2, head_z - head_h / 2
        axle = p.getQuaternionFromEuler([np.pi / 2, 0, 0])
        level = [0.0, 0.0, 0.0, 1.0]
        parts: list[tuple[int, dict[str, Any], list[float], list[float]]] = []
        for wx in (-0.32 * sx, 0.32 * sx):
            for wy in (-(sy / 2 - 0.006), sy / 2 - 0.006):
                parts.append(
                    (p.GEOM_CYLINDER, {"radius": wheel_r, "length": 0.012}, [wx, wy, bottom + wheel_r], axle)
                )
        parts.append(
            (p.GEOM_BOX, {"halfExtents": [sx / 2, sy / 2 - 0.012, base_h / 2]}, [0, 0, base_z], level)
        )
        parts.append(
            (
                p.GEOM_CYLINDER,
                {"radius": 0.06 * sy, "length": mast_hi - mast_lo},
                [0, 0, (mast_lo + mast_hi) / 2],
                level,
            )
        )
        parts.append(
            (p.GEOM_BOX, {"halfExtents": [0.22 * sx, 0.3 * sy, head_h / 2]}, [0.05 * sx, 0, head_z], level)
        )
        lens = p.getQuaternionFromEuler([0, np.pi / 2, 0])
        parts.append(
            (p.GEOM_CYLINDER, {"radius": 0.3 * head_h, "length": 0.01}, [0.27 * sx + 0.005, 0, head_z], lens)
        )
        kinds = [k for k, _, _, _ in parts]
        radii = [float(a.get("radius", 0.0)) for _, a, _, _ in parts]
        lengths = [float(a.get("length", 0.0)) for _, a, _, _ in parts]
        halves = [list(a.get("halfExtents", [0.0, 0.0, 0.0])) for _, a, _, _ in parts]
        frames = [f for _, _, f, _ in parts]
        turns = [q for _, _, _, q in parts]
        col = p.createCollisionShapeArray(
            kinds,
            radii=radii,
            lengths=lengths,
            halfExtents=halves,
            collisionFramePositions=frames,
            collisionFrameOrientations=turns,
            physicsClientId=c,
        )
        vis = p.createVisualShapeArray(
            kinds,
            radii=radii,
            lengths=lengths,
            halfExtents=halves,
            visualFramePositions=frames,
            visualFrameOrientations=turns,
            rgbaColors=[list(color)] * len(kinds),
            physicsClientId=c,
        )
        return col, vis

    # -- physics -------------------------------------------------------------------

    def step(self, n: int = 1) -> None:
        """Advance the simulation ``n`` ticks of 1/240 s."""
        for tick in range(n):
            if tick % 24 == 0:  # every 0.1 s simulated: a few microseconds against ~24 ticks' work
                deadline.check()
            self.p.stepSimulation(physicsClientId=self.client)
        for name in self.liquid_uid:
            self._place_liquid(name)

    def settle(
        self,
        max_seconds: float = 3.0,
        lin_tol: float = 0.005,
        ang_tol: float = 0.05,
        min_seconds: float = 0.0,
    ) -> float:
        """Simulate at least ``min_seconds`` and then until every dynamic object is at rest (or
        ``max_seconds``); return the simulated seconds."""
        chunk = SIM_HZ // 10
        used = 0
        movers = [self.uid[o.name] for o in self.spec.objects if o.mass > 0 and o.name not in self.holds]
        while used < max_seconds * SIM_HZ:
            self.step(chunk)
            used += chunk
            if used < min_seconds * SIM_HZ:
                continue
            resting = True
            for uid in movers:
                lin, ang = self.p.getBaseVelocity(uid, physicsClientId=self.client)
                if np.linalg.norm(lin) > lin_tol or np.linalg.norm(ang) > ang_tol:
                    resting = False
                    break
            if resting:
                break
        return used / SIM_HZ
