"""Helpers shared by the physical families (containers, ramps, outcome evidence)."""

from __future__ import annotations

from eviseek.envs.tabletop.families._common import r6
from eviseek.envs.tabletop.scene import ObjectSpec, rounded, yaw_quat


def container(
    name: str,
    color: str,
    xy: tuple[float, float],
    inner: tuple[float, float, float],
    *,
    wall: float = 0.008,
    yaw: float = 0.0,
    category: str = "bin",
    mass: float = 0.0,
    movable: bool = False,
    state: dict[str, float] | None = None,
) -> ObjectSpec:
    """An open-topped container whose inside measures ``inner`` (x, y, depth) metres."""
    size = (inner[0] + 2 * wall, inner[1] + 2 * wall, inner[2] + wall)
    return ObjectSpec(
        name=name,
        shape="container",
        category=category,
        color=color,
        size=rounded(size),  # type: ignore[arg-type]
        position=(r6(xy[0]), r6(xy[1]), r6(size[2] / 2)),
        orientation=yaw_quat(yaw),
        mass=mass,
        wall=wall,
        movable=movable,
        state=dict(state or {}),
    )
