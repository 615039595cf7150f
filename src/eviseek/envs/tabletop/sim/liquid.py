"""Simulated liquid: a level computed from millilitres and drawn as a visual-only slab.

Liquid is state, not particles (``ObjectSpec.state["liquid_ml"]``): its height is the volume over
the container's inner floor area, capped at the rim. The slab has no collision shape, so it never
disturbs the physics, and it follows its container after every step or teleport.
"""

from __future__ import annotations

from eviseek.envs.tabletop.colors import LIQUID_RGBA
from eviseek.envs.tabletop.sim.state import PARK_Z, SimState
from eviseek.errors import EnvError


class LiquidMixin(SimState):
    """Liquid in containers and spilled puddles on the table."""

    def _follow(self, name: str) -> None:
        if name in self.liquid_uid:
            self._place_liquid(name)

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
