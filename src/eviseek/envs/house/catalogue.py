"""What a generated house is made of: room types, furniture and small objects (ours).

Every room type has its own floor and wall colour, so rooms can be told apart in an image the
way real rooms are (tiles in the bathroom, wood in the bedroom). Furniture lists say what
belongs in which room and whether small objects can stand on it. Sizes are in metres
(x along the wall the piece stands against, y away from it, z up), chosen to be plausible.
"""

from __future__ import annotations

from dataclasses import dataclass

from eviseek.envs.colors import PALETTE

COLORS: tuple[str, ...] = tuple(c for c in PALETTE if c not in ("gray", "white", "black"))
"""Colours furniture and objects are drawn from: the tabletop's chromatic colours. Gray, white and
black are left out: under the house's light from above a white face renders mid-grey and grey
ones near black, so the word would not match the pixels (and the walls, ceilings and porcelain
are near-white)."""


@dataclass(frozen=True)
class RoomType:
    """A kind of room: its name (unique within a house) and its surface colours (RGB)."""

    name: str
    floor: tuple[float, float, float]
    wall: tuple[float, float, float]
    furniture: tuple[str, ...]
    """Furniture categories that belong here, most typical first."""


@dataclass(frozen=True)
class Furniture:
    """A furniture category: size, shape and whether things can stand on it."""

    category: str
    size: tuple[float, float, float]
    shape: str = "box"
    surface: bool = False
    against_wall: bool = True


@dataclass(frozen=True)
class SmallObject:
    """A small object category."""

    category: str
    size: tuple[float, float, float]
    shape: str
    plural: str


ROOM_TYPES: dict[str, RoomType] = {
    r.name: r
    for r in (
        RoomType(
            "living room",
            (0.55, 0.42, 0.30),
            (0.86, 0.83, 0.74),
            ("sofa", "tv stand", "coffee table", "armchair"),
        ),
        RoomType("kitchen", (0.78, 0.78, 0.80), (0.70, 0.86, 0.80), ("counter", "fridge", "kitchen table")),
        RoomType("bedroom", (0.62, 0.48, 0.34), (0.80, 0.78, 0.92), ("bed", "wardrobe", "nightstand")),
        RoomType("bathroom", (0.85, 0.88, 0.92), (0.62, 0.78, 0.88), ("bathtub", "sink cabinet", "toilet")),
        RoomType("dining room", (0.45, 0.32, 0.22), (0.92, 0.82, 0.66), ("dining table", "sideboard")),
        RoomType("office", (0.38, 0.40, 0.46), (0.80, 0.88, 0.70), ("desk", "bookshelf", "office chair")),
        RoomType("hallway", (0.70, 0.62, 0.52), (0.93, 0.90, 0.84), ("shoe cabinet", "coat rack")),
        RoomType(
            "laundry room", (0.66, 0.70, 0.66), (0.90, 0.74, 0.74), ("washing machine", "laundry shelf")
        ),
    )
}
"""Room types a house draws from (names double as answers, so they are unique per house)."""

FURNITURE: dict[str, Furniture] = {
    f.category: f
    for f in (
        Furniture("sofa", (2.0, 0.9, 0.8)),
        Furniture("tv stand", (1.4, 0.45, 0.55), surface=True),
        Furniture("coffee table", (1.0, 0.6, 0.42), surface=True, against_wall=False),
        Furniture("armchair", (0.85, 0.85, 0.85)),
        Furniture("counter", (2.0, 0.6, 0.9), surface=True),
        Furniture("fridge", (0.7, 0.7, 1.8)),
        Furniture("kitchen table", (1.2, 0.8, 0.75), surface=True, against_wall=False),
        Furniture("bed", (1.6, 2.0, 0.55)),
        Furniture("wardrobe", (1.2, 0.6, 2.0)),
        Furniture("nightstand", (0.5, 0.45, 0.55), surface=True),
        Furniture("bathtub", (1.7, 0.75, 0.55)),
        Furniture("sink cabinet", (0.9, 0.5, 0.85), surface=True),
        Furniture("toilet", (0.45, 0.65, 0.75), shape="cylinder"),
        Furniture("dining table", (1.6, 0.9, 0.75), surface=True, against_wall=False),
        Furniture("sideboard", (1.6, 0.5, 0.9), surface=True),
        Furniture("desk", (1.4, 0.7, 0.75), surface=True),
        Furniture("bookshelf", (1.0, 0.35, 1.8)),
        Furniture("office chair", (0.55, 0.55, 0.95), shape="cylinder", against_wall=False),
        Furniture("shoe cabinet", (1.0, 0.4, 0.9), surface=True),
        Furniture("coat rack", (0.45, 0.45, 1.7), shape="cylinder"),
        Furniture("washing machine", (0.65, 0.65, 0.9), surface=True),
        Furniture("laundry shelf", (1.0, 0.4, 1.2), surface=True),
    )
}

SMALL_OBJECTS: dict[str, SmallObject] = {
    o.category: o
    for o in (
        SmallObject("cup", (0.1, 0.1, 0.13), "cylinder", "cups"),
        SmallObject("vase", (0.16, 0.16, 0.32), "cylinder", "vases"),
        SmallObject("book", (0.24, 0.17, 0.05), "box", "books"),
        SmallObject("ball", (0.2, 0.2, 0.2), "sphere", "balls"),
        SmallObject("box", (0.3, 0.24, 0.2), "box", "boxes"),
        SmallObject("bottle", (0.09, 0.09, 0.3), "cylinder", "bottles"),
        SmallObject("lamp", (0.22, 0.22, 0.45), "cylinder", "lamps"),
        SmallObject("laptop", (0.34, 0.24, 0.03), "box", "laptops"),
    )
}
"""Small objects placed on surfaces; the answers of object, attribute and counting questions."""

USES: dict[str, str] = {
    "cup": "drinking",
    "vase": "flowers",
    "book": "reading",
    "ball": "playing",
    "box": "storage",
    "bottle": "pouring",
    "lamp": "light",
    "laptop": "computing",
}
"""What each small object is for, in one word (ours): the canonical answers of knowledge
questions ("What is the red thing on the desk used for?"). One distinct word each, so a free-text
reply names one of them."""

SIZE_SCALES: dict[str, float] = {"small": 0.65, "big": 1.5}
"""Scale of an object an attribute question asks the size of, against its category's usual size
(ours: outside the 0.85-1.15 every other object is drawn at, so "big for a cup" is visible)."""

STATES: dict[str, tuple[str, ...]] = {"tv stand": ("on", "off")}
"""Furniture whose visible state a state question asks, and the states the renderer draws (ours:
the television above a tv stand shows a lit picture when on and a dark screen when off)."""

WALL_HEIGHT = 2.5
WALL_THICKNESS = 0.05
"""Each room draws its own wall slab, so a shared wall is two slabs back to back (0.1 m)."""
DOOR_WIDTH = 1.0
DOOR_FRAME_RGB = (0.36, 0.29, 0.22)
