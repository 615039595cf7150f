"""Which bodies of a house a camera cannot see, so the renderer need not draw them (ours).

TinyRenderer culls nothing but back faces: every body in the view is rasterised, and a wall
hidden behind another is shaded too whenever it happens to be drawn first. In a house much of
that work is wasted, because rooms are closed boxes that see each other only through their
doorways. This module answers, from the house spec alone, which bodies *cannot* show in a frame;
hiding those before the render leaves every pixel of the RGB, depth and segmentation buffers
unchanged (``tests/envs/house/test_culling.py`` checks byte equality) and saves their drawing.

The test works on the floor plan, which is conservative in height (a doorway is treated as open
from floor to ceiling, the lintel included). A ray from the camera to any point of room ``S``
crosses, in order, the doorways of one simple chain of rooms from the camera's room to ``S``
(rooms are convex rectangles closed by full-height walls), so its compass direction lies inside
every one of those doorways' angular spans as seen from the camera, and inside the camera's own
horizontal span. A body is kept when its footprint reaches into that intersection for some
chain to one of its rooms; bodies of the room(s) around the camera are always kept.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from eviseek.envs import view
from eviseek.envs.house.spec import HouseSpec
from eviseek.types import Pose

Rect = tuple[float, float, float, float]
Arc = tuple[float, float]
"""Compass directions ``lo..hi`` in radians, ``hi - lo`` below pi (``lo`` may be any angle)."""

NEAR_ROOM = 0.15
"""A room counts as the camera's own when its rectangle, grown by this much (metres), holds the
camera: a camera in a doorway's 10 cm deep opening then owns both rooms (ours)."""
NEAR_DOOR = 0.3
"""A doorway closer than this to the camera opens its far room fully: seen from right beside the
opening the doorway's span nears 180 degrees and the arc arithmetic would be ill-conditioned."""
SLACK = 0.05
"""Metres added to each end of a doorway and round every footprint, and (as radians) to each arc:
a margin for rounding, since a body wrongly hidden would change the image."""
FULL: Arc = (-math.pi, math.pi)
"""Every direction (a room reached with nothing narrowing the view)."""


@dataclass(frozen=True)
class Body:
    """What the test needs of one body: its floor footprint and the rooms it belongs to."""

    name: str
    footprint: Rect
    rooms: tuple[str, ...]


def _wrap(a: float) -> float:
    """Angle in (-pi, pi]."""
    a = math.fmod(a + math.pi, 2 * math.pi)
    if a <= 0:
        a += 2 * math.pi
    return a - math.pi


def _meet(a: Arc, b: Arc) -> Arc | None:
    """The directions in both arcs, or ``None`` when they share none. Each arc is narrower than
    pi, so placing ``b`` at the turn nearest ``a``'s start is the only placement that can
    overlap, and the overlap is a single arc."""
    b0 = a[0] + _wrap(b[0] - a[0])
    lo, hi = max(a[0], b0), min(a[1], b0 + (b[1] - b[0]))
    return (lo, hi) if lo <= hi else None


def _span(x: float, y: float, points: Iterable[tuple[float, float]]) -> Arc | None:
    """The arc of directions from ``(x, y)`` covering ``points``, or ``None`` when it would not be
    narrower than pi (the caller then treats the shape as seen from every direction)."""
    angles = [math.atan2(py - y, px - x) for px, py in points]
    ref = angles[0]
    rel = [_wrap(a - ref) for a in angles]
    lo, hi = min(rel), max(rel)
    if hi - lo >= math.pi - 2 * SLACK:
        return None
    return (ref + lo - SLACK, ref + hi + SLACK)


def view_arc(pose: Pose, hfov: float, vfov: float) -> Arc | None:
    """The compass directions the camera's view can reach, or ``None`` for all of them (a view
    tilted so far that straight down or straight up is inside it)."""
    fwd, right, up = view.view_vectors(pose)
    tx, ty = math.tan(math.radians(hfov) / 2), math.tan(math.radians(vfov) / 2)
    flat_fwd = (math.cos(math.radians(pose.yaw)), math.sin(math.radians(pose.yaw)))
    points = []
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            ray = fwd + sx * tx * right + sy * ty * up
            if ray[0] * flat_fwd[0] + ray[1] * flat_fwd[1] <= 1e-6:
                return None
            points.append((pose.x + float(ray[0]), pose.y + float(ray[1])))
    return _span(pose.x, pose.y, points)


def _grown(r: Rect, by: float) -> Rect:
    return (r[0] - by, r[1] - by, r[2] + by, r[3] + by)


def _corners(r: Rect) -> list[tuple[float, float]]:
    return [(r[0], r[1]), (r[2], r[1]), (r[0], r[3]), (r[2], r[3])]


def _inside(x: float, y: float, r: Rect) -> bool:
    return r[0] <= x <= r[2] and r[1] <= y <= r[3]


def _door_distance(x: float, y: float, a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance from a point to the segment ``a``-``b``."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    t = max(0.0, min(1.0, ((x - a[0]) * dx + (y - a[1]) * dy) / (dx * dx + dy * dy)))
    return math.hypot(x - a[0] - t * dx, y - a[1] - t * dy)


class Culler:
    """Decides, per camera pose, which bodies of one house cannot show in the frame."""

    def __init__(self, spec: HouseSpec, bodies: list[Body]) -> None:
        self.spec = spec
        self.bodies = bodies
        self._rects = {r.name: r.rect for r in spec.rooms}
        self._doors = []
        for d in spec.doors:
            cx, cy = d.centre
            half = d.width / 2 + SLACK
            ends = ((cx - half, cy), (cx + half, cy)) if d.axis == "x" else ((cx, cy - half), (cx, cy + half))
            self._doors.append((d.rooms, ends))

    def reach(self, pose: Pose, hfov: float, vfov: float) -> tuple[set[str], dict[str, list[Arc]]]:
        """The camera's own rooms, and for every other room the arcs of directions in which it
        may be seen (a room with no arc cannot be seen at all)."""
        x, y = pose.x, pose.y
        home = {n for n, r in self._rects.items() if _inside(x, y, _grown(r, NEAR_ROOM))}
        for rooms, ends in self._doors:
            if _door_distance(x, y, *ends) < NEAR_DOOR:
                home.update(rooms)
        arcs: dict[str, list[Arc]] = {}
        start = view_arc(pose, hfov, vfov)

        def walk(room: str, arc: Arc | None, path: set[str]) -> None:
            # ``arc``: the directions still open on the way to ``room`` (``None``: all of them).
            for rooms, ends in self._doors:
                if room not in rooms:
                    continue
                nxt = rooms[1] if rooms[0] == room else rooms[0]
                if nxt in home or nxt in path:
                    continue
                door = _span(x, y, ends)
                if door is None or arc is None:
                    through = arc if door is None else door
                else:
                    through = _meet(arc, door)
                    if through is None:
                        continue  # the doorway lies outside every direction still open
                arcs.setdefault(nxt, []).append(through if through is not None else FULL)
                walk(nxt, through, path | {nxt})

        for room in sorted(home):
            walk(room, start, set(home))
        return home, arcs

    def hidden(self, pose: Pose, hfov: float, vfov: float) -> set[str]:
        """Names of the bodies that cannot show from ``pose`` (none when the camera stands outside
        every room, where the doorway argument does not hold: say, a view of the whole house)."""
        home, arcs = self.reach(pose, hfov, vfov)
        if not home:
            return set()
        out = set()
        for body in self.bodies:
            if not self._may_show(body, pose, home, arcs):
                out.add(body.name)
        return out

    def _may_show(self, body: Body, pose: Pose, home: set[str], arcs: dict[str, list[Arc]]) -> bool:
        if any(r in home for r in body.rooms):
            return True
        fp = _grown(body.footprint, SLACK)
        if _inside(pose.x, pose.y, fp):
            return True
        seen = _span(pose.x, pose.y, _corners(fp))
        for room in body.rooms:
            for arc in arcs.get(room, []):
                if seen is None or arc == FULL or _meet(arc, seen) is not None:
                    return True
        return False
