"""Helpers shared by task families: object catalogue, placement, camera placement, guidance text.

Not a family itself (the leading underscore keeps discovery away).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from eviseek.envs.tabletop.colors import OBJECT_COLORS
from eviseek.envs.tabletop.scene import ObjectSpec, Shape, object_name, rounded, yaw_quat
from eviseek.types import Pose

CATEGORY_SHAPE: dict[str, Shape] = {
    "cube": "box",
    "cylinder": "cylinder",
    "ball": "sphere",
    "cone": "cone",
    "pyramid": "pyramid",
}
"""Question nouns and the primitive each one is built from."""

CAMERA_GUIDANCE = (
    "Camera actions: move_forward/backward/left/right move 0.25 m in the horizontal plane, "
    "move_up/down 0.25 m vertically, turn_left/right rotate 15 degrees, turn_up/down tilt 15 degrees."
)


def r6(x: float) -> float:
    """Round to 6 decimals (stable JSON)."""
    return round(float(x), 6) + 0.0


def pick(rng: np.random.Generator, items: list[Any] | tuple[Any, ...], k: int | None = None) -> Any:
    """One item (or ``k`` distinct items) drawn with ``rng``."""
    if k is None:
        return items[int(rng.integers(len(items)))]
    idx = rng.choice(len(items), size=k, replace=False)
    return [items[int(i)] for i in idx]


def colors(rng: np.random.Generator, k: int) -> list[str]:
    """``k`` distinct object colours."""
    return list(pick(rng, OBJECT_COLORS, k))


def size_for(category: str, scale: float) -> tuple[float, float, float]:
    """Full extents of a catalogue object whose characteristic size is ``scale`` metres."""
    if category == "cube":
        return (scale, scale, scale)
    if category == "cylinder":
        return (scale, scale, scale * 1.3)
    if category == "ball":
        return (scale, scale, scale)
    if category == "cone":
        return (scale, scale, scale * 1.4)
    if category == "pyramid":
        return (scale, scale, scale * 1.1)
    raise ValueError(f"unknown catalogue category {category!r}; known: {', '.join(CATEGORY_SHAPE)}")


def make_object(
    category: str,
    color: str,
    xy: tuple[float, float],
    scale: float,
    *,
    yaw: float = 0.0,
    role: str = "",
    name: str | None = None,
    mass: float = 0.2,
    friction: float = 0.6,
    movable: bool = True,
) -> ObjectSpec:
    """A catalogue object resting on the table at ``xy``."""
    size = size_for(category, scale)
    return ObjectSpec(
        name=name or object_name(color, category),
        shape=CATEGORY_SHAPE[category],
        category=category,
        color=color,
        size=rounded(size),  # type: ignore[arg-type]
        position=(r6(xy[0]), r6(xy[1]), r6(size[2] / 2)),
        orientation=yaw_quat(yaw),
        mass=mass,
        friction=friction,
        role=role,
        movable=movable,
    )


def make_board(
    name: str,
    color: str,
    xy: tuple[float, float],
    size: tuple[float, float, float],
    yaw: float,
    role: str = "occluder",
) -> ObjectSpec:
    """A static upright board (an occluder) standing on the table."""
    return ObjectSpec(
        name=name,
        shape="box",
        category="board",
        color=color,
        size=rounded(size),  # type: ignore[arg-type]
        position=(r6(xy[0]), r6(xy[1]), r6(size[2] / 2)),
        orientation=yaw_quat(yaw),
        mass=0.0,
        role=role,
        movable=False,
    )


def orbit_pose(
    target: tuple[float, float, float],
    azimuth: float,
    elevation: float,
    distance: float,
    *,
    snap: bool = True,
) -> Pose:
    """A camera ``distance`` m from ``target``, at ``azimuth`` (deg, where the camera sits as seen
    from the target) and ``elevation`` (deg above the horizontal), looking at the target.

    With ``snap`` the pitch is rounded to a multiple of 15 degrees, so the camera's own tilt steps
    reach exactly 0 and -90, and the yaw to a whole degree.
    """
    az, el = math.radians(azimuth), math.radians(elevation)
    eye = np.asarray(target) + distance * np.array(
        [math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)]
    )
    d = np.asarray(target) - eye
    yaw = math.degrees(math.atan2(d[1], d[0]))
    pitch = math.degrees(math.atan2(d[2], math.hypot(d[0], d[1])))
    if snap:
        pitch = 15.0 * round(pitch / 15.0)
        yaw = float(round(yaw))
    yaw = (yaw + 180.0) % 360.0 - 180.0
    return Pose(x=r6(eye[0]), y=r6(eye[1]), z=r6(max(eye[2], 0.05)), yaw=r6(yaw), pitch=r6(pitch))


class PlacementError(RuntimeError):
    """A draw left no room for what the scene needs (a crowded region, a mirror that shows the
    wrong things). Not a bug: :meth:`TaskFamily.draft_design` draws again from the same generator."""


def separated(
    xy: tuple[float, float], radius: float, placed: list[tuple[tuple[float, float], float]], gap: float
) -> bool:
    """Whether a disc at ``xy`` keeps ``gap`` metres from every placed disc."""
    return all(math.hypot(xy[0] - p[0], xy[1] - p[1]) >= radius + r + gap for p, r in placed)


def scatter(
    rng: np.random.Generator,
    radii: list[float],
    *,
    region: tuple[float, float, float, float] = (-0.55, 0.55, -0.4, 0.4),
    placed: list[tuple[tuple[float, float], float]] | None = None,
    gap: float = 0.04,
    tries: int = 400,
) -> list[tuple[float, float]]:
    """Non-overlapping positions in ``region`` (xmin, xmax, ymin, ymax) for discs of ``radii``."""
    taken = list(placed or [])
    out: list[tuple[float, float]] = []
    for r in radii:
        for _ in range(tries):
            xy = (
                float(rng.uniform(region[0] + r, region[1] - r)),
                float(rng.uniform(region[2] + r, region[3] - r)),
            )
            if separated(xy, r, taken, gap):
                break
        else:
            raise PlacementError("could not place objects without overlap; region too small")
        taken.append((xy, r))
        out.append(xy)
    return out


def scatter_distractors(
    rng: np.random.Generator,
    colors: list[str],
    categories: list[str],
    placed: list[tuple[tuple[float, float], float]],
    *,
    radius: float,
    gap: float,
    scale: float | tuple[float, float],
) -> list[ObjectSpec]:
    """One distractor per colour, of a category drawn from ``categories``, away from ``placed``.

    Each takes a free disc of ``radius`` (added to ``placed``); ``scale`` is its size, or the
    range its size is drawn from. Draws from ``rng`` in the order position, category, size.
    """
    out = []
    for col in colors:
        (xy,) = scatter(rng, [radius], placed=placed, gap=gap)
        placed.append((xy, radius))
        category = pick(rng, categories)
        size = scale if isinstance(scale, float) else float(rng.uniform(*scale))
        out.append(make_object(category, col, xy, size, role="distractor"))
    return out


def unit(angle_deg: float) -> np.ndarray:
    """Horizontal unit vector at ``angle_deg`` from +x."""
    a = math.radians(angle_deg)
    return np.array([math.cos(a), math.sin(a)])


def yes_no_contract() -> Any:
    """The yes/no answer contract."""
    from eviseek.types import AnswerContract

    return AnswerContract(kind="yes_no", options=["yes", "no"], format_hint="Answer yes or no.")


def option_contract(options: list[str], hint: str = "") -> Any:
    """An option contract."""
    from eviseek.types import AnswerContract

    return AnswerContract(kind="option", options=options, format_hint=hint)
