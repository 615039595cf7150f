"""Holding: a fixed constraint keeps an object still in the air, a stand-in for a gripper."""

from __future__ import annotations

from eviseek.envs.tabletop.sim.state import SimState


class HoldingMixin(SimState):
    """Hold and release objects (``holds`` maps a held object's name to its constraint id)."""

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
