"""The house specification: everything needed to rebuild a house from a question record.

A :class:`HouseSpec` is stored in ``Question.scene`` (as its JSON dump). Conventions: metres and
degrees; the floor is ``z = 0``; rooms are axis-aligned rectangles; every item's footprint is an
axis-aligned rectangle (furniture is rotated by multiples of 90 degrees only), so collisions and
the occupancy grid are exact.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from eviseek.types import Pose

Rect = tuple[float, float, float, float]
"""``(x0, y0, x1, y1)`` with ``x0 < x1`` and ``y0 < y1``."""


class RoomSpec(BaseModel):
    """One room: its type name (unique in the house), rectangle and surface colours."""

    name: str
    rect: Rect
    floor_rgb: tuple[float, float, float]
    wall_rgb: tuple[float, float, float]

    @property
    def centre(self) -> tuple[float, float]:
        """Centre of the room's rectangle."""
        x0, y0, x1, y1 = self.rect
        return ((x0 + x1) / 2, (y0 + y1) / 2)

    def contains(self, x: float, y: float) -> bool:
        """Whether the point lies inside the room's rectangle."""
        x0, y0, x1, y1 = self.rect
        return x0 <= x <= x1 and y0 <= y <= y1


class DoorSpec(BaseModel):
    """A doorway (an opening, no door leaf) in the wall shared by two rooms."""

    rooms: tuple[str, str]
    centre: tuple[float, float]
    axis: str
    """``x`` when the shared wall runs along x (rooms are north/south of each other), else ``y``."""
    width: float


class WallSpec(BaseModel):
    """A wall slab: the footprint rectangle, its room and the side of that room it bounds."""

    name: str
    room: str
    side: str
    """``north`` (+y), ``south``, ``east`` (+x) or ``west``."""
    rect: Rect
    height: float
    rgb: tuple[float, float, float]
    borders: str | None = None
    """The room on the other side of this slab, if any (``None``: an outside wall)."""


class ItemSpec(BaseModel):
    """A piece of furniture or a small object."""

    name: str
    """Unique in the house, e.g. ``sofa_1``."""
    category: str
    kind: str
    """``furniture`` or ``object``."""
    shape: str
    """``box``, ``cylinder`` or ``sphere``."""
    color: str
    size: tuple[float, float, float]
    """World-frame extent along x, y, z (rotations are folded into the size)."""
    position: tuple[float, float, float]
    """Centre of the bounding box."""
    room: str
    on: str | None = None
    """The furniture an object stands on (``None``: on the floor)."""
    state: str | None = None
    """A visible state the renderer draws (``on``/``off`` for a television:
    :data:`~eviseek.envs.house.catalogue.STATES`); ``None``: the category's usual look."""

    @property
    def footprint(self) -> Rect:
        """The axis-aligned floor rectangle the item covers."""
        x, y, _ = self.position
        sx, sy, _ = self.size
        return (x - sx / 2, y - sy / 2, x + sx / 2, y + sy / 2)

    @property
    def top(self) -> float:
        """Height of the item's top surface."""
        return self.position[2] + self.size[2] / 2


class HouseSpec(BaseModel):
    """A whole house: rooms, doorways, walls, items, the start pose and the camera."""

    rooms: list[RoomSpec]
    doors: list[DoorSpec] = Field(default_factory=list)
    walls: list[WallSpec] = Field(default_factory=list)
    items: list[ItemSpec] = Field(default_factory=list)
    start: Pose = Field(default_factory=Pose)
    camera_height: float = 1.5
    """Metres above the floor (ours; close to an adult's eye height and Habitat's usual sensor)."""
    hfov: float = 90.0
    """Horizontal field of view in degrees (Habitat's default)."""

    @classmethod
    def from_question(cls, scene: dict[str, object]) -> HouseSpec:
        """Validate a question's ``scene`` record (a private copy)."""
        return cls.model_validate(scene)

    @property
    def bounds(self) -> Rect:
        """The rectangle enclosing every room."""
        xs0, ys0, xs1, ys1 = zip(*(r.rect for r in self.rooms), strict=True)
        return (min(xs0), min(ys0), max(xs1), max(ys1))

    def room(self, name: str) -> RoomSpec:
        """The room called ``name``; ``KeyError`` naming the rooms otherwise."""
        for r in self.rooms:
            if r.name == name:
                return r
        raise KeyError(f"no room {name!r}; rooms: {', '.join(r.name for r in self.rooms)}")

    def room_at(self, x: float, y: float) -> str | None:
        """The room containing the point (``None`` outside the house)."""
        for r in self.rooms:
            if r.contains(x, y):
                return r.name
        return None

    def item(self, name: str) -> ItemSpec:
        """The item called ``name``."""
        for it in self.items:
            if it.name == name:
                return it
        raise KeyError(f"no item {name!r}")

    def neighbours(self, room: str) -> list[str]:
        """Rooms reachable from ``room`` through one doorway, sorted."""
        out = {d.rooms[1] if d.rooms[0] == room else d.rooms[0] for d in self.doors if room in d.rooms}
        return sorted(out)

    def routes(self, start: str, goal: str, limit: int | None = None) -> list[list[str]]:
        """Every doorway route (no room twice) from ``start`` to ``goal``, shortest first."""
        found: list[list[str]] = []

        def walk(path: list[str]) -> None:
            if path[-1] == goal:
                found.append(path)
                return
            for nxt in self.neighbours(path[-1]):
                if nxt not in path:
                    walk([*path, nxt])

        walk([start])
        found.sort(key=lambda r: (len(r), r))
        return found if limit is None else found[:limit]

    def obstacles(self) -> list[tuple[str, Rect]]:
        """Footprints that block walking: wall slabs and items standing on the floor."""
        out: list[tuple[str, Rect]] = [(w.name, w.rect) for w in self.walls]
        out += [(it.name, it.footprint) for it in self.items if it.on is None]
        return out
