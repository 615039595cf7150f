"""Helpers shared by the Specular Reflection families: a standing mirror and mirror geometry.

Not a family itself (the leading underscore keeps discovery away).
"""

from __future__ import annotations

import numpy as np

from eviseek.envs.tabletop.families._common import r6
from eviseek.envs.tabletop.scene import ObjectSpec, TableSpec, rounded, yaw_quat
from eviseek.envs.tabletop.sim.optics import MirrorPlane

THICKNESS = 0.02
BACKDROP_TOP = 0.45
"""Height (m) of a backdrop's top above the table top."""


def make_mirror(centre_xy: tuple[float, float], facing_deg: float, width: float, height: float) -> ObjectSpec:
    """A static upright mirror whose reflecting face points along ``facing_deg`` (degrees from +x)
    and whose face is centred above ``centre_xy``."""
    n = np.array([np.cos(np.radians(facing_deg)), np.sin(np.radians(facing_deg))])
    body = np.asarray(centre_xy) - n * THICKNESS / 2  # the face is the body's local +x side
    return ObjectSpec(
        name="mirror",
        shape="box",
        category="mirror",
        color="white",
        size=rounded((THICKNESS, width, height)),  # type: ignore[arg-type]
        position=(r6(body[0]), r6(body[1]), r6(height / 2)),
        orientation=yaw_quat(facing_deg),
        mass=0.0,
        movable=False,
        role="mirror",
        material="mirror",
    )


def make_backdrop(centre_xy: np.ndarray, facing_deg: float, width: float = 1.0) -> ObjectSpec:
    """A static gray wall standing across ``facing_deg``, for a mirror to show something other
    than sky behind the camera; its top is 45 cm above the table top.

    It stands on the table where any of its footprint lies over the table, and on the floor where
    all of it lies beyond the table's edge (before version 10 it hung in the air there, level with
    the table top).
    """
    table = TableSpec()
    yaw = np.radians(facing_deg)
    along = np.array([-np.sin(yaw), np.cos(yaw)]) * width / 2
    across = np.array([np.cos(yaw), np.sin(yaw)]) * THICKNESS / 2
    centre = np.asarray(centre_xy, dtype=float)
    corners = [centre + a * along + b * across for a in (-1, 1) for b in (-1, 1)]
    # The footprint is a rectangle: it misses the table's rectangle exactly when its corners all
    # lie beyond one of the table's edges (the table is axis-aligned, so that test suffices here,
    # where the footprint is 2 cm thin and the table 1.2 m deep).
    half = np.array(table.size) / 2
    off = any(all(c[k] * sign > half[k] for c in corners) for k in (0, 1) for sign in (-1, 1))
    bottom = -table.height if off else 0.0
    return ObjectSpec(
        name="gray_wall",
        shape="box",
        category="wall",
        color="gray",
        size=rounded((0.02, width, BACKDROP_TOP - bottom)),  # type: ignore[arg-type]
        position=(r6(centre_xy[0]), r6(centre_xy[1]), r6((BACKDROP_TOP + bottom) / 2)),
        orientation=yaw_quat(facing_deg),
        mass=0.0,
        movable=False,
        role="backdrop",
    )


def plane_of(mirror: ObjectSpec) -> MirrorPlane:
    """The reflecting face of a mirror spec."""
    return MirrorPlane(mirror.position, mirror.orientation, mirror.size)


def mirror_hit(plane: MirrorPlane, eye: np.ndarray, point: np.ndarray) -> np.ndarray | None:
    """Where, on the mirror's plane, ``eye`` sees the reflection of ``point`` (``None`` if the two
    are not both in front of the mirror)."""
    if plane.side(eye) <= 0 or plane.side(point) <= 0:
        return None
    image = plane.reflect_point(point)
    d_eye, d_img = plane.side(eye), plane.side(image)
    t = d_eye / (d_eye - d_img)
    return eye + t * (image - eye)


def face_margin(plane: MirrorPlane, hit: np.ndarray) -> float:
    """How far inside the reflecting area a point on the plane lies (negative: outside)."""
    rel = hit - plane.centre
    return float(min(plane.half_width - abs(rel @ plane.across), plane.half_height - abs(rel[2])))
