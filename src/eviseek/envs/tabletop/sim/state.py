"""What every part of the simulator shares: the PyBullet client, the name/body-id maps and the
object-state queries (poses, bounding boxes, contacts, scene changes).

:class:`SimState` is the base of the liquid, holding and rendering mixins and of
:class:`~eviseek.envs.tabletop.sim.world.TabletopSim`, which assembles them; it holds no logic of
its own beyond reading and teleporting bodies.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek._lazy import require_pybullet
from eviseek.envs.tabletop.colors import rgba
from eviseek.envs.tabletop.scene import SceneChange, SceneSpec

SIM_HZ = 240
PARK_Z = -50.0
"""Height at which objects taken off the table are parked, far below the floor and out of view."""


def pybullet_module() -> Any:
    """The ``pybullet`` module, or an error naming the extra that installs it."""
    return require_pybullet("the tabletop environment")


class SimState:
    """The shared state of a tabletop world (see :class:`~eviseek.envs.tabletop.sim.TabletopSim`).

    ``uid`` maps object names to body ids; ``name_of`` maps back. Segmentation masks hold body ids.
    """

    p: Any
    """The ``pybullet`` module."""
    client: int
    width: int
    height: int
    renderer: str
    spec: SceneSpec
    uid: dict[str, int]
    name_of: dict[int, str]
    table_uid: int
    floor_uid: int
    liquid_uid: dict[str, int]
    holds: dict[str, int]
    """Objects held in the air by a fixed constraint (name -> constraint id)."""

    def _follow(self, name: str) -> None:
        """Move whatever is attached to ``name`` (its liquid) after the object was teleported."""

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
        self._follow(name)

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
