"""A ``window`` board is solid except for its small hole, for rays and for the camera alike."""

from __future__ import annotations

from eviseek.envs.tabletop.scene import (
    WINDOW_BOTTOM,
    WINDOW_TOP,
    WINDOW_WIDTH,
    ObjectSpec,
    SceneSpec,
)
from eviseek.envs.tabletop.sim import TabletopSim

BOARD = ObjectSpec(
    name="gray_board",
    shape="window",
    category="board",
    color="gray",
    size=(0.02, 0.18, 0.14),
    position=(0.0, 0.0, 0.07),
    mass=0.0,
    movable=False,
)


def hits_board(sim: TabletopSim, y: float, z: float) -> bool:
    """Whether a ray along x at (y, z) hits the board."""
    hit = sim.p.rayTest([-0.3, y, z], [0.3, y, z], physicsClientId=sim.client)[0]
    return hit[0] == sim.uid["gray_board"]


def test_rays_pass_only_through_the_hole() -> None:
    sim = TabletopSim(SceneSpec(objects=[BOARD]), width=32, height=32)
    try:
        middle = (WINDOW_BOTTOM + WINDOW_TOP) / 2
        assert not hits_board(sim, 0.0, middle)
        assert not hits_board(sim, WINDOW_WIDTH / 2 - 0.002, middle)
        assert hits_board(sim, WINDOW_WIDTH / 2 + 0.002, middle)
        assert hits_board(sim, -WINDOW_WIDTH / 2 - 0.002, middle)
        assert hits_board(sim, 0.0, WINDOW_BOTTOM - 0.003)
        assert hits_board(sim, 0.0, WINDOW_TOP + 0.003)
        assert hits_board(sim, 0.08, 0.12)
        lo, hi = sim.aabb("gray_board")
        assert abs(lo[2]) < 1e-3 and abs(hi[2] - 0.14) < 1e-3  # stands on the table, full height
    finally:
        sim.close()
