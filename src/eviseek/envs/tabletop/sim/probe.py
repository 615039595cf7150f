"""A second world for rendering one object alone (the support grader's unoccluded areas)."""

from __future__ import annotations

import numpy as np

from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.envs.tabletop.sim.state import PARK_Z
from eviseek.envs.tabletop.sim.world import TabletopSim
from eviseek.types import Pose


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
