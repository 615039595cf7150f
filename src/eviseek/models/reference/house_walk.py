"""Walking through a house by dead reckoning: where the floor in a view lies, where a doorway is,
which room the agent stands in, and the legs that take it through a doorway.

The seeker is told the agent's pose as dead-reckoned from its own commands (``d(+0.25E,...)``,
:mod:`eviseek.agents.eviseek.pose`); a blocked move moves nothing and the feedback says so, so in
a house the estimate stays exact. With a level camera at a known height and field of view, every
floor pixel below the horizon is a point on the ground at a known distance and bearing, so a
doorway seen in a view (two floors that meet, :func:`eviseek.models.reference.house.floor_links`)
becomes a point in the agent's own frame. None of this reads the simulator: only the pixels, the
pose annotation and the action outcomes that every agent is given.

What the policy learns is written into its own intent arguments, which the working memory
repeats back on later calls (the seeker holds no state between calls):

* ``at`` (``"x,y"``): the pose a moving intent started from;
* ``in``: the room the policy believed it stood in when it chose the intent;
* ``enter`` and ``cross``: the room the walk leads into and after how many metres it crosses
  over (from the doorway's position, or from the floor seen straight ahead);
* ``doors``: the doorways the current view shows, with their centre and the heading that walks
  straight through them (``"hallway/kitchen@+1.20,+3.40>90"``).

From these the room underfoot follows without reading the floor under the camera, which a level
camera never sees (:func:`room_now`): the room a walk started in, or the room it led into once
the agent walked past the crossing. The room read from the bottom of the frame, 1.5-2 m ahead,
decided it before, and made the policy believe it stood in a room it was only looking into.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field

import numpy as np

from eviseek.models.reference import house
from eviseek.models.reference.house_objects import CAMERA_HEIGHT
from eviseek.models.reference.vision import View

STEP_M = 0.25
"""One ``move_forward`` (the house's step)."""
MAX_STEPS = 12
"""The longest GOTO a navigation-only interface compiles (3 m)."""
APPROACH_M = 0.75
"""How far in front of a doorway, on the line straight through it, the last leg starts (ours:
far enough that the turn onto that line clears the jambs, near enough that the leg is short)."""
BEYOND_M = 1.25
"""How far past a doorway's threshold the crossing leg ends (ours: the body, 0.2 m in radius,
well inside the next room, and a step clear of the doorway for the sweep that follows)."""
ON_LINE_M = 0.2
"""Largest sideways offset from the line through a doorway's centre at which the crossing leg
is walked straight (the doorway is 1.0 m wide and the body 0.4 m: 0.3 m of play either side)."""
NEAR_DOOR_M = 5.0
"""Doorways seen further away than this are too uncertain to walk to by dead reckoning."""

_AT = re.compile(r"^([+-]?\d+(?:\.\d+)?),([+-]?\d+(?:\.\d+)?)$")
_DOOR = re.compile(
    r"^\s*([a-z ]+)/([a-z ]+)@([+-]?\d+(?:\.\d+)?),([+-]?\d+(?:\.\d+)?)>([+-]?\d+)(?:~(\d+(?:\.\d+)?))?\s*$"
)
_LINE = re.compile(r"^([A-Z_]+) (\{.*?\}): ")
_FAILED = re.compile(r"\b(fail|failed|blocked|bump|bumped|collid|cannot move|not possible)", re.I)


def wrap(deg: float) -> float:
    """An angle in degrees, in (-180, 180]."""
    deg = (deg + 180.0) % 360.0 - 180.0
    return 180.0 if deg == -180.0 else deg


def forward(yaw: float) -> tuple[float, float]:
    """The unit vector a heading points along (the pose estimate's axes: yaw 0 is north, +y)."""
    r = math.radians(yaw)
    return (-math.sin(r), math.cos(r))


def heading_of(dx: float, dy: float) -> float:
    """The heading (degrees) that points along ``(dx, dy)``."""
    return wrap(math.degrees(math.atan2(-dx, dy)))


def focal(width: int) -> float:
    """The camera's focal length in pixels (square pixels, horizontal field of view 90 degrees)."""
    return width / 2 / math.tan(math.radians(house.HFOV_DEGREES / 2))


def ground(row: float, col: float, width: int, height: int) -> tuple[float, float] | None:
    """Where the ground point a pixel shows lies: ``(ahead, right)`` metres from the camera, or
    ``None`` at or above the horizon. Works at any frame size: the focal length follows the width
    and the horizon is the middle row of a level camera."""
    f = focal(width)
    below = row + 0.5 - height / 2
    if below <= 0.5:
        return None
    ahead = CAMERA_HEIGHT * f / below
    return ahead, (col + 0.5 - width / 2) * ahead / f


def nearest_ground_m(height: int, width: int) -> float:
    """How far ahead the floor at the frame's bottom edge lies (1.5 m at 512x512, 2 m at 320x240)."""
    g = ground(height - 1, width / 2, width, height)
    return g[0] if g is not None else 0.0


def labels(view: View) -> np.ndarray:
    """The floor labels of ``view`` (:func:`house.labels_of`)."""
    return house.labels_of(view)


BOTTOM_ROWS = 0.1
"""Share of the frame's rows, at the bottom, whose floor says which room the agent stands by."""


def bottom_floors(view: View) -> str:
    """The floors filling the bottom rows of ``view``, as shares of those rows, each with the
    horizontal centre of its pixels there as a share of the width (``"dining room:0.76@0.40,
    laundry room:0.05@0.93"``): the nearest floor the camera sees, and which way it lies."""
    lab = labels(view)
    h, w = lab.shape
    band = lab[h - max(1, round(h * BOTTOM_ROWS)) :]
    counts = np.bincount(band[band >= 0].ravel(), minlength=len(house.FLOOR_LOOKS))
    names = list(house.FLOOR_LOOKS)
    cols = np.arange(w)[None, :].repeat(band.shape[0], axis=0)
    parts = []
    for i, c in enumerate(counts):
        if c / band.size >= 0.01:
            x = (float(cols[band == i].mean()) + 0.5) / w
            parts.append(f"{names[i]}:{c / band.size:.2f}@{x:.2f}")
    return ",".join(parts) or "none"


def read_floors(text: str) -> dict[str, float]:
    """A :func:`bottom_floors` record read back: each floor's share of the bottom rows."""
    return {name: share for name, (share, _x) in read_floors_at(text).items()}


def read_floors_at(text: str) -> dict[str, tuple[float, float]]:
    """A :func:`bottom_floors` record read back: each floor's share of the bottom rows and the
    horizontal centre of its pixels there (0.5, the middle, when the record does not say)."""
    out: dict[str, tuple[float, float]] = {}
    for part in text.split(","):
        name, _, rest = part.rpartition(":")
        share, _, at = rest.partition("@")
        try:
            value = float(share)
            x = float(at) if at else 0.5
        except ValueError:
            continue
        if name in house.FLOOR_LOOKS:
            out[name] = (value, x)
    return out


@dataclass
class Pose2:
    """The agent's dead-reckoned position and heading."""

    x: float
    y: float
    yaw: float

    def to_world(self, ahead: float, right: float) -> tuple[float, float]:
        """A point given relative to the camera, in the pose estimate's frame."""
        fx, fy = forward(self.yaw)
        rx, ry = fy, -fx  # right of the heading
        return self.x + ahead * fx + right * rx, self.y + ahead * fy + right * ry


@dataclass
class Door:
    """A doorway between two rooms, placed in the pose estimate's frame."""

    rooms: frozenset[str]
    x: float
    y: float
    through: float
    """A heading (whole 30-degree steps) that walks straight through it, in either direction."""
    span: float = 0.0
    """Metres of its threshold the view showed (a doorway is 1 m wide): the wider, the surer the
    placing, since a jamb hiding part of the threshold pulls the centre toward the part seen."""

    def text(self) -> str:
        a, b = sorted(self.rooms)
        return f"{a}/{b}@{self.x:+.2f},{self.y:+.2f}>{round(self.through):d}~{self.span:.2f}"


def door_in_view(view: View, pose: Pose2, near: str, far: str) -> Door | None:
    """The doorway from room ``near`` to room ``far`` in ``view``, placed by where their floors
    meet (the threshold): its centre is the middle of the widest unbroken run of meeting columns,
    projected onto the ground, and its through-heading is square to that run (when the run is
    long enough to give a direction) or the heading toward it, rounded to a whole turn."""
    names = list(house.FLOOR_LOOKS)
    if near not in names or far not in names:
        return None
    lab = labels(view)
    h, w = lab.shape
    ni, fi = names.index(near), names.index(far)
    gap = max(1, round(house.DOOR_GAP_ROWS * h / 240))
    is_near = lab == ni
    below = np.zeros_like(is_near)
    for k in range(1, gap + 1):
        below[:-k] |= is_near[k:]
    # Per column, the lowest far-floor pixel with near floor just below it: the threshold.
    meet = (lab == fi) & below
    has = meet.any(axis=0)
    if not has.any():
        return None
    lowest = h - 1 - np.argmax(meet[::-1], axis=0)
    best = {int(c): int(lowest[c]) for c in np.nonzero(has)[0]}
    cols = np.array(sorted(best))
    breaks = np.nonzero(np.diff(cols) > 2)[0]
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [cols.size - 1]])
    k = int(np.argmax(cols[ends] - cols[starts]))
    run = cols[starts[k] : ends[k] + 1]
    if run.size < max(1, round(house.DOOR_MIN_COLUMNS * w / 320)):
        return None
    pts = [ground(best[c] + 0.5, c, w, h) for c in run]
    ground_pts = np.array([p for p in pts if p is not None])
    if ground_pts.shape[0] < 2:
        return None
    a, b = ground_pts[0], ground_pts[-1]
    ahead, right = (a + b) / 2
    if ahead > NEAR_DOOR_M:
        return None
    cx, cy = pose.to_world(float(ahead), float(right))
    toward = heading_of(cx - pose.x, cy - pose.y)
    wx, wy = pose.to_world(float(b[0]), float(b[1]))
    vx, vy = pose.to_world(float(a[0]), float(a[1]))
    span = math.hypot(wx - vx, wy - vy)
    through = toward
    if span >= 0.4:
        square = heading_of(-(wy - vy), wx - vx)  # the run's direction turned by 90 degrees
        # Of the two squares to the run, the one that points away from the camera.
        if abs(wrap(square - toward)) > 90:
            square = wrap(square + 180)
        through = square
    return Door(
        frozenset((near, far)), round(cx, 2), round(cy, 2), 30.0 * round(through / 30.0), round(span, 2)
    )


def doors_in_view(view: View, pose: Pose2) -> dict[frozenset[str], Door]:
    """Every doorway ``view`` shows (any two floors that meet, :attr:`house.HouseView.links`),
    placed by :func:`door_in_view`. A doorway is a doorway whichever room the agent stands in, so
    one seen beyond the next room is placed too."""
    out: dict[frozenset[str], Door] = {}
    for pair in house.read_view(view).links:
        a, b = sorted(pair)
        found = [d for d in (door_in_view(view, pose, a, b), door_in_view(view, pose, b, a)) if d is not None]
        if found:
            # The nearer floor lies below the threshold: the order that found a run is the right one.
            out[pair] = min(found, key=lambda d: math.hypot(d.x - pose.x, d.y - pose.y))
    return out


SPAN_SLACK = 0.15
"""A later placing of a doorway replaces an earlier one unless it saw this much less of the
threshold (metres; ours)."""


def better(old: Door | None, new: Door) -> Door:
    """Of two placings of one doorway, the one that saw more of its threshold (the later one
    unless it saw clearly less)."""
    if old is None or new.span >= old.span - SPAN_SLACK:
        return new
    return old


def square_up(doors: dict[frozenset[str], Door]) -> dict[frozenset[str], Door]:
    """The doorways with their through-headings made consistent: a house's walls meet at right
    angles, so every doorway's through-heading is the same modulo 90 degrees. A heading read from
    a glimpse of part of a threshold can be a turn off; the modulo most doorways agree on wins
    and the others are moved to the nearest heading that shares it."""
    if len(doors) < 2:
        return doors
    votes: dict[int, int] = {}
    for d in doors.values():
        phase = round(d.through) % 90
        votes[phase] = votes.get(phase, 0) + 1
    phase = max(sorted(votes), key=lambda p: votes[p])
    out: dict[frozenset[str], Door] = {}
    for k, d in doors.items():
        if round(d.through) % 90 != phase:
            options = [wrap(phase + 90.0 * i) for i in range(4)]
            through = min(options, key=lambda h: abs(wrap(h - d.through)))
            d = Door(d.rooms, d.x, d.y, through, d.span)
        out[k] = d
    return out


def floor_ahead(view: View, here: str | None, max_m: float) -> tuple[str, float] | None:
    """The first other room whose floor the straight walk ahead reaches within ``max_m``, and
    after how many metres: read up the middle columns of the frame (as wide as the body), from
    the bottom edge, until the floor changes to another room's and stays so for a few rows."""
    lab = labels(view)
    h, w = lab.shape
    names = list(house.FLOOR_LOOKS)
    half = max(1, w // 20)
    band = lab[:, w // 2 - half : w // 2 + half]
    seen_other: tuple[str, int] | None = None
    run = 0
    for row in range(h - 1, h // 2, -1):
        vals = band[row][band[row] >= 0]
        if vals.size < band.shape[1] // 2:
            break  # furniture or a wall ahead: nothing further along this line is walkable floor
        top = names[int(np.bincount(vals).argmax())]
        if here is not None and top != here:
            run = run + 1 if seen_other is not None and seen_other[0] == top else 1
            if seen_other is None or seen_other[0] != top:
                seen_other = (top, row)
            if run >= 3:
                g = ground(seen_other[1] + 0.5, w / 2, w, h)
                if g is None or g[0] > max_m:
                    return None
                return top, g[0]
        else:
            seen_other, run = None, 0
    return None


# ------------------------------------------------------------------------------ memory


@dataclass
class Move:
    """One moving intent, read back from a working-memory line."""

    at: tuple[float, float]
    room: str | None
    enter: str | None = None
    cross: float | None = None
    failed: bool = False
    door: str | None = None
    """The doorway it was heading for (``Door.text`` without position), if any."""


@dataclass
class Recall:
    """What the working memory says about the walk so far."""

    moves: list[Move] = field(default_factory=list)
    doors: dict[frozenset[str], Door] = field(default_factory=dict)
    start: str | None = None
    """The room the first sweeps were taken in: the floor that filled the bottom rows most,
    summed over the views they started from (:func:`bottom_floors`)."""
    votes: dict[str, float] = field(default_factory=dict)
    """The start-room votes behind :attr:`start` (floor shares summed over the views)."""
    rooms: set[str] = field(default_factory=set)
    """Every room the policy has believed it stood in."""
    last_failed: bool = False
    last_intent: str = ""


def intent_args(line: str) -> tuple[str, dict[str, object]] | None:
    """The intent name and arguments a working-memory line starts with."""
    m = _LINE.match(line)
    if m is None:
        return None
    try:
        args = ast.literal_eval(m.group(2))
    except (ValueError, SyntaxError):
        return None
    return (m.group(1), args) if isinstance(args, dict) else None


def parse_door(text: str) -> Door | None:
    """A :meth:`Door.text` read back."""
    m = _DOOR.match(text)
    if m is None:
        return None
    a, b = m.group(1).strip(), m.group(2).strip()
    if a not in house.FLOOR_LOOKS or b not in house.FLOOR_LOOKS or a == b:
        return None
    span = float(m.group(6)) if m.group(6) else 0.0
    return Door(frozenset((a, b)), float(m.group(3)), float(m.group(4)), float(m.group(5)), span)


def recall(memory: list[str]) -> Recall:
    """Read the walk so far back from the working memory's lines."""
    out = Recall()
    votes: dict[str, float] = {}
    for line in memory:
        got = intent_args(line)
        name: str = line.split(" ", 1)[0]
        args: dict[str, object] = {}
        if got is not None:
            name, args = got
        out.last_intent = name
        out.last_failed = _FAILED.search(line) is not None
        if "saw" in args and not out.moves:
            for floor, share in read_floors(str(args.get("saw", ""))).items():
                votes[floor] = votes.get(floor, 0.0) + share
        for text in str(args.get("doors", "")).split(";"):
            seen_door = parse_door(text)
            if seen_door is not None:
                out.doors[seen_door.rooms] = better(out.doors.get(seen_door.rooms), seen_door)
        at = _AT.match(str(args.get("at", "")))
        room = args.get("in")
        if at is None:
            if name == "SWEEP" and room in house.FLOOR_LOOKS:
                out.rooms.add(str(room))  # a look round is taken where the agent stands
            continue
        enter = args.get("enter")
        cross = args.get("cross")
        out.moves.append(
            Move(
                at=(float(at.group(1)), float(at.group(2))),
                room=str(room) if room in house.FLOOR_LOOKS else None,
                enter=str(enter) if enter in house.FLOOR_LOOKS else None,
                cross=float(cross) if isinstance(cross, int | float) else None,
                failed=out.last_failed,
                door=str(args["door"]) if "door" in args else None,
            )
        )
        if room in house.FLOOR_LOOKS:
            out.rooms.add(str(room))
    out.votes = votes
    if votes:
        out.start = max(votes, key=lambda r: votes[r])
    return out


def room_now(mem: Recall, pose: Pose2) -> str | None:
    """The room the agent stands in: the one the last walk led into, once it walked past the
    crossing, else the one it started in; before any walk, the room the first sweeps showed.

    A walk that was not aimed at a doorway (toward a floor in view, over open floor) can still
    pass through one: when its straight track crosses the threshold of a placed doorway of the
    room it started in, it ends in the room on the other side (:func:`crossed_door`)."""
    if not mem.moves:
        return mem.start
    last = mem.moves[-1]
    walked = math.hypot(pose.x - last.at[0], pose.y - last.at[1])
    if last.enter is not None and last.cross is not None:
        if walked >= last.cross + 0.2:
            return last.enter
        return last.room
    if last.room is not None:
        other = crossed_door(mem.doors, last.room, last.at, (pose.x, pose.y))
        if other is not None:
            return other
    return last.room


PAST_THRESHOLD_M = 0.2
"""How far past a threshold a walk must end to count as through it (ours: the body's radius)."""
THRESHOLD_SLACK_M = 0.8
"""How far from a placed doorway's centre, along its threshold, a track may cross it and still
count as passing through (ours: half the 1 m opening plus the placing error of a few tenths of a
metre that dead reckoning and a partly hidden threshold add)."""


def crossed_door(
    doors: dict[frozenset[str], Door], room: str, start: tuple[float, float], end: tuple[float, float]
) -> str | None:
    """The room on the far side of the first placed doorway of ``room`` whose threshold the
    straight track from ``start`` to ``end`` crosses (ending at least :data:`PAST_THRESHOLD_M`
    past it, within :data:`THRESHOLD_SLACK_M` of its centre), else ``None``.

    Before issue 38's fourth stop only walks aimed at a doorway could change the room underfoot;
    at 320x240 the floor at the frame's bottom lies 2 m ahead, so a short walk toward a room in
    view often passed a threshold the policy never saw, and it then took the room it had left
    for the one it stood in (and walked back through the same doorway to "enter" it)."""
    best: tuple[float, str] | None = None
    for key, door in doors.items():
        if room not in key:
            continue
        n = forward(door.through)
        s0 = (start[0] - door.x) * n[0] + (start[1] - door.y) * n[1]
        s1 = (end[0] - door.x) * n[0] + (end[1] - door.y) * n[1]
        if s0 * s1 >= 0 or abs(s1) < PAST_THRESHOLD_M:
            continue
        t = s0 / (s0 - s1)
        px = start[0] + t * (end[0] - start[0])
        py = start[1] + t * (end[1] - start[1])
        lateral = (px - door.x) * n[1] - (py - door.y) * n[0]
        if abs(lateral) > THRESHOLD_SLACK_M:
            continue
        if best is None or t < best[0]:
            best = (t, next(iter(key - {room})))
    return best[1] if best is not None else None


# ------------------------------------------------------------------------------ legs


@dataclass
class Leg:
    """One GOTO: turn by ``turn`` degrees (left positive) then walk ``steps`` steps."""

    turn: float
    steps: int
    crossing: bool = False
    """Whether this leg walks through the doorway (it ends in the next room)."""
    cross_m: float | None = None
    """Metres along the leg to the threshold (crossing legs)."""


def _turn_to(yaw: float, target: float) -> float:
    return 30.0 * round(wrap(target - yaw) / 30.0)


def leg_through(door: Door, pose: Pose2, into: str, swap_order: bool = False) -> Leg | None:
    """The next leg toward, then through, ``door`` into room ``into``.

    The last leg runs along the doorway's through-heading from a point :data:`APPROACH_M` before
    it (headings come in whole 30-degree turns, and a doorway's square heading is one of them, so
    only that line passes through the 1 m opening without grazing a jamb). To reach that point the
    policy splits the way into two legs along the whole-turn headings either side of its
    bearing: two short walks reach it exactly, where one walk along the nearest heading would miss
    it by up to a quarter of its length. ``swap_order`` walks the other of the two first (after a
    blocked leg). ``None`` when the agent is already past the doorway."""
    n = forward(door.through)
    # Which way through: toward the room to enter, i.e. away from the side the agent is on.
    s = (pose.x - door.x) * n[0] + (pose.y - door.y) * n[1]
    through = door.through
    if s > 0:
        through, n, s = wrap(through + 180), (-n[0], -n[1]), -s
    lateral = (pose.x - door.x) * n[1] - (pose.y - door.y) * n[0]
    if s > -0.1:
        if abs(lateral) <= THRESHOLD_SLACK_M:
            return None
        # On the threshold's line but beside the opening (in line with the wall, or a doorway
        # placed from a glimpse): not through it. Before issue 38's fourth stop this counted as
        # "already past", and a walk of two steps "entered" a room the agent never stood in.
        s = -0.1
    if abs(lateral) <= ON_LINE_M and -s + APPROACH_M <= MAX_STEPS * STEP_M:
        steps = min(MAX_STEPS, max(1, math.ceil((-s + BEYOND_M) / STEP_M)))
        return Leg(_turn_to(pose.yaw, through), steps, crossing=True, cross_m=-s)
    qx, qy = door.x - APPROACH_M * n[0], door.y - APPROACH_M * n[1]
    vx, vy = qx - pose.x, qy - pose.y
    dist = math.hypot(vx, vy)
    bearing = heading_of(vx, vy)
    lo = 30.0 * math.floor(bearing / 30.0)
    hi = lo + 30.0
    # v = a * forward(lo) + b * forward(hi), both a, b >= 0 (the bearing lies between them).
    ax, ay = forward(lo)
    bx, by = forward(hi)
    det = ax * by - ay * bx
    a = (vx * by - vy * bx) / det
    b = (ax * vy - ay * vx) / det
    legs = [(wrap(lo), a), (wrap(hi), b)]
    legs = [leg for leg in legs if leg[1] >= STEP_M / 2]
    if not legs:
        return Leg(_turn_to(pose.yaw, through), max(1, math.ceil((-s + BEYOND_M) / STEP_M)), True, -s)
    # Walk first along the heading nearer the current one (fewer turns), unless told otherwise.
    legs.sort(key=lambda leg: abs(wrap(leg[0] - pose.yaw)), reverse=swap_order)
    head, length = legs[0]
    steps = min(MAX_STEPS, max(1, round(length / STEP_M)))
    if dist < STEP_M:
        steps = 1
    return Leg(_turn_to(pose.yaw, head), steps)


def goto_args(leg: Leg) -> dict[str, object]:
    """A leg as GOTO arguments (turn first, then walk)."""
    if leg.turn == 0:
        return {"direction": "ahead", "steps": leg.steps}
    side = "left" if leg.turn > 0 else "right"
    return {"direction": side, "degrees": int(abs(leg.turn)), "steps": leg.steps}
