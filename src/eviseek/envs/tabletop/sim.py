"""The PyBullet world behind a tabletop scene: building, rendering, settling, moving objects.

One :class:`TabletopSim` owns one PyBullet ``DIRECT`` client. It knows nothing about questions or
agents; the environment and the task families drive it. PyBullet is imported here, lazily, through
:func:`eviseek._lazy.require`, so importing the tabletop package stays light.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from eviseek._lazy import require
from eviseek.envs.tabletop import camera as cam
from eviseek.envs.tabletop.colors import FLOOR_RGBA, LIQUID_RGBA, rgba
from eviseek.envs.tabletop.scene import ObjectSpec, SceneChange, SceneSpec
from eviseek.errors import EnvError
from eviseek.types import Pose

Renderer = str  # "tiny" | "egl"

SIM_HZ = 240
PARK_Z = -50.0
"""Height at which objects taken off the table are parked, far below the floor and out of view."""


def _pb() -> Any:
    return require("pybullet", "sim", "the tabletop environment")


@dataclass
class Frame:
    """One rendered view: pixels plus the privileged buffers."""

    rgb: np.ndarray
    depth: np.ndarray
    segmentation: np.ndarray


# ----------------------------------------------------------------------------- meshes


def _cone_mesh(
    radius: float, height: float, n: int = 24
) -> tuple[list[list[float]], list[int], list[list[float]]]:
    """Vertices, indices and normals of a cone centred on its bounding box (flat-shaded faces)."""
    verts: list[list[float]] = []
    norms: list[list[float]] = []
    idx: list[int] = []
    h2 = height / 2.0
    slope = radius / height
    for i in range(n):
        a0, a1 = 2 * math.pi * i / n, 2 * math.pi * (i + 1) / n
        b0 = [radius * math.cos(a0), radius * math.sin(a0), -h2]
        b1 = [radius * math.cos(a1), radius * math.sin(a1), -h2]
        am = (a0 + a1) / 2
        raw = np.array([math.cos(am), math.sin(am), slope])
        nrm = [float(v) for v in raw / np.linalg.norm(raw)]
        k = len(verts)
        verts += [b0, b1, [0.0, 0.0, h2]]
        norms += [nrm, nrm, nrm]
        idx += [k, k + 1, k + 2]
        k = len(verts)
        verts += [[0.0, 0.0, -h2], b1, b0]
        norms += [[0.0, 0.0, -1.0]] * 3
        idx += [k, k + 1, k + 2]
    return verts, idx, norms


def _faces_mesh(
    corners: list[list[float]], faces: list[list[int]]
) -> tuple[list[list[float]], list[int], list[list[float]]]:
    """Flat-shaded triangle mesh of a convex polyhedron given counter-clockwise (outward) faces."""
    verts: list[list[float]] = []
    norms: list[list[float]] = []
    idx: list[int] = []
    for face in faces:
        p = [np.asarray(corners[i], dtype=float) for i in face]
        raw = np.cross(p[1] - p[0], p[2] - p[0])
        nrm = [float(v) for v in raw / np.linalg.norm(raw)]
        for t in range(1, len(face) - 1):
            k = len(verts)
            verts += [p[0].tolist(), p[t].tolist(), p[t + 1].tolist()]
            norms += [nrm, nrm, nrm]
            idx += [k, k + 1, k + 2]
    return verts, idx, norms


def _pyramid_mesh(sx: float, sy: float, sz: float) -> tuple[list[list[float]], list[int], list[list[float]]]:
    x, y, z = sx / 2, sy / 2, sz / 2
    corners = [[-x, -y, -z], [x, -y, -z], [x, y, -z], [-x, y, -z], [0.0, 0.0, z]]
    faces = [[0, 3, 2, 1], [0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]]
    return _faces_mesh(corners, faces)


def _wedge_mesh(sx: float, sy: float, sz: float) -> tuple[list[list[float]], list[int], list[list[float]]]:
    """A ramp: full height at local +x, zero height at -x."""
    x, y, z = sx / 2, sy / 2, sz / 2
    corners = [[-x, -y, -z], [x, -y, -z], [x, y, -z], [-x, y, -z], [x, -y, z], [x, y, z]]
    faces = [[0, 3, 2, 1], [1, 2, 5, 4], [0, 1, 4], [3, 5, 2], [0, 4, 5, 3]]
    return _faces_mesh(corners, faces)


# ----------------------------------------------------------------------------- the world


class TabletopSim:
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
        self.p = _pb()
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
        self.build(spec)

    # -- lifecycle -----------------------------------------------------------------

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

    def close(self) -> None:
        """Disconnect the client (idempotent)."""
        if self.client >= 0:
            with contextlib.suppress(Exception):  # already gone
                self.p.disconnect(physicsClientId=self.client)
            self.client = -1

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()

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
        for obj in spec.objects:
            self._add_object(obj)

    def _add_object(self, obj: ObjectSpec) -> int:
        p, c = self.p, self.client
        color = rgba(obj.color)
        _sx, _sy, _sz = obj.size
        if obj.shape == "asset":
            import pybullet_data

            path = f"{pybullet_data.getDataPath()}/{obj.asset}"
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
                verts, idx, norms = _cone_mesh(sx / 2, sz)
            elif obj.shape == "pyramid":
                verts, idx, norms = _pyramid_mesh(sx, sy, sz)
            else:
                verts, idx, norms = _wedge_mesh(sx, sy, sz)
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
            return (
                p.createCollisionShapeArray(
                    [p.GEOM_BOX] * 5, halfExtents=halves, collisionFramePositions=frames, physicsClientId=c
                ),
                p.createVisualShapeArray(
                    [p.GEOM_BOX] * 5,
                    halfExtents=halves,
                    visualFramePositions=frames,
                    rgbaColors=[color] * 5,
                    physicsClientId=c,
                ),
            )
        raise EnvError(f"object {obj.name!r}: unsupported shape {obj.shape!r}")  # pragma: no cover

    # -- state ---------------------------------------------------------------------

    def pose_of(self, name: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """World position and quaternion of an object."""
        pos, orn = self.p.getBasePositionAndOrientation(self.uid[name], physicsClientId=self.client)
        return tuple(pos), tuple(orn)

    def poses(self) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
        """Poses of every object, keyed by name."""
        return {n: self.pose_of(n) for n in self.uid}

    def set_pose(
        self, name: str, position: tuple[float, ...], orientation: tuple[float, ...] | None = None
    ) -> None:
        """Teleport an object and zero its velocity."""
        uid = self.uid[name]
        if orientation is None:
            orientation = self.pose_of(name)[1]
        self.p.resetBasePositionAndOrientation(uid, position, orientation, physicsClientId=self.client)
        self.p.resetBaseVelocity(uid, [0, 0, 0], [0, 0, 0], physicsClientId=self.client)
        if name in self.liquid_uid:
            self._place_liquid(name)

    def aabb(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounding box (min, max) of an object in the world."""
        lo, hi = self.p.getAABB(self.uid[name], physicsClientId=self.client)
        return np.asarray(lo), np.asarray(hi)

    def is_parked(self, name: str) -> bool:
        """Whether the object has been taken off the table (parked below the world)."""
        return self.pose_of(name)[0][2] < PARK_Z / 2

    def distance(self, a: str, b: str, max_distance: float = 0.5) -> float:
        """Closest distance between two objects' collision shapes (negative when penetrating)."""
        pts = self.p.getClosestPoints(self.uid[a], self.uid[b], max_distance, physicsClientId=self.client)
        if not pts:
            return math.inf
        return float(min(pt[8] for pt in pts))

    def contacts(self, name: str) -> list[str]:
        """Names of the bodies touching ``name`` (``table`` and ``floor`` included)."""
        pts = self.p.getContactPoints(bodyA=self.uid[name], physicsClientId=self.client)
        out: list[str] = []
        for pt in pts:
            other = pt[2]
            label = self.name_of.get(other, "table" if other == self.table_uid else "floor")
            if label not in out:
                out.append(label)
        return out

    def apply_change(self, change: SceneChange) -> None:
        """Apply one scene change (Unobserved Change tasks)."""
        if change.remove:
            self.set_pose(change.object, (0.0, 0.0, PARK_Z))
            return
        if change.position is not None or change.orientation is not None:
            pos, orn = self.pose_of(change.object)
            self.set_pose(
                change.object,
                change.position if change.position is not None else pos,
                change.orientation if change.orientation is not None else orn,
            )
        if change.color is not None:
            self.p.changeVisualShape(
                self.uid[change.object], -1, rgbaColor=rgba(change.color), physicsClientId=self.client
            )

    # -- simulated liquid ------------------------------------------------------------

    def set_liquid(self, container: str, ml: float) -> None:
        """Show ``ml`` millilitres of liquid inside a container as a visual-only slab.

        Liquid is simulated state, not particles: its height is ``ml`` divided by the inner floor
        area, capped at the rim. The slab has no collision shape, so it never disturbs physics.
        """
        obj = self.spec.object(container)
        if obj.shape != "container":
            raise EnvError(f"{container!r} is not a container and cannot hold liquid")
        if container in self.liquid_uid:
            self.p.removeBody(self.liquid_uid.pop(container), physicsClientId=self.client)
        obj.state["liquid_ml"] = float(ml)
        level = self.liquid_level(container)
        if level <= 1e-4:
            return
        sx, sy, _ = obj.size
        w = obj.wall
        half = [sx / 2 - w - 0.001, sy / 2 - w - 0.001, level / 2]
        vis = self.p.createVisualShape(
            self.p.GEOM_BOX, halfExtents=half, rgbaColor=LIQUID_RGBA, physicsClientId=self.client
        )
        self.liquid_uid[container] = self.p.createMultiBody(
            0, -1, vis, [0, 0, PARK_Z], physicsClientId=self.client
        )
        self.name_of[self.liquid_uid[container]] = f"{container}:liquid"
        self._place_liquid(container)

    def capacity_ml(self, container: str) -> float:
        """How much liquid ``container`` holds up to its rim, in millilitres."""
        obj = self.spec.object(container)
        sx, sy, sz = obj.size
        w = obj.wall
        return max(sx - 2 * w, 0.0) * max(sy - 2 * w, 0.0) * max(sz - w, 0.0) * 1e6

    def show_spill(self, near: str, ml: float) -> None:
        """Draw spilled liquid as a thin puddle on the table beside ``near`` (visual only)."""
        if ml <= 0:
            return
        lo, hi = self.aabb(near)
        radius = min(0.04 + 0.0004 * ml, 0.15)
        vis = self.p.createVisualShape(
            self.p.GEOM_CYLINDER,
            radius=radius,
            length=0.002,
            rgbaColor=LIQUID_RGBA,
            physicsClientId=self.client,
        )
        x = float(hi[0]) + radius * 0.6
        y = float(lo[1] + hi[1]) / 2
        uid = self.p.createMultiBody(0, -1, vis, [x, y, 0.001], physicsClientId=self.client)
        self.name_of[uid] = f"{near}:spill"

    def liquid_level(self, container: str) -> float:
        """Height in metres of the liquid in ``container`` (0 when it holds none)."""
        obj = self.spec.object(container)
        ml = float(obj.state.get("liquid_ml", 0.0))
        sx, sy, sz = obj.size
        w = obj.wall
        area = max(sx - 2 * w, 1e-6) * max(sy - 2 * w, 1e-6)
        return min(ml * 1e-6 / area, sz - w)

    def _place_liquid(self, container: str) -> None:
        lid = self.liquid_uid.get(container)
        if lid is None:
            return
        obj = self.spec.object(container)
        pos, orn = self.pose_of(container)
        level = self.liquid_level(container)
        local = [0.0, 0.0, -obj.size[2] / 2 + obj.wall + level / 2]
        wpos, worn = self.p.multiplyTransforms(pos, orn, local, [0, 0, 0, 1], physicsClientId=self.client)
        self.p.resetBasePositionAndOrientation(lid, wpos, worn, physicsClientId=self.client)

    # -- physics -------------------------------------------------------------------

    def step(self, n: int = 1) -> None:
        """Advance the simulation ``n`` ticks of 1/240 s."""
        for _ in range(n):
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

    def hold(self, name: str, position: tuple[float, ...]) -> None:
        """Hold an object still at ``position`` (a gripper stand-in) until :meth:`release`."""
        self.release(name)
        orn = self.pose_of(name)[1]
        self.set_pose(name, position, orn)
        self.holds[name] = self.p.createConstraint(
            self.uid[name],
            -1,
            -1,
            -1,
            self.p.JOINT_FIXED,
            [0, 0, 0],
            [0, 0, 0],
            position,
            [0, 0, 0, 1],
            orn,
            physicsClientId=self.client,
        )

    def release(self, name: str) -> None:
        """Let go of a held object (no-op when not held)."""
        cid = self.holds.pop(name, None)
        if cid is not None:
            self.p.removeConstraint(cid, physicsClientId=self.client)

    # -- rendering -----------------------------------------------------------------

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


class ProbeSim:
    """A second world holding only the scene's objects, for rendering one object alone.

    The support grader needs each object's *unoccluded* pixel area from a given camera: it puts
    the object at its recorded pose here, with every other object parked far away and no table,
    and counts the object's pixels. Kept apart from the episode's world so grading never disturbs
    the physics state an agent is acting on. One probe is reused across episodes via :meth:`load`.
    """

    def __init__(self, *, width: int, height: int) -> None:
        self.sim = TabletopSim(SceneSpec(), width=width, height=height, renderer="tiny")
        self._shown: str | None = None

    def load(self, spec: SceneSpec) -> None:
        """Rebuild the probe for ``spec``'s objects (static, parked, no table or floor)."""
        bare = spec.model_copy(
            update={"objects": [o.model_copy(update={"mass": 0.0, "state": {}}) for o in spec.objects]},
            deep=True,
        )
        self.sim.build(bare)
        p, c = self.sim.p, self.sim.client
        # No floor or table in the probe: nothing but the object itself may cover its pixels.
        for uid in (self.sim.table_uid, self.sim.floor_uid):
            p.removeBody(uid, physicsClientId=c)
        for name in self.sim.uid:
            self.sim.set_pose(name, (0.0, 0.0, PARK_Z))
        self._shown = None

    def pixels_alone(
        self, name: str, position: tuple[float, ...], orientation: tuple[float, ...], pose: Pose
    ) -> int:
        """How many pixels ``name`` covers from ``pose`` when nothing else is in the world."""
        if self._shown is not None and self._shown != name:
            self.sim.set_pose(self._shown, (0.0, 0.0, PARK_Z))
        self.sim.set_pose(name, position, orientation)
        self._shown = name
        frame = self.sim.render(pose)
        return int(np.count_nonzero(frame.segmentation == self.sim.uid[name]))

    def close(self) -> None:
        """Release the probe's client."""
        self.sim.close()
