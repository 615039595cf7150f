"""Reading houses from pixels: which room a view is in, which rooms show through doorways, which
small objects stand in view (by colour and shape), and what that says about a house question.

Everything here works on the RGB pixels the agents attach and on the question text; nothing
touches the simulator. The looks it compares against were measured once on houses from seeds no
split uses:

* each room type's floor colour (floors are flat, so one colour each under the house's light;
  seeds 9100-9105, ``scripts/house_reference_calibration.py``);
* each small object's shape inside its colour blob (:mod:`eviseek.models.reference.house_objects`:
  widths at top, middle and bottom, holes and dark parts, what shows below it, its size in metres;
  seeds 9200-9205, ``scripts/house_object_calibration.py``).

A view is then summarised as: the room under the camera (the floor colour filling the bottom of
the frame), the other rooms whose floors show, the doorways in view (two floors that meet, one
directly beyond the other: walls are opaque, so only an open doorway lets them touch; a room
seen through two aligned doorways meets its neighbour's floor, not the camera room's), and the
small coloured blobs below the horizon, each with the category its shape fits best, or none.
Blobs too small to read with confidence are marked far, and the steering walks up to them before
a demand counts as covered. Answers combine the summaries of every attached view (see
:func:`solve_house`); a Long-Term Navigation answer chains the doorways seen from the start room
to the goal. Steering (:func:`goal_x`, :func:`steer`) heads for the doorway on the known route to
the target room, turning in whole 30-degree turns only when the goal lies more than 20 degrees
off centre; the rooms entered and doorways seen are kept as a :class:`HouseMap` in the working
memory's notes. It is a reference player, not a good one: a piece of furniture
far away can pass for a small object, and an object in front of furniture of its own colour is
lost in it.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from eviseek.models.reference import house_express, house_objects
from eviseek.models.reference.verdict import Verdict
from eviseek.models.reference.vision import View

FLOOR_LOOKS: dict[str, tuple[int, int, int]] = {
    "hallway": (182, 161, 134),
    "living room": (143, 109, 77),
    "kitchen": (202, 202, 208),
    "laundry room": (171, 182, 171),
    "dining room": (116, 82, 57),
    "office": (98, 104, 119),
    "bathroom": (220, 229, 239),
    "bedroom": (161, 124, 87),
}
"""Median rendered floor colour per room type (seeds 9100-9105, 24 views per house)."""
FLOOR_TOLERANCE = 9
"""Largest per-channel difference for a pixel to count as a floor colour."""
ROOM_MIN_SHARE = 0.15
"""Share of the bottom band a floor colour must fill to say the camera stands in that room."""
ROOM_FALLBACK_SHARE = 0.04
"""With no floor at the bottom of the frame, the floor filling this share of it names the room."""
OTHER_ROOM_MIN_PIXELS = 150
"""Pixels of another room's floor that count as seeing that room (about 0.2 % of 320x240; scaled
to the frame's area for other sizes)."""
DOOR_GAP_ROWS = 2
"""Rows (at 240 px height; scaled) two floors may lie apart in one column and still meet: a
seam of shading where two floor slabs join under a doorway."""
DOOR_MIN_COLUMNS = 10
"""Adjacent columns (at 320 px width; scaled) over which two floors must meet, without a break,
to show a doorway: a doorway 5 m away spans about 30. Shorter or broken runs are furniture
whose colour passes for a floor (dark table legs, a pale cabinet side) standing on a floor."""
HFOV_DEGREES = 90.0
"""The house camera's horizontal field of view (``HouseSpec.hfov``): turns bearings into pixels."""
TURN_DEGREES = 30.0
"""One turn of the navigation interface (the EviSeek paper's Table 7)."""
TURN_THRESHOLD = 20.0
"""Bearing (degrees off the view's centre) past which the policy turns toward a goal. Above half
a turn (15), so a turn can never overshoot into the opposite band: the goal ends within 15
degrees of the centre after turning, short of this threshold, and the policy walks instead of
turning back (no left-right flip-flop at a doorway)."""

OBJECT_MIN_AREA = house_objects.MIN_AREA
FAR_CONFIDENCE = 0.6
"""Confidence of an answer read only off small, far blobs: below the coverage bar (0.9), so the
seeker walks up to them before the demand counts as covered."""
OBJECT_MAX_SIDE = 0.3
"""Blobs taller or wider than this share of the frame are furniture, not small objects."""

PLURALS = {
    "cups": "cup",
    "vases": "vase",
    "books": "book",
    "balls": "ball",
    "boxes": "box",
    "bottles": "bottle",
    "lamps": "lamp",
    "laptops": "laptop",
}


@dataclass
class Seen:
    """A small object in one view."""

    colour: str
    category: str
    fit: float
    """Distance of its silhouette from the category's (smaller is surer)."""
    area: int
    x: float
    """Horizontal centre, as a share of the frame width."""
    room: str | None = None
    """The room whose floor shows just below it (the floor in front of what it stands on)."""
    near: bool = True
    """Whether it was big enough in the picture to read with confidence (else: walk closer)."""
    scale: float = 0.0
    """Log of its size against its category's usual size (:func:`house_express.size_scale`)."""
    surface: float | None = None
    """Estimated height (metres) of what it stands on (:func:`house_express.surface_height`)."""


@dataclass
class HouseView:
    """One view of a house, summarised."""

    room: str | None
    rooms: dict[str, int] = field(default_factory=dict)
    """Floor pixels of every room type in view (the camera's own room included)."""
    objects: list[Seen] = field(default_factory=list)
    floor_x: dict[str, float] = field(default_factory=dict)
    """Horizontal centre (share of width) of each other room's floor in view."""
    unread: list[Seen] = field(default_factory=list)
    """Small colour blobs too far away to read (no category): worth walking closer to."""
    links: dict[frozenset[str], int] = field(default_factory=dict)
    """Pairs of rooms whose floors meet in the picture (one floor directly beyond the other in
    some columns), with the number of such columns: a doorway between the two. Rooms seen through
    two aligned doorways meet only their neighbour's floor, never the camera room's."""
    door_x: dict[str, float] = field(default_factory=dict)
    """For each room whose floor meets the camera room's floor: the horizontal centre (share of
    the width) of the columns where they meet, i.e. where the doorway is."""


def _scaled(n: float, size: int, reference: int) -> int:
    return max(1, round(n * size / reference))


def floor_links(label: np.ndarray) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], float]]:
    """Where two floors meet in a picture of floor labels (:func:`floor_labels`).

    In every column, reading down the picture, a floor pixel followed (within a seam of
    :data:`DOOR_GAP_ROWS`) by another room's floor pixel is one meeting: the upper floor lies just
    beyond the lower one. Walls are full height and opaque, so two floors meet like this only
    across an open doorway. Returns, per ordered pair ``(near, far)`` of label indices, the width
    in columns of the widest unbroken run where they meet and that run's mean column (share of
    the width)."""
    h, w = label.shape
    gap = _scaled(DOOR_GAP_ROWS, h, 240)
    cols, rows = np.nonzero(label.T >= 0)  # column-major: down each column in turn
    if cols.size < 2:
        return {}, {}
    labs = label[rows, cols]
    meet = (cols[1:] == cols[:-1]) & (rows[1:] - rows[:-1] <= gap) & (labs[1:] != labs[:-1])
    far, near, where = labs[:-1][meet], labs[1:][meet], cols[:-1][meet]
    n_labels = len(FLOOR_LOOKS)
    key = (near * n_labels + far) * w + where
    uniq = np.unique(key)
    pair, col = uniq // w, uniq % w
    counts: dict[tuple[int, int], int] = {}
    centre: dict[tuple[int, int], float] = {}
    for k in np.unique(pair):
        at = col[pair == k]  # sorted
        # The longest run of columns with no break of more than one column.
        breaks = np.nonzero(np.diff(at) > 2)[0]
        starts = np.concatenate([[0], breaks + 1])
        ends = np.concatenate([breaks, [at.size - 1]])
        best = int(np.argmax(at[ends] - at[starts]))
        run = at[starts[best] : ends[best] + 1]
        counts[(int(k) // n_labels, int(k) % n_labels)] = int(run[-1] - run[0] + 1)
        centre[(int(k) // n_labels, int(k) % n_labels)] = float(run.mean() / w)
    return counts, centre


def floor_labels(rgb: np.ndarray) -> np.ndarray:
    """Per pixel: the index (into :data:`FLOOR_LOOKS`) of the room type whose floor it shows, or -1.

    Some walls and furniture are painted in floor colours, so a colour match alone is not
    floor. With a level camera, floor lies below the horizon (the middle row), and never reaches
    it in a house (12 m away it is still some 7 degrees below); a run of a floor colour that
    crosses the middle row is a wall seen close up, and is not floor."""
    px = rgb.astype(np.int16)
    protos = np.array(list(FLOOR_LOOKS.values()), dtype=np.int16)
    diff = np.abs(px[:, :, None, :] - protos[None, None, :, :]).max(axis=3)
    label = np.where(diff.min(axis=2) <= FLOOR_TOLERANCE, diff.argmin(axis=2), -1)
    mid = label.shape[0] // 2
    at_horizon = label[mid]
    same = label[mid:] == at_horizon[None, :]
    run = np.where(same.all(axis=0), same.shape[0], np.argmin(same, axis=0))  # rows from mid
    rows = np.arange(label.shape[0])[:, None]
    wall = (rows < mid) | ((at_horizon[None, :] >= 0) & (rows < mid + run[None, :]))
    return np.where(wall, -1, label)


def labels_of(view: View) -> np.ndarray:
    """:func:`floor_labels` of ``view``'s pixels, computed once per view (the room reading, the
    doorway placing and the open-floor steering all read them)."""
    assert view.rgb is not None
    hit = view.__dict__.get("_floor_labels")
    if isinstance(hit, np.ndarray):
        return hit
    out = floor_labels(view.rgb)
    view.__dict__["_floor_labels"] = out
    return out


def read_view(view: View) -> HouseView:
    """The room under the camera, the floors in view and the small objects in ``view``."""
    assert view.rgb is not None
    hit = view.__dict__.get("_house")
    if isinstance(hit, HouseView):
        return hit
    h, w = view.rgb.shape[:2]
    names = list(FLOOR_LOOKS)
    label = labels_of(view)
    counts = np.bincount(label[label >= 0].ravel(), minlength=len(names))
    rooms = {names[i]: int(c) for i, c in enumerate(counts) if c > 0}
    band = label[int(h * 0.8) :, w // 4 : 3 * w // 4]
    band_counts = np.bincount(band[band >= 0].ravel(), minlength=len(names))
    room = None
    if band_counts.max(initial=0) >= ROOM_MIN_SHARE * band.size:
        room = names[int(band_counts.argmax())]
    elif counts.max(initial=0) >= ROOM_FALLBACK_SHARE * h * w:
        # Furniture fills the bottom of the frame: the floor that shows most is most likely ours.
        room = names[int(counts.argmax())]
    floor_x: dict[str, float] = {}
    min_pixels = _scaled(OTHER_ROOM_MIN_PIXELS, h * w, 320 * 240)
    for i, n in enumerate(names):
        if n != room and counts[i] >= min_pixels:
            xs = np.nonzero(label == i)[1]
            floor_x[n] = float(xs.mean() / w)
    met, met_x = floor_links(label)
    min_cols = _scaled(DOOR_MIN_COLUMNS, w, 320)
    links: dict[frozenset[str], int] = {}
    door_x: dict[str, float] = {}
    for (near_i, far_i), n_cols in met.items():
        if n_cols < min_cols or counts[near_i] < min_pixels or counts[far_i] < min_pixels:
            continue
        key = frozenset((names[near_i], names[far_i]))
        links[key] = links.get(key, 0) + n_cols
        if names[near_i] == room:
            door_x[names[far_i]] = met_x[(near_i, far_i)]
    objects: list[Seen] = []
    unread: list[Seen] = []
    per_px = house_objects.area_scale(w)  # the area thresholds are set at 320 px width
    for colour, blobs in view.blobs.items():
        for b in blobs:
            if (
                b.area < OBJECT_MIN_AREA * per_px
                or b.height > OBJECT_MAX_SIDE * h
                or b.width > OBJECT_MAX_SIDE * w
            ):
                continue
            if b.top < h * 0.45 or b.bottom >= h:  # above the horizon or cut off: not on a surface
                continue
            below = label[b.bottom :, b.left : b.left + b.width]
            on = None
            for row in below:
                hits = row[row >= 0]
                if hits.size:
                    on = names[int(np.bincount(hits).argmax())]
                    break
            x = b.centroid[0] / w
            near = b.area >= house_objects.NEAR_AREA * per_px
            feats = house_objects.features(view, b, label >= 0)
            cat, fit = house_objects.recognise_x(feats)
            if cat is not None:
                scale = house_express.size_scale(feats, cat)
                top = house_express.surface_height(view, b, label >= 0, cat)
                objects.append(Seen(colour, cat, fit, b.area, x, on or room, near, scale, top))
            elif not near:
                unread.append(Seen(colour, "", fit, b.area, x, on or room, False))
    out = HouseView(
        room=room,
        rooms=rooms,
        objects=objects,
        floor_x=floor_x,
        unread=unread,
        links=links,
        door_x=door_x,
    )
    view.__dict__["_house"] = out  # analysed views are cached by content, so this is read once
    return out


# ------------------------------------------------------------------------------ questions


@dataclass
class HouseAsk:
    """A house question, read from its text."""

    kind: str
    room: str | None = None
    other: str | None = None
    category: str | None = None
    colour: str | None = None
    furniture: str | None = None
    options: list[str] = field(default_factory=list)
    text: str = ""
    aspect: str = "colour"
    """What an ``attribute`` question asks: ``colour`` or ``size``."""

    @property
    def target_room(self) -> str | None:
        """The room whose inside the answer depends on (``None``: anywhere)."""
        if self.kind == "long_term_navigation":
            return self.other
        return self.room


OBJECT_KINDS = ("object", "existence", "attribute", "location", "state", "knowledge", "counting")
"""The kinds answered from what stands inside one named room (EXPRESS-Bench's seven)."""

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("attribute", re.compile(r"What colour is the ([a-z ]+?) in the ([a-z ]+)\?")),
    ("size", re.compile(r"Is the ([a-z ]+?) in the ([a-z ]+?) big or small for an? [a-z ]+\?")),
    ("location", re.compile(r"Where in the ([a-z ]+?) is the ([a-z]+) ([a-z ]+?)\?")),
    ("existence", re.compile(r"Is there an? ([a-z ]+?) in the ([a-z ]+)\?")),
    ("counting", re.compile(r"How many ([a-z ]+?) are there in the ([a-z ]+)\?")),
    ("object", re.compile(r"What is standing on the ([a-z ]+?) in the ([a-z ]+)\?")),
    ("state", re.compile(r"Is the TV in the ([a-z ]+?) on or off\?")),
    ("knowledge", re.compile(r"What is the ([a-z]+) thing on the ([a-z ]+?) in the ([a-z ]+?) used for\?")),
    (
        "traversable_passage",
        re.compile(r"Which of these rooms can you walk into directly from the ([a-z ]+), through a doorway"),
    ),
    ("regional_boundary", re.compile(r"What lies between the ([a-z ]+?) and the ([a-z ]+)\?")),
    (
        "long_term_navigation",
        re.compile(r"You are in the ([a-z ]+)\. On the shortest walk .*? to the middle of the ([a-z ]+?),"),
    ),
]


def read_ask(question: str, options: list[str] | None = None) -> HouseAsk | None:
    """The house question ``question`` asks, or ``None`` for any other question."""
    for kind, pat in _PATTERNS:
        m = pat.search(question)
        if m is None:
            continue
        g = m.groups()
        ask = HouseAsk(
            kind="attribute" if kind == "size" else kind, options=list(options or []), text=question
        )
        ask.aspect = "size" if kind == "size" else "colour"
        if kind in ("attribute", "size", "existence"):
            ask.category, ask.room = g
        elif kind == "location":
            ask.room, ask.colour, ask.category = g
        elif kind == "counting":
            ask.category, ask.room = PLURALS.get(g[0], g[0]), g[1]
        elif kind == "object":
            ask.furniture, ask.room = g
        elif kind == "state":
            ask.room = g[0]
        elif kind == "knowledge":
            ask.colour, ask.furniture, ask.room = g
        elif kind == "traversable_passage":
            ask.room = g[0]
        else:
            ask.room, ask.other = g
        if ask.room is not None and ask.room not in FLOOR_LOOKS:
            return None
        if ask.other is not None and ask.other not in FLOOR_LOOKS:
            return None
        if ask.category is not None and ask.category not in PLURALS.values():
            return None
        return ask
    return None


LTN_MAX_BETWEEN = 2
"""Most rooms a Long-Term Navigation answer passes between the two it names (the houses ask
routes of 2 to 4 rooms, every well-formed one as often as the next: docs/house.md)."""


def _guess(ask: HouseAsk, answers: list[str]) -> str:
    """A fixed guess drawn from the question's own text: a text-only reader can do no better.
    For a room sequence it is one of the well-formed sequences (the two named rooms with up to
    :data:`LTN_MAX_BETWEEN` of the others between them, in any order), each as likely as the next."""
    if ask.kind == "long_term_navigation" and ask.room and ask.other:
        others = sorted(set(answers) - {ask.room, ask.other})
        k = zlib.crc32(ask.text.encode())
        top = min(LTN_MAX_BETWEEN, len(others))
        routes = [p for n in range(0, top + 1) for p in itertools.permutations(others, n)]
        if routes:
            return " | ".join([ask.room, *routes[k % len(routes)], ask.other])
    if not answers:
        return "unknown"
    return answers[zlib.crc32(ask.text.encode()) % len(answers)]


def _answers(ask: HouseAsk) -> list[str]:
    if ask.kind == "counting":
        return ["0", "1", "2", "3"]
    if ask.kind == "existence":
        return ["yes", "no"]
    if ask.kind == "location" and ask.room in house_express.SURFACES:
        return sorted(house_express.SURFACES[str(ask.room)])  # what can stand in that room
    return list(ask.options)


def solve_house(ask: HouseAsk, views: list[View]) -> Verdict:
    """Answer ``ask`` from ``views`` (a guess with confidence 0 when they show nothing useful)."""
    seen = [read_view(v) for v in views]
    inside = [i for i, s in enumerate(seen) if s.room is not None and s.room == ask.room]
    verdict: Verdict | None = None
    if ask.kind in OBJECT_KINDS:
        verdict = _tv(ask, views) if ask.kind == "state" else _object_in_room(ask, seen, inside)
    elif ask.kind == "traversable_passage":
        # Two floors that meet in a view meet at a doorway (HouseView.links).
        votes: Counter[str] = Counter()
        first: dict[str, int] = {}
        for i, s in enumerate(seen):
            for pair, n in s.links.items():
                if ask.room in pair:
                    (r,) = pair - {str(ask.room)}
                    if r in ask.options:
                        votes[r] += n
                        first.setdefault(r, i)
        if votes:
            room = votes.most_common(1)[0][0]
            verdict = Verdict(
                room, 0.95, first[room], f"the {room} floor meets the {ask.room}'s at a doorway"
            )
    elif ask.kind == "regional_boundary":
        key = frozenset((str(ask.room), str(ask.other)))
        for i, s in enumerate(seen):
            if key in s.links:
                verdict = Verdict("a doorway", 0.95, i, f"the {ask.other}'s floor meets the {ask.room}'s")
                break
    elif ask.kind == "long_term_navigation":
        found = _route(seen, str(ask.room), str(ask.other))
        if found is not None:
            route, last, reached = found
            why = "doorways seen along the way" if reached else "doorways seen so far, the goal beyond them"
            verdict = Verdict(" | ".join(route), 0.9 if reached else 0.0, last, why)
    if verdict is None:
        return Verdict(_guess(ask, _answers(ask)), 0.0, None, "nothing in view settles it")
    return verdict


def _tv(ask: HouseAsk, views: list[View]) -> Verdict | None:
    """The TV's state from the views that show its screen (the largest screen seen wins)."""
    best: tuple[int, str, int] | None = None
    for i, v in enumerate(views):
        state, n = house_express.tv_state(v)
        if state is not None and (best is None or n > best[0]):
            best = (n, state, i)
    if best is None:
        return None
    return Verdict(best[1], 0.95, best[2], f"the TV's screen is {'lit' if best[1] == 'on' else 'dark'}")


def doorways(seen: list[HouseView]) -> dict[frozenset[str], tuple[int, int]]:
    """The doorways ``seen`` show: two floors meeting in a view (:attr:`HouseView.links`). Per
    pair of rooms, the widest meeting seen (in columns) and the last view that showed it."""
    out: dict[frozenset[str], tuple[int, int]] = {}
    for i, s in enumerate(seen):
        for key, n in s.links.items():
            best = out.get(key, (0, i))[0]
            out[key] = (max(best, n), i)
    return out


def _route(seen: list[HouseView], start: str, goal: str) -> tuple[list[str], int, bool] | None:
    """The rooms from ``start`` to ``goal`` through the doorways ``seen`` show, the last view that
    showed one of them, and whether the chain reaches ``goal`` (``None``: no doorway from
    ``start`` seen at all).

    Questions ask only about goals with one doorway route, so every chain of true doorways from
    start to goal is the answer. A room two doorways off can show through both, which would fake
    a doorway; such a glimpse shows less floor, so of all chains the one whose weakest doorway
    showed the most floor wins (then its next weakest, and so on). When no chain reaches the
    goal, the longest chain from the start with the goal added is the best guess (the goal lies
    beyond what was explored)."""
    doors = doorways(seen)
    links: dict[str, list[str]] = {}
    for pair in doors:
        a, b = tuple(pair)
        links.setdefault(a, []).append(b)
        links.setdefault(b, []).append(a)
    chains: list[tuple[list[str], list[int]]] = []

    def walk(path: list[str], weights: list[int]) -> None:
        chains.append((path, sorted(weights)))
        if path[-1] == goal:
            return
        for nxt in sorted(links.get(path[-1], [])):
            if nxt not in path:
                walk([*path, nxt], [*weights, doors[frozenset((path[-1], nxt))][0]])

    walk([start], [])
    full = [c for c in chains if c[0][-1] == goal]
    if full:
        route = max(full, key=lambda c: c[1])[0]
        reached = True
    else:
        part = [c for c in chains if len(c[0]) >= 2]
        if not part:
            return None
        route = [*max(part, key=lambda c: (len(c[0]), c[1]))[0], goal]
        reached = False
    last = max(doors[frozenset(p)][1] for p in itertools.pairwise(route) if frozenset(p) in doors)
    return route, last, reached


def between_rooms(seen: list[HouseView]) -> list[str | None]:
    """Per view, the room under the camera; for a view in which no floor shows at all (the agent
    walked up to a piece of furniture, so its own floor and the floor below an object on it are
    hidden), the room of the views kept before and after it when both read the same room.

    Ours: the views come in the order they were taken, so a close-up between two kept views of
    the same room was most likely taken in that room (a walk out and back through a doorway in
    between is possible, and is the error this reading accepts). Before, objects in such
    close-ups had no room, and the demand they settle never closed."""
    rooms = [s.room for s in seen]
    out = list(rooms)
    for i, room in enumerate(rooms):
        if room is not None or seen[i].rooms:
            continue
        before = next((r for r in reversed(rooms[:i]) if r is not None), None)
        after = next((r for r in rooms[i + 1 :] if r is not None), None)
        if before is not None and before == after:
            out[i] = before
    return out


def _object_in_room(ask: HouseAsk, seen: list[HouseView], inside: list[int]) -> Verdict | None:
    """Objects are placed in a room by the floor just below them, so one seen through a doorway
    counts for the room it stands in; one with no floor in view by :func:`between_rooms`."""
    rooms = between_rooms(seen)
    found = [
        (i, o)
        for i, s in enumerate(seen)
        for o in s.objects
        if (o.room if o.room is not None else rooms[i]) == ask.room
    ]
    looked = len(inside) + len({i for i, _ in found})
    if ask.kind in ("location", "knowledge") or ask.aspect == "size":
        return house_express.solve(ask, found)
    if ask.kind == "object":
        votes: Counter[str] = Counter()
        best: dict[str, int] = {}
        for i, o in found:
            votes[o.category] += o.area
            best.setdefault(o.category, i)
        if not votes:
            return None
        cat = votes.most_common(1)[0][0]
        sure = 0.9 if any(o.near and o.category == cat for _, o in found) else FAR_CONFIDENCE
        return Verdict(cat, sure, best[cat], f"a {cat} on the furniture in the {ask.room}")
    named = [(i, o) for i, o in found if o.category == ask.category]
    if ask.kind == "attribute":
        colours: Counter[str] = Counter()
        where: dict[str, int] = {}
        for i, o in named:
            colours[o.colour] += o.area
            where.setdefault(o.colour, i)
        if not colours:
            return None
        colour = colours.most_common(1)[0][0]
        sure = 0.95 if any(o.near and o.colour == colour for _, o in named) else FAR_CONFIDENCE
        return Verdict(colour, sure, where[colour], f"the {ask.category} in the {ask.room} is {colour}")
    per_view: dict[int, set[str]] = {}
    for i, o in named:
        per_view.setdefault(i, set()).add(o.colour)
    # The view showing the most colours counts; of views showing as many, one where every
    # one of them was read from close by (ours: a walk up to the things repeats the count seen
    # from afar, and only the close reading is sure; the first view seen was often the far one).
    all_near = {i: all(o.near for j, o in named if j == i) for i in per_view}
    most = max(per_view, key=lambda i: (len(per_view[i]), all_near[i]), default=None)
    n = min(3, len(per_view[most])) if most is not None else 0
    if ask.kind == "existence":
        if most is not None:
            sure = 0.95 if any(o.near for _, o in named) else FAR_CONFIDENCE
            return Verdict("yes", sure, most, f"a {ask.category} in the {ask.room}")
        if len(inside) >= 8:  # a full turn inside the room showed none
            return Verdict("no", 0.9, inside[-1], f"no {ask.category} seen all round the {ask.room}")
        return None
    if most is None:
        if len(inside) < 8:
            return None
        return Verdict("0", 0.9, inside[-1], f"no {ask.category} seen all round the {ask.room}")
    # Sure only when no view of the room showed a colour the chosen view lacks (then that view
    # missed one, and the count is not settled).
    whole = set().union(*per_view.values())
    close = all_near[most] and whole <= per_view[most]
    sure = 0.9 if (len(inside) >= 8 or looked >= 8) and close else 0.5
    return Verdict(str(n), sure, most, f"{n} seen in the {ask.room}")


# ------------------------------------------------------------------------------ steering


@dataclass
class HouseMap:
    """What the policy knows of a house's layout: rooms it has stood in and doorways it has seen.

    It is written into the working memory's notes (:func:`map_note`) and read back from them
    (:func:`read_map`), so it lasts as long as the memory does (the navigation variant keeps one
    memory for the whole episode)."""

    visited: set[str] = field(default_factory=set)
    doors: set[frozenset[str]] = field(default_factory=set)

    def add(self, view: HouseView) -> None:
        """Add what one view shows."""
        if view.room is not None:
            self.visited.add(view.room)
        self.doors |= set(view.links)

    def route(self, start: str, goal: str) -> list[str] | None:
        """The fewest-doorway chain of known doorways from ``start`` to ``goal`` (breadth first)."""
        paths = {start: [start]}
        todo = [start]
        while todo:
            room = todo.pop(0)
            if room == goal:
                return paths[room]
            for pair in sorted(self.doors, key=sorted):
                if room in pair:
                    (nxt,) = pair - {room}
                    if nxt not in paths:
                        paths[nxt] = [*paths[room], nxt]
                        todo.append(nxt)
        return None


_MAP_ROOM = re.compile(
    r"\bin the (" + "|".join(sorted(map(re.escape, FLOOR_LOOKS), key=len, reverse=True)) + r")\b"
)
"""A room name after "in the" (whole names only: "in the kitchen then in the hallway" names two)."""
_MAP_DOORS = re.compile(r"doorways ([a-z /,]+)")


def map_note(views: list[HouseView]) -> str:
    """The rooms and doorways ``views`` show, in the words :func:`read_map` reads back. Rooms
    come most-shown first (ties in the order seen): of a turn round, most views show the floor of
    the room the agent stands in, and the first room named is read back as that room."""
    counted = Counter(v.room for v in views if v.room is not None)
    rooms = sorted(dict.fromkeys(v.room for v in views if v.room is not None), key=lambda r: -counted[r])
    doors = list(dict.fromkeys(" / ".join(sorted(p)) for v in views for p in v.links))
    text = f"in the {' then in the '.join(rooms)}" if rooms else "in an unknown room"
    return text + (f"; doorways {', '.join(doors)}" if doors else "")


def read_map(lines: list[str]) -> HouseMap:
    """The house map the notes ``lines`` record (see :func:`map_note`)."""
    out = HouseMap()
    for line in lines:
        out.visited |= {r for r in _MAP_ROOM.findall(line) if r in FLOOR_LOOKS}
        for found in _MAP_DOORS.findall(line):
            for pair in found.split(","):
                rooms = [r.strip() for r in pair.split("/")]
                if len(rooms) == 2 and all(r in FLOOR_LOOKS for r in rooms) and rooms[0] != rooms[1]:
                    out.doors.add(frozenset(rooms))
    return out


OPEN_MIN_SHARE = 0.12
"""Share of the frame's height that open floor must reach up from its bottom edge, in the best
direction, for the way to count as open (less: a wall or furniture right ahead)."""


def floor_reach(view: View) -> np.ndarray:
    """Per column, how far up from the bottom edge the floor runs unbroken (share of the height):
    the nearer a wall or piece of furniture stands in that direction, the lower it is."""
    label = labels_of(view)
    h = label.shape[0]
    floor = label[::-1] >= 0  # bottom row first
    return np.where(floor.all(axis=0), h, np.argmin(floor, axis=0)) / h


def open_way(view: View) -> tuple[float, float]:
    """The most open direction in ``view``: the horizontal share of the frame whose band of
    columns (a tenth of the width, about the agent's body a metre ahead) has floor reaching
    furthest up from the bottom edge, and that reach (share of the height)."""
    reach = floor_reach(view)
    w = reach.size
    k = max(1, w // 10)
    band = np.convolve(reach, np.ones(k), mode="valid") / k
    i = int(np.argmax(band))
    return (i + k / 2) / w, float(band[i])


def freer_side(view: View) -> str:
    """``left`` or ``right``: the half of the view with more open floor (to step aside to)."""
    reach = floor_reach(view)
    half = reach.size // 2
    return "left" if reach[:half].mean() > reach[half:].mean() else "right"


def bearing(x: float) -> float:
    """Degrees a point at horizontal share ``x`` of the frame lies off its centre (left < 0)."""
    half = math.tan(math.radians(HFOV_DEGREES / 2))
    return math.degrees(math.atan((2 * x - 1) * half))


def steer(x: float) -> tuple[str, int]:
    """Turn toward a goal at horizontal share ``x``: ``("left" | "right", turns)`` when it lies
    more than :data:`TURN_THRESHOLD` off centre, else ``("ahead", 0)``. The turns are the whole
    30-degree turns nearest to its bearing, so it ends within half a turn of the centre."""
    b = bearing(x)
    if abs(b) <= TURN_THRESHOLD:
        return "ahead", 0
    return ("left" if b < 0 else "right"), max(1, round(abs(b) / TURN_DEGREES))


def covered(ask: HouseAsk, views: list[View]) -> bool:
    """Whether ``views`` hold the evidence the question's demand asks for."""
    return solve_house(ask, views).confidence >= 0.9


def goal_x(ask: HouseAsk, view: View, known: HouseMap | None = None) -> tuple[float | None, str]:
    """Where to head from ``view`` (a horizontal share of the frame, ``None``: nowhere in view)
    and why. In order: a far object the question names (to read it); inside the target room,
    nothing more; the doorway to the next room on the known route to the target room; the
    target room's floor; the doorway to a room not yet stood in; any room not yet stood in."""
    s = read_view(view)
    known = known if known is not None else HouseMap()
    target = ask.target_room
    if target is not None and s.room == target:
        if ask.kind in OBJECT_KINDS:
            # Read small things from close by: first far ones of the named kind, then unread blobs.
            far = [o for o in s.objects if ask.category in (None, o.category) and not o.near]
            far = [o for o in far or s.unread if o.room == target]
            if far:
                o = max(far, key=lambda o: o.area)
                what = f"{o.colour} {o.category or 'thing'}"
                return o.x, f"walk up to the {what} to read it"
        return None, f"in the {target}"
    if target is not None and s.room is not None:
        both = HouseMap(visited=set(known.visited), doors=known.doors | set(s.links))
        route = both.route(s.room, target)
        if route is not None and len(route) >= 2 and route[1] in s.door_x:
            return s.door_x[route[1]], f"the doorway to the {route[1]}, on the way to the {target}"
    if target is not None and target in s.floor_x:
        return s.floor_x[target], f"the {target} shows that way"
    fresh = [r for r in s.door_x if r not in known.visited]
    if fresh:
        r = max(fresh, key=lambda r: s.rooms.get(r, 0))
        return s.door_x[r], f"a doorway to a room not yet entered ({r})"
    fresh = [r for r in s.floor_x if r not in known.visited]
    if fresh:
        r = max(fresh, key=lambda r: s.rooms.get(r, 0))
        return s.floor_x[r], f"a room not yet entered ({r}) shows that way"
    return None, "nothing to head for"


def heading(ask: HouseAsk, view: View, known: HouseMap | None = None) -> tuple[str | None, str]:
    """Where to head from ``view``: ``left``/``right`` (turn first) or ``ahead``, or ``None``."""
    x, why = goal_x(ask, view, known)
    if x is None:
        return None, why
    return steer(x)[0], why
