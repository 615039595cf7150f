"""Seeded generation of a house: rooms on a 2-row grid, doorways, wall slabs, furniture, objects.

Everything is drawn from one numpy ``Generator`` in a fixed order, and every float is rounded,
so a seed gives the same :class:`~eviseek.envs.house.spec.HouseSpec` byte for byte. Doorways
form a random spanning tree over neighbouring rooms (every room is reachable) plus, sometimes, one
extra doorway (a loop). Furniture stands against walls or free in the room, never in front of a
doorway, and the house is checked on the occupancy grid to be walkable from every room to every
other; a draw that is not is redrawn.
"""

from __future__ import annotations

import numpy as np

from eviseek.envs.house.catalogue import (
    COLORS,
    DOOR_WIDTH,
    FURNITURE,
    ROOM_TYPES,
    SMALL_OBJECTS,
    WALL_HEIGHT,
    WALL_THICKNESS,
)
from eviseek.envs.house.spec import DoorSpec, HouseSpec, ItemSpec, Rect, RoomSpec, WallSpec

MAX_FURNISH_TRIES = 12


def _r(v: float, nd: int = 3) -> float:
    return round(float(v), nd) + 0.0


def _overlap(a: Rect, b: Rect, margin: float = 0.0) -> bool:
    return not (
        a[2] + margin <= b[0] or b[2] + margin <= a[0] or a[3] + margin <= b[1] or b[3] + margin <= a[1]
    )


def _rooms(rng: np.random.Generator, n_rooms: int) -> list[RoomSpec]:
    cols = n_rooms // 2
    widths = np.round(rng.uniform(3.4, 4.6, size=cols), 1)
    heights = np.round(rng.uniform(3.4, 4.6, size=2), 1)
    xs = np.concatenate([[0.0], np.cumsum(widths)])
    ys = np.concatenate([[0.0], np.cumsum(heights)])
    names = [str(n) for n in rng.choice(sorted(ROOM_TYPES), size=n_rooms, replace=False)]
    rooms = []
    for k, name in enumerate(names):
        r, c = divmod(k, cols)
        rt = ROOM_TYPES[name]
        rooms.append(
            RoomSpec(
                name=name,
                rect=(_r(xs[c]), _r(ys[r]), _r(xs[c + 1]), _r(ys[r + 1])),
                floor_rgb=rt.floor,
                wall_rgb=rt.wall,
            )
        )
    return rooms


def _doors(rng: np.random.Generator, rooms: list[RoomSpec], cols: int) -> list[DoorSpec]:
    edges: list[tuple[int, int]] = []
    for k in range(len(rooms)):
        r, c = divmod(k, cols)
        if c + 1 < cols:
            edges.append((k, k + 1))
        if r == 0:
            edges.append((k, k + cols))
    order = [edges[int(i)] for i in rng.permutation(len(edges))]
    parent = list(range(len(rooms)))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    chosen, spare = [], []
    for a, b in order:
        if find(a) != find(b):
            parent[find(a)] = find(b)
            chosen.append((a, b))
        else:
            spare.append((a, b))
    if spare and rng.random() < 0.5:
        chosen.append(spare[0])
    doors = []
    for a, b in sorted(chosen):
        ra, rb = rooms[a], rooms[b]
        if b == a + 1:  # side by side: the shared wall runs along y at x = ra.rect[2]
            lo, hi = max(ra.rect[1], rb.rect[1]), min(ra.rect[3], rb.rect[3])
            t = rng.uniform(lo + 0.5 + DOOR_WIDTH / 2, hi - 0.5 - DOOR_WIDTH / 2)
            doors.append(
                DoorSpec(rooms=(ra.name, rb.name), centre=(ra.rect[2], _r(t, 2)), axis="y", width=DOOR_WIDTH)
            )
        else:  # one above the other: the shared wall runs along x at y = ra.rect[3]
            lo, hi = max(ra.rect[0], rb.rect[0]), min(ra.rect[2], rb.rect[2])
            t = rng.uniform(lo + 0.5 + DOOR_WIDTH / 2, hi - 0.5 - DOOR_WIDTH / 2)
            doors.append(
                DoorSpec(rooms=(ra.name, rb.name), centre=(_r(t, 2), ra.rect[3]), axis="x", width=DOOR_WIDTH)
            )
    return doors


def _walls(rooms: list[RoomSpec], doors: list[DoorSpec]) -> list[WallSpec]:
    t = WALL_THICKNESS
    walls = []
    for room in rooms:
        x0, y0, x1, y1 = room.rect
        sides = {
            "south": ("x", y0, (x0, x1), lambda a, b, y=y0: (a, y, b, y + t)),
            "north": ("x", y1, (x0, x1), lambda a, b, y=y1: (a, y - t, b, y)),
            "west": ("y", x0, (y0, y1), lambda a, b, x=x0: (x, a, x + t, b)),
            "east": ("y", x1, (y0, y1), lambda a, b, x=x1: (x - t, a, x, b)),
        }
        for side, (axis, at, (lo, hi), make) in sides.items():
            gaps = []
            for d in doors:
                if room.name in d.rooms and d.axis == axis:
                    along, across = (d.centre[0], d.centre[1]) if axis == "x" else (d.centre[1], d.centre[0])
                    if abs(across - at) < 1e-6:
                        gaps.append((along - d.width / 2, along + d.width / 2))
            other = None
            for o in rooms:
                if o.name == room.name:
                    continue
                ox0, oy0, ox1, oy1 = o.rect
                touches = (
                    (side == "north" and abs(oy0 - y1) < 1e-6 and ox0 < x1 and ox1 > x0)
                    or (side == "south" and abs(oy1 - y0) < 1e-6 and ox0 < x1 and ox1 > x0)
                    or (side == "east" and abs(ox0 - x1) < 1e-6 and oy0 < y1 and oy1 > y0)
                    or (side == "west" and abs(ox1 - x0) < 1e-6 and oy0 < y1 and oy1 > y0)
                )
                if touches:
                    other = o.name
            start = lo
            pieces = []
            for g0, g1 in sorted(gaps):
                pieces.append((start, g0))
                start = g1
            pieces.append((start, hi))
            for k, (a, b) in enumerate(pieces):
                if b - a < 1e-3:
                    continue
                rect = tuple(_r(v) for v in make(a, b))
                walls.append(
                    WallSpec(
                        name=f"wall:{room.name}:{side}:{k}",
                        room=room.name,
                        side=side,
                        rect=rect,  # type: ignore[arg-type]
                        height=WALL_HEIGHT,
                        rgb=room.wall_rgb,
                        borders=other,
                    )
                )
    return walls


def _door_zones(doors: list[DoorSpec]) -> list[Rect]:
    """Rectangles in front of each doorway (both sides) kept free of furniture."""
    zones = []
    for d in doors:
        cx, cy = d.centre
        half, depth = d.width / 2 + 0.15, 1.1
        if d.axis == "x":
            zones.append((cx - half, cy - depth, cx + half, cy + depth))
        else:
            zones.append((cx - depth, cy - half, cx + depth, cy + half))
    return zones


def _furnish_room(
    rng: np.random.Generator, room: RoomSpec, zones: list[Rect], counters: dict[str, int]
) -> list[ItemSpec]:
    x0, y0, x1, y1 = room.rect
    t = WALL_THICKNESS
    items: list[ItemSpec] = []
    for category in ROOM_TYPES[room.name].furniture:
        f = FURNITURE[category]
        # One look per category, its size varied (ours: +-10 %, so pieces still fit their rooms).
        k = float(rng.uniform(0.9, 1.1))
        size = (f.size[0] * k, f.size[1] * k, f.size[2] * k)
        for _ in range(20):
            if f.against_wall:
                side = ["north", "south", "east", "west"][int(rng.integers(4))]
                along_x = side in ("north", "south")
                sx, sy = (size[0], size[1]) if along_x else (size[1], size[0])
                gap = t + 0.02
                if along_x:
                    if x1 - x0 - 2 * gap < sx + 0.01:
                        continue
                    cx = rng.uniform(x0 + gap + sx / 2, x1 - gap - sx / 2)
                    cy = y1 - gap - sy / 2 if side == "north" else y0 + gap + sy / 2
                else:
                    if y1 - y0 - 2 * gap < sy + 0.01:
                        continue
                    cy = rng.uniform(y0 + gap + sy / 2, y1 - gap - sy / 2)
                    cx = x1 - gap - sx / 2 if side == "east" else x0 + gap + sx / 2
            else:
                turned = bool(rng.integers(2))
                sx, sy = (size[1], size[0]) if turned else (size[0], size[1])
                m = 0.9
                if x1 - x0 - 2 * m < sx + 0.01 or y1 - y0 - 2 * m < sy + 0.01:
                    continue
                cx = rng.uniform(x0 + m + sx / 2, x1 - m - sx / 2)
                cy = rng.uniform(y0 + m + sy / 2, y1 - m - sy / 2)
            cx, cy = _r(cx, 2), _r(cy, 2)
            fp = (cx - sx / 2, cy - sy / 2, cx + sx / 2, cy + sy / 2)
            if any(_overlap(fp, z) for z in zones) or any(_overlap(fp, it.footprint, 0.45) for it in items):
                continue
            counters[category] = counters.get(category, 0) + 1
            items.append(
                ItemSpec(
                    name=f"{category.replace(' ', '_')}_{counters[category]}",
                    category=category,
                    kind="furniture",
                    shape=f.shape,
                    color=str(COLORS[int(rng.integers(len(COLORS)))]),
                    size=(_r(sx), _r(sy), _r(size[2])),
                    position=(cx, cy, _r(size[2] / 2)),
                    room=room.name,
                )
            )
            break
    return items


def place_object(
    rng: np.random.Generator,
    spec: HouseSpec,
    category: str,
    color: str,
    surface: ItemSpec,
    counters: dict[str, int] | None = None,
    *,
    scale: float | None = None,
) -> ItemSpec | None:
    """A new small object on ``surface`` clear of what already stands there (``None`` if no room).

    ``scale``: its size against the category's (default: drawn from 0.85-1.15). The caller
    appends it to ``spec.items``.
    """
    obj = SMALL_OBJECTS[category]
    k = float(rng.uniform(0.85, 1.15))  # size varied, the look kept (ours)
    k = k if scale is None else scale
    sx, sy, sz = (_r(v * k) for v in obj.size)
    fx0, fy0, fx1, fy1 = surface.footprint
    if fx1 - fx0 < sx + 0.1 or fy1 - fy0 < sy + 0.1:
        return None
    others = [it.footprint for it in spec.items if it.on == surface.name]
    for _ in range(20):
        cx = _r(rng.uniform(fx0 + 0.05 + sx / 2, fx1 - 0.05 - sx / 2), 2)
        cy = _r(rng.uniform(fy0 + 0.05 + sy / 2, fy1 - 0.05 - sy / 2), 2)
        fp = (cx - sx / 2, cy - sy / 2, cx + sx / 2, cy + sy / 2)
        if any(_overlap(fp, o, 0.04) for o in others):
            continue
        counters = counters if counters is not None else _counters(spec)
        counters[category] = counters.get(category, 0) + 1
        name = f"{category}_{counters[category]}"
        while any(it.name == name for it in spec.items):
            counters[category] += 1
            name = f"{category}_{counters[category]}"
        return ItemSpec(
            name=name,
            category=category,
            kind="object",
            shape=obj.shape,
            color=color,
            size=(sx, sy, sz),
            position=(cx, cy, _r(surface.top + sz / 2)),
            room=surface.room,
            on=surface.name,
        )
    return None


def _counters(spec: HouseSpec) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in spec.items:
        key = it.category
        out[key] = out.get(key, 0) + 1
    return out


def surfaces(spec: HouseSpec, room: str | None = None) -> list[ItemSpec]:
    """Furniture small objects can stand on (in ``room`` if given)."""
    return [
        it
        for it in spec.items
        if it.kind == "furniture" and FURNITURE[it.category].surface and (room is None or it.room == room)
    ]


def walkable(spec: HouseSpec) -> bool:
    """Whether every room can be reached on foot from every other (on the occupancy grid)."""
    from eviseek.envs.house.grid import OccupancyGrid

    grid = OccupancyGrid(spec)
    first = spec.rooms[0].centre
    try:
        field = grid.distance_field(*first)
    except ValueError:
        return False
    for room in spec.rooms:
        x0, y0, x1, y1 = room.rect
        i0, j0 = grid.cell(x0, y0)
        i1, j1 = grid.cell(x1, y1)
        if not np.isfinite(field[i0 : i1 + 1, j0 : j1 + 1]).any():
            return False
    return all(np.isfinite(field[grid.cell(*d.centre)]) for d in spec.doors)


def generate_house(
    rng: np.random.Generator, n_rooms: int = 6, objects_per_room: tuple[int, int] = (1, 3)
) -> HouseSpec:
    """A furnished, walkable house of ``n_rooms`` (4, 6 or 8) rooms drawn from ``rng``."""
    if n_rooms not in (4, 6, 8):
        raise ValueError(f"n_rooms must be 4, 6 or 8 (two rows of rooms), got {n_rooms}")
    rooms = _rooms(rng, n_rooms)
    doors = _doors(rng, rooms, n_rooms // 2)
    walls = _walls(rooms, doors)
    zones = _door_zones(doors)
    spec = HouseSpec(rooms=rooms, doors=doors, walls=walls)
    for _ in range(MAX_FURNISH_TRIES):
        counters: dict[str, int] = {}
        items = [it for room in rooms for it in _furnish_room(rng, room, zones, counters)]
        spec = HouseSpec(rooms=rooms, doors=doors, walls=walls, items=items)
        if walkable(spec):
            break
    else:
        spec = HouseSpec(rooms=rooms, doors=doors, walls=walls)  # bare rooms are always walkable
    counters = _counters(spec)
    cats = sorted(SMALL_OBJECTS)
    for room in rooms:
        tops = surfaces(spec, room.name)
        if not tops:
            continue
        for _ in range(int(rng.integers(objects_per_room[0], objects_per_room[1] + 1))):
            top = tops[int(rng.integers(len(tops)))]
            cat = cats[int(rng.integers(len(cats)))]
            color = str(COLORS[int(rng.integers(len(COLORS)))])
            obj = place_object(rng, spec, cat, color, top, counters)
            if obj is not None:
                spec.items.append(obj)
    return spec
