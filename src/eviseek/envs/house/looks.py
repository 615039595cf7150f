"""How each catalogue category looks: furniture and objects built from several parts (ours).

A house is still decided by its :class:`~eviseek.envs.house.spec.HouseSpec`: every item keeps one
axis-aligned bounding box (its footprint blocks walking, objects stand on its top). This module
only says how the box is *drawn*, so a camera sees a bed with a headboard and pillows rather than
a slab, a lamp with a stem and a shade rather than a cylinder. Each category has one look; size
comes from the item's box and the main colour from ``ItemSpec.color``, so both vary while the look
stays recognisable.

Parts are written in the item's own frame: ``u`` runs along the wall the piece stands against
(-0.5..0.5 of its width), ``v`` away from that wall (0 = back, 1 = front, in units of its depth)
and ``z`` up from its base (in units of its height; parts may rise above the box, as a headboard
does, since only the box decides collisions). Free-standing pieces and small objects face a
fixed way. Only the few parts whose roundness matters are cylinders or spheres, to keep the
renderer's triangle count, and so the speed goal, in reach.
"""

from __future__ import annotations

from dataclasses import dataclass

from eviseek.envs.house.spec import ItemSpec, Rect

RGB = tuple[float, float, float]

WOOD: RGB = (0.60, 0.48, 0.36)
"""Bed frames, table legs, shelves: one pale wood tone (never read as the colour word brown)."""
LINEN: RGB = (0.93, 0.92, 0.88)
PORCELAIN: RGB = (0.95, 0.95, 0.96)
METAL: RGB = (0.66, 0.64, 0.60)
"""A warm steel (version 4; it was (0.62, 0.63, 0.66), whose shaded faces rendered as the office
floor does, so a lamp's stem read as floor and put the lamp in an office)."""
SCREEN: RGB = (0.10, 0.13, 0.20)
PICTURE: RGB = (0.45, 0.75, 1.0)
"""A switched-on television's screen: a bright sky blue no colour word, wall or floor renders as."""
WATER: RGB = (0.55, 0.75, 0.90)
WORKTOP: RGB = (0.52, 0.50, 0.47)
"""A dark stone (version 4; it was (0.80, 0.80, 0.78), which rendered as the kitchen floor does, so
a counter's top passed for floor and hid where the counter ends)."""
CEILING: RGB = (0.96, 0.95, 0.92)
SKIRTING: RGB = (0.30, 0.24, 0.18)
SKIRTING_HEIGHT = 0.08
DOOR_HEIGHT = 2.1
"""Top of a doorway's opening; a lintel fills the wall above it (ours)."""


@dataclass(frozen=True)
class Part:
    """One drawn piece of an item, in the item's frame (see the module docstring)."""

    shape: str
    """``box``, ``cylinder`` (upright, or along ``v`` when ``axis == "v"``) or ``sphere``."""
    u: tuple[float, float]
    v: tuple[float, float]
    z: tuple[float, float]
    colour: str | RGB = "main"
    """``main`` (the item's colour), ``shade`` (the main colour darker) or an RGB."""
    axis: str = "z"


def _b(u: tuple[float, float], v: tuple[float, float], z: tuple[float, float], c: str | RGB = "main") -> Part:
    return Part("box", u, v, z, c)


def _c(
    u: tuple[float, float],
    v: tuple[float, float],
    z: tuple[float, float],
    c: str | RGB = "main",
    axis: str = "z",
) -> Part:
    return Part("cylinder", u, v, z, c, axis)


def _legs(z1: float, c: str | RGB = WOOD, w: float = 0.06, inset: float = 0.02) -> list[Part]:
    a, b = -0.5 + inset, 0.5 - inset
    return [
        _b((a, a + w), (inset, inset + w * 1.5), (0.0, z1), c),
        _b((b - w, b), (inset, inset + w * 1.5), (0.0, z1), c),
        _b((a, a + w), (1 - inset - w * 1.5, 1 - inset), (0.0, z1), c),
        _b((b - w, b), (1 - inset - w * 1.5, 1 - inset), (0.0, z1), c),
    ]


def _table(top_c: str | RGB = "main") -> list[Part]:
    return [_b((-0.5, 0.5), (0.0, 1.0), (0.9, 1.0), top_c), *_legs(0.9, WOOD, w=0.05)]


def _sofa() -> list[Part]:
    return [
        _b((-0.5, 0.5), (0.0, 1.0), (0.12, 0.55)),
        _b((-0.5, 0.5), (0.0, 0.25), (0.55, 1.0), "shade"),
        _b((-0.5, -0.41), (0.0, 1.0), (0.55, 0.78), "shade"),
        _b((0.41, 0.5), (0.0, 1.0), (0.55, 0.78), "shade"),
        _b((-0.48, 0.48), (0.0, 0.06), (0.0, 0.12), SKIRTING),
        _b((-0.48, 0.48), (0.94, 1.0), (0.0, 0.12), SKIRTING),
    ]


def _cabinet(doors: int = 2, legs: bool = True) -> list[Part]:
    base = 0.08 if legs else 0.0
    out = [_b((-0.5, 0.5), (0.0, 0.97), (base, 1.0))]
    if legs:
        out += _legs(base, SKIRTING, w=0.05)
    width = 0.96 / doors
    for k in range(doors):
        u0 = -0.48 + k * width
        out.append(_b((u0 + 0.01, u0 + width - 0.01), (0.97, 1.0), (base + 0.04, 0.96), "shade"))
        hu = u0 + width - 0.06 if k % 2 == 0 else u0 + 0.04
        out.append(_b((hu, hu + 0.02), (0.99, 1.03), (0.55, 0.75), METAL))
    return out


def _shelves(n: int, back: bool = True) -> list[Part]:
    out = [_b((-0.5, -0.46), (0.0, 1.0), (0.0, 1.0)), _b((0.46, 0.5), (0.0, 1.0), (0.0, 1.0))]
    if back:
        out.append(_b((-0.46, 0.46), (0.0, 0.06), (0.0, 1.0), "shade"))
    for k in range(n + 1):
        z0 = k / n * 0.97
        out.append(_b((-0.46, 0.46), (0.0, 1.0), (z0, z0 + 0.03)))
    return out


FURNITURE_LOOKS: dict[str, list[Part]] = {
    "sofa": _sofa(),
    "armchair": _sofa(),
    "tv stand": [
        *_cabinet(doors=2),
        _b((-0.32, 0.32), (0.0, 0.06), (2.0, 3.3), SCREEN),  # a television on the wall above
        _b((-0.34, 0.34), (0.0, 0.05), (1.96, 3.34), (0.2, 0.2, 0.22)),
    ],
    "coffee table": _table(),
    "counter": [
        _b((-0.5, 0.5), (0.0, 0.96), (0.0, 0.93)),
        *[_b((-0.48 + k * 0.24, -0.26 + k * 0.24), (0.96, 0.99), (0.06, 0.88), "shade") for k in range(4)],
        _b((-0.5, 0.5), (0.0, 1.0), (0.93, 1.0), WORKTOP),
        _b((0.12, 0.42), (0.25, 0.8), (0.94, 1.005), (0.35, 0.37, 0.40)),  # the sink's basin
        _c((0.25, 0.29), (0.08, 0.15), (1.0, 1.3), METAL),  # its tap
    ],
    "fridge": [
        _b((-0.5, 0.5), (0.0, 0.96), (0.0, 1.0)),
        _b((-0.48, 0.48), (0.96, 1.0), (0.01, 0.6), "shade"),
        _b((-0.48, 0.48), (0.96, 1.0), (0.62, 0.99), "shade"),
        _b((0.36, 0.41), (0.99, 1.06), (0.35, 0.55), METAL),
        _b((0.36, 0.41), (0.99, 1.06), (0.66, 0.86), METAL),
    ],
    "kitchen table": _table(),
    "dining table": _table(),
    "bed": [
        _b((-0.5, 0.5), (0.0, 1.0), (0.1, 0.55), WOOD),
        *_legs(0.1, WOOD, w=0.05, inset=0.0),
        _b((-0.48, 0.48), (0.04, 0.99), (0.55, 0.95), LINEN),  # mattress and sheet
        _b((-0.49, 0.49), (0.33, 1.0), (0.6, 1.02), "main"),  # the blanket
        _b((-0.42, -0.04), (0.06, 0.22), (0.95, 1.3), LINEN),  # two pillows
        _b((0.04, 0.42), (0.06, 0.22), (0.95, 1.3), LINEN),
        _b((-0.5, 0.5), (0.0, 0.04), (0.0, 2.0), WOOD),  # the headboard
    ],
    "wardrobe": _cabinet(doors=2),
    "nightstand": [
        *_cabinet(doors=1),
        _b((-0.46, 0.46), (0.97, 1.0), (0.66, 0.94), "shade"),
    ],
    "bathtub": [
        _b((-0.5, 0.5), (0.0, 1.0), (0.0, 1.0), PORCELAIN),
        _b((-0.45, 0.45), (0.1, 0.9), (0.85, 1.01), WATER),
        _c((-0.44, -0.38), (0.02, 0.1), (1.0, 1.5), METAL),
    ],
    "sink cabinet": [
        *_cabinet(doors=2, legs=False),
        _b((-0.34, 0.34), (0.15, 0.95), (1.0, 1.12), PORCELAIN),
        _b((-0.26, 0.26), (0.3, 0.85), (1.09, 1.125), (0.55, 0.6, 0.65)),
        _c((-0.03, 0.03), (0.02, 0.14), (1.0, 1.35), METAL),
    ],
    "toilet": [
        _b((-0.5, 0.5), (0.0, 0.3), (0.5, 1.0), PORCELAIN),  # the cistern
        _c((-0.42, 0.42), (0.28, 0.98), (0.0, 0.52), PORCELAIN),  # the bowl
        _c((-0.46, 0.46), (0.28, 1.0), (0.52, 0.57), (0.82, 0.82, 0.84)),  # the seat
    ],
    "sideboard": _cabinet(doors=3),
    "desk": [
        _b((-0.5, 0.5), (0.0, 1.0), (0.94, 1.0), "main"),
        _b((-0.5, -0.46), (0.0, 1.0), (0.0, 0.94), "shade"),
        _b((0.16, 0.5), (0.0, 1.0), (0.0, 0.94), "shade"),  # a drawer block
        _b((0.18, 0.48), (0.99, 1.02), (0.62, 0.9), "main"),
        _b((0.18, 0.48), (0.99, 1.02), (0.3, 0.58), "main"),
    ],
    "bookshelf": _shelves(4),
    "office chair": [
        _b((-0.5, 0.5), (0.45, 0.55), (0.0, 0.06), SCREEN),  # the star base, as a cross
        _b((-0.05, 0.05), (0.0, 1.0), (0.0, 0.06), SCREEN),
        _c((-0.05, 0.05), (0.45, 0.55), (0.06, 0.48), METAL),
        _b((-0.42, 0.42), (0.1, 0.9), (0.48, 0.56)),
        _b((-0.38, 0.38), (0.06, 0.16), (0.56, 1.0), "shade"),
    ],
    "shoe cabinet": _cabinet(doors=2),
    "coat rack": [
        _c((-0.45, 0.45), (0.05, 0.95), (0.0, 0.03), SKIRTING),
        _c((-0.04, 0.04), (0.46, 0.54), (0.0, 1.0), "main"),
        _b((-0.35, 0.35), (0.47, 0.53), (0.86, 0.89), "main"),
        _b((-0.03, 0.03), (0.15, 0.85), (0.9, 0.93), "main"),
    ],
    "washing machine": [
        _b((-0.5, 0.5), (0.0, 1.0), (0.0, 1.0), PORCELAIN),
        _b((-0.48, 0.48), (0.99, 1.01), (0.82, 0.97), "main"),  # the control strip
        _c((-0.3, 0.3), (0.97, 1.04), (0.2, 0.72), SCREEN, axis="v"),  # the round door
    ],
    "laundry shelf": _shelves(3, back=False),
}
"""Every furniture category's parts (the main colour is the item's)."""

OBJECT_LOOKS: dict[str, list[Part]] = {
    "cup": [
        _c((-0.5, 0.3), (0.1, 0.9), (0.0, 1.0)),
        _b((0.25, 0.5), (0.35, 0.65), (0.18, 0.34)),  # the handle: two arms and a grip
        _b((0.25, 0.5), (0.35, 0.65), (0.66, 0.82)),
        _b((0.38, 0.5), (0.35, 0.65), (0.18, 0.82)),
    ],
    "vase": [
        Part("sphere", (-0.5, 0.5), (0.0, 1.0), (0.0, 0.5)),
        _c((-0.22, 0.22), (0.28, 0.72), (0.4, 0.85)),
        _c((-0.34, 0.34), (0.16, 0.84), (0.85, 1.0)),  # a flared rim
    ],
    "book": [
        _b((-0.5, 0.5), (0.0, 1.0), (0.0, 0.15)),
        _b((-0.47, 0.5), (0.02, 0.98), (0.15, 0.85), LINEN),  # the pages
        _b((-0.5, 0.5), (0.0, 1.0), (0.85, 1.0)),
        _b((-0.5, -0.46), (0.0, 1.0), (0.15, 0.85)),  # the spine
    ],
    "ball": [Part("sphere", (-0.5, 0.5), (0.0, 1.0), (0.0, 1.0))],
    "box": [
        _b((-0.48, 0.48), (0.02, 0.98), (0.0, 0.85)),
        _b((-0.5, 0.5), (0.0, 1.0), (0.85, 1.0), "shade"),  # the lid
    ],
    "bottle": [
        _c((-0.5, 0.5), (0.0, 1.0), (0.0, 0.62)),
        _c((-0.32, 0.32), (0.18, 0.82), (0.62, 0.72)),  # the shoulder
        _c((-0.17, 0.17), (0.33, 0.67), (0.72, 0.94)),  # the neck
        _c((-0.2, 0.2), (0.3, 0.7), (0.94, 1.0), SCREEN),  # the cap
    ],
    "lamp": [
        _c((-0.32, 0.32), (0.18, 0.82), (0.0, 0.05), METAL),
        _c((-0.04, 0.04), (0.46, 0.54), (0.05, 0.6), METAL),
        _c((-0.5, 0.5), (0.0, 1.0), (0.55, 1.0)),  # the shade carries the colour
    ],
    "laptop": [
        _b((-0.5, 0.5), (0.0, 1.0), (0.0, 0.5)),  # the base
        _b((-0.44, 0.44), (0.3, 0.9), (0.5, 0.6), SCREEN),  # the keyboard
        _b((-0.5, 0.5), (0.0, 0.1), (0.5, 8.0)),  # the lid, open upright at the back
        _b((-0.45, 0.45), (0.1, 0.13), (1.0, 7.5), SCREEN),  # the display, facing forward
    ],
}
"""Every small object's parts (the main colour is the item's; it covers most of what shows)."""


def facing(item: ItemSpec, room: Rect) -> str:
    """The side of its room an item's back is toward: the nearest wall (``north`` for free pieces)."""
    fx0, fy0, fx1, fy1 = item.footprint
    x0, y0, x1, y1 = room
    gaps = {"south": fy0 - y0, "north": y1 - fy1, "west": fx0 - x0, "east": x1 - fx1}
    side = min(gaps, key=lambda s: gaps[s])
    return side if gaps[side] < 0.2 else "north"


def parts_of(item: ItemSpec) -> list[Part]:
    """The parts an item is drawn with (a plain box for a category without a look), in its
    visible state (a television that is on shows :data:`PICTURE` where its dark screen was)."""
    looks = FURNITURE_LOOKS if item.kind == "furniture" else OBJECT_LOOKS
    parts = looks.get(item.category, [_b((-0.5, 0.5), (0.0, 1.0), (0.0, 1.0))])
    if item.category == "tv stand" and item.state == "on":
        parts = [Part(p.shape, p.u, p.v, p.z, PICTURE, p.axis) if p.colour == SCREEN else p for p in parts]
    return parts


def place(
    part: Part, item: ItemSpec, back: str
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """World centre and world extent (x, y, z) of ``part`` of ``item`` with its back toward ``back``."""
    sx, sy, sz = item.size
    cx, cy, cz = item.position
    # Width runs along the wall, depth away from it.
    width, depth = (sx, sy) if back in ("south", "north") else (sy, sx)
    cu = (part.u[0] + part.u[1]) / 2 * width
    cv = ((part.v[0] + part.v[1]) / 2 - 0.5) * depth
    du, dv = (part.u[1] - part.u[0]) * width, (part.v[1] - part.v[0]) * depth
    z = cz - sz / 2 + (part.z[0] + part.z[1]) / 2 * sz
    dz = (part.z[1] - part.z[0]) * sz
    # (u, v) -> (x, y): the back toward ``back``, so v grows away from that wall.
    if back == "south":
        x, y, ex, ey = cx + cu, cy + cv, du, dv
    elif back == "north":
        x, y, ex, ey = cx - cu, cy - cv, du, dv
    elif back == "west":
        x, y, ex, ey = cx + cv, cy - cu, dv, du
    else:
        x, y, ex, ey = cx - cv, cy + cu, dv, du
    return (x, y, z), (ex, ey, dz)


def shade(rgb: RGB, factor: float = 0.78) -> RGB:
    """A darker tone of ``rgb`` (for a sofa's back, a wardrobe's doors)."""
    return (rgb[0] * factor, rgb[1] * factor, rgb[2] * factor)
