"""The reference policy in a navigation-only world (a house): scan, head for colour, walk on.

A navigation interface has forward moves and turns but no vertical moves (no ``move_up``), so the
tabletop routines (rise for an overhead view, circle a board) cannot run. Here the policy does
what a simple explorer does, reading only the current picture and the reported action outcomes:

* scan a full circle first, so every side of the starting room has been seen once;
* when a colour the question names is in view, approach it (centre it first with a turn);
* otherwise walk ahead; after a blocked move, turn right and walk on.

The same recipe serves EviSeek's seeker (as intents), Single-model (as atomic actions) and the
frontier baseline's direction hint.

For a house question (:mod:`eviseek.models.reference.house`) the policy reads rooms and small
objects from the picture instead of colours alone: it heads for the room the question names when
its floor shows through a doorway (else for a room it has not been in), turns round once in that
room, and closes in on the small objects it sees there. Which rooms it has been in it reads from
its own working memory (the notes it kept with its views).
"""

from __future__ import annotations

import math
import re

from eviseek.models.reference import house, house_walk
from eviseek.models.reference.task import Task
from eviseek.models.reference.vision import View

_FAILED = re.compile(r"\b(fail|failed|blocked|bump|bumped|collid|cannot move|not possible)", re.I)


def is_navigation(names: list[str]) -> bool:
    """Whether the offered actions or intents are a navigation-only interface."""
    have = set(names)
    return (
        "move_up" not in have
        and "RISE_TOPDOWN" not in have
        and ("move_forward" in have or "GOTO" in have or "APPROACH" in have)
    )


def target_side(task: Task, view: View) -> str | None:
    """Where a colour the question names sits in ``view``: ``left``, ``ahead``, ``right`` or None."""
    best = None
    for color in task.colors:
        blob = view.largest(color)
        if blob is not None and (best is None or blob.area > best.area):
            best = blob
    if best is None:
        return None
    x = best.centroid[0] / max(1, view.width)
    return "left" if x < 0.35 else "right" if x > 0.65 else "ahead"


def target_size(task: Task, view: View) -> float:
    """The largest named-colour region's share of the picture (0 when none is in view)."""
    areas = [b.area for c in task.colors if (b := view.largest(c)) is not None]
    return max(areas, default=0) / max(1, view.width * view.height)


def visited_rooms(lines: list[str]) -> set[str]:
    """Rooms the notes say a view was taken in ("in the kitchen: ...")."""
    return house.read_map(lines).visited


def _pose(meta_pose: object) -> house_walk.Pose2 | None:
    """The dead-reckoned pose the seeker was told (``None`` when absent or unreadable)."""
    if not isinstance(meta_pose, dict):
        return None
    try:
        return house_walk.Pose2(
            float(meta_pose["x"]), float(meta_pose["y"]), float(meta_pose.get("yaw", 0.0))
        )
    except (KeyError, TypeError, ValueError):
        return None


def stood_in_target(ask: house.HouseAsk, memory: list[str], meta_pose: object) -> bool | None:
    """Whether the agent has stood in the room a question about a room's inside names, read from
    the seeker's own notes (the rooms its intents were chosen in, the room its first full turn
    showed underfoot) and the dead-reckoned pose (a walk that led past a doorway into the room).
    ``None`` when it cannot tell: no room named, another kind of question, or no notes shown."""
    target = ask.target_room
    if target is None or ask.kind not in house.OBJECT_KINDS or not memory:
        return None
    mem = house_walk.recall(memory)
    if target in mem.rooms:
        return True
    looked = sum(1 for m in memory if m.startswith("SWEEP") and "'saw'" in m)
    if looked >= START_SWEEPS and mem.start == target:
        # The start room is trusted only after the full first turn: an agent that starts by a
        # wide doorway sees the next room's floor filling the first view.
        return True
    pose = _pose(meta_pose)
    return pose is not None and bool(mem.moves) and house_walk.room_now(mem, pose) == target


LOOK_ROUND = 3
"""Quarter-turn sweeps that look round a spot: the seeker sees the view each starts from and the
one after the last, so three (9 turns) show all four sides with a 90-degree field of view; a
fourth would only turn back to the first view (ours; 12 turns before issue 38's third stop)."""
START_SWEEPS = LOOK_ROUND
"""Quarter-turn sweeps that open a house episode."""
DOOR_TRIES = 3
"""Blocked legs toward one doorway after which the policy tries other doorways first (ours)."""
SWEEPS_IN_TARGET = LOOK_ROUND
"""Quarter-turn sweeps taken on first standing in the target room."""
MORE_SWEEPS_IN_TARGET = 2 * LOOK_ROUND
"""Quarter-turn sweeps allowed in the target room in all (two spots), while its evidence is not
found."""


# Long because it is one ordered list of decisions (turned enough, blocked, in the target room,
# location asks, doorways on the route, open floor), whose first match wins and whose branches
# share the closures over this view, pose and memory; split, each piece would take all of them.
def house_intent(
    ask: house.HouseAsk,
    view: View,
    memory: list[str],
    trail: list[str],
    remaining: int,
    pose: house_walk.Pose2 | None = None,
) -> tuple[str, dict[str, object], str]:
    """EviSeek's next intent for a house question.

    The room underfoot comes from the walk so far (:func:`house_walk.room_now`: the room the
    last walk led into once the agent passed the crossing), not from the floor at the bottom of
    the frame, which lies 1.5-2 m ahead. Doorways are placed on the ground by dead reckoning
    (:func:`house_walk.door_in_view`) and kept in the intent arguments, so the policy walks to
    the next doorway on the known route to the target room (else to one into a room not yet
    entered, the one it was already heading for first), lines up square to it and walks through
    (:func:`house_walk.leg_through`). In the target room it turns round once, then walks up to
    the small things it cannot yet read. With no doorway placed, it heads for a room's floor in
    view, else the most open floor; a blocked leg is walked the other way round once, then met
    by stepping aside."""
    pose = pose or house_walk.Pose2(0.0, 0.0, 0.0)
    seen = house.read_view(view)
    mem = house_walk.recall(memory)
    saw = ""
    if not mem.moves and mem.votes:
        # Before the first walk, the view after the last start sweep is the fourth side of the
        # start room: its bottom floor votes too (and is written down for later calls).
        saw = house_walk.bottom_floors(view)
        for floor, share in house_walk.read_floors(saw).items():
            mem.votes[floor] = mem.votes.get(floor, 0.0) + share
        mem.start = max(mem.votes, key=lambda r: mem.votes[r])
    here = house_walk.room_now(mem, pose) or seen.room
    target = ask.target_room
    placed = house_walk.doors_in_view(view, pose)
    if here is not None and mem.moves:
        # A doorway nearer than the nearest floor the camera sees (2 m ahead at 320x240, 1.5 m
        # at 512x512) shows only the far room's floor, never the threshold where the floors meet:
        # placed as at the start, right ahead (issue 38's fourth stop; before it, a look round
        # from 1.75 m in front of a doorway placed nothing and the agent wandered off).
        for key, near_door in doors_right_ahead([(house_walk.bottom_floors(view), pose)], here).items():
            if key not in mem.doors and key not in placed:
                placed[key] = near_door
    merged = dict(mem.doors)
    views = start_views(memory) + ([(saw, pose.yaw)] if saw else [])
    for key, near_door in doors_at_start(views, mem.start).items():
        merged.setdefault(key, near_door)
    for key, seen_door in placed.items():
        merged[key] = house_walk.better(merged.get(key), seen_door)
    doors = house_walk.square_up(merged)
    base: dict[str, object] = {"at": f"{pose.x:+.2f},{pose.y:+.2f}", "in": here or "unknown"}
    if placed:
        base["doors"] = "; ".join(d.text() for d in placed.values())
    if saw:
        base["saw"] = saw
        base["facing"] = round(pose.yaw)

    def goto(args: dict[str, object], why: str, **extra: object) -> tuple[str, dict[str, object], str]:
        return "GOTO", {**args, **base, **extra}, why

    def sweep(why: str) -> tuple[str, dict[str, object], str]:
        # A quarter turn: the seeker sees the view each one starts from, so four of them show
        # (and place the doorways of) the whole room with a 90-degree field of view.
        extra = {"doors": base["doors"]} if "doors" in base else {}
        return "SWEEP", {"direction": "left", "turns": 3, "in": here, **extra}, why

    prev = house_walk.intent_args(memory[-1]) if memory else None

    def face(side: str, degrees: int, why: str) -> tuple[str, dict[str, object], str]:
        if prev is not None and prev[0] == "FACE" and prev[1].get("direction") not in (side, None):
            # Never turn straight back: two goals either side of the centre would swing the view
            # left and right forever. Walk toward what is ahead, else keep turning the same way.
            way, reach = house.open_way(view)
            if reach >= house.OPEN_MIN_SHARE and house.steer(way)[0] == "ahead":
                return "GOTO", {"direction": "ahead", "steps": 3, **base}, "keep the heading; walk on"
            side = str(prev[1].get("direction"))
        return (
            "FACE",
            {"direction": side, "degrees": degrees, **({"doors": base["doors"]} if "doors" in base else {})},
            why,
        )

    if len(memory) >= 4 and all(m.startswith("FACE") for m in memory[-4:]):
        # Four turns on the spot and nothing to walk to: walk anyway, toward the most open floor
        # (a blocked step then takes the agent aside), rather than turn round for ever.
        return "GOTO", {"direction": "ahead", "steps": 2, **base}, "turned enough; walk on"
    visited = set(mem.rooms) | ({here} if here else set())
    last = mem.moves[-1] if mem.moves else None
    blocked = mem.last_failed and mem.last_intent == "GOTO"
    fails = 0
    for m in reversed(mem.moves):
        if not m.failed:
            break
        fails += 1
    if blocked and (fails >= 2 or last is None or last.door is None):
        # Something in the way the floor check missed (a jamb, a table's overhang): step aside
        # toward the freer side, blocked again further round the same way, then back off the way
        # the agent came and try the other side (a corner between furniture blocks every step
        # aside on one side; before issue 38's third stop one episode turned aside for 31 decisions).
        side = house.freer_side(view)
        rung = (fails - 1) % len(ESCAPE)
        if rung > 0:
            prev = house_walk.intent_args(memory[-1]) if memory else None
            if prev is not None and prev[1].get("aside"):
                side = str(prev[1].get("first", prev[1].get("direction", side)))
        turn, steps, flip = ESCAPE[rung]
        toward = ("right" if side == "left" else "left") if flip else side
        why = _ASIDE if turn < 180 else "blocked again and again; back off the way I came"
        return goto({"direction": toward, "degrees": turn, "steps": steps}, why, aside=rung + 1, first=side)

    if target is not None and here == target:
        sweeps = _sweeps_in(memory, here)
        last_line = memory[-1] if memory else ""
        # A DONE the controller refused (the views do not settle it yet) buys one more spot to
        # look round from, rather than the same DONE again.
        refused = sum(1 for m in memory if m.startswith("DONE was refused"))
        cap = MORE_SWEEPS_IN_TARGET + LOOK_ROUND * refused
        if sweeps < SWEEPS_IN_TARGET or (sweeps % LOOK_ROUND != 0 and sweeps < cap):
            return sweep(f"in the {here}: turn round to see all of it")
        x, why = _inside_goal(ask, seen, here)
        if x is not None:
            side, turns = house.steer(x)
            if side in ("left", "right"):
                return face(side, 30 * turns, why)
            return goto({"direction": "ahead", "steps": 2}, why, target="the thing to read")
        if sweeps < cap and not last_line.startswith("GOTO"):
            inward = _inward(mem.moves, here, doors)
            if inward is not None:
                # Further in along the way it came in: the floor within 1.5 m never shows to a
                # level camera, so "open floor ahead" can lead straight back out through the
                # doorway (one tuning episode went to and fro across it for five spots).
                further = house_walk.Leg(30.0 * round(house_walk.wrap(inward - pose.yaw) / 30.0), 4)
                return goto(house_walk.goto_args(further), f"a new spot further into the {here} to look from")
            way, reach = house.open_way(view)
            side, turns = house.steer(way)
            if reach >= house.OPEN_MIN_SHARE and side == "ahead":
                steps = 4
                ahead = house_walk.floor_ahead(view, here, steps * house_walk.STEP_M)
                if ahead is not None:
                    steps = max(1, int((ahead[1] - 0.5) / house_walk.STEP_M))
                return goto({"direction": "ahead", "steps": steps}, f"a new spot in the {here} to look from")
            if reach >= house.OPEN_MIN_SHARE:
                return face(side, 30 * turns, f"toward open floor in the {here}")
            return face("right", 90, "no open floor ahead; turn away")
        if sweeps < cap:
            return sweep(f"in the {here}: look round from here")
        return "DONE", {}, f"looked round the {here} from {sweeps // LOOK_ROUND} spots"

    if ask.kind == "location" and target is None:
        far = [o for o in [*seen.objects, *seen.unread] if o.colour == ask.colour and not o.near]
        if far:
            o = max(far, key=lambda o: o.area)
            side, turns = house.steer(o.x)
            why = f"walk up to the {o.colour} thing to read it"
            if side in ("left", "right"):
                return face(side, 30 * turns, why)
            return goto({"direction": "ahead", "steps": 2}, why, target=f"the {o.colour} thing")
        if (
            here is not None
            and mem.moves
            and (_sweeps_in(memory, here) % LOOK_ROUND != 0 or _sweeps_in(memory, here) == 0)
        ):
            return sweep(f"in the {here}: turn round to see it")

    # Where to go next: the doorway to the next room on the known route to the target room, else
    # a doorway into a room not yet entered (the one already headed for first, then the nearest).
    known = house.read_map(memory)
    known.doors |= set(doors) | set(seen.links)
    known.visited |= visited
    # Doorways whose legs were blocked again and again (furniture in the way): try others first.
    tries: dict[str, int] = {}
    for m in mem.moves:
        if m.door is not None and m.failed:
            tries[m.door] = tries.get(m.door, 0) + 1
    hard = {k for k in doors if tries.get(_door_key(k), 0) >= DOOR_TRIES}
    door: house_walk.Door | None = None
    into: str | None = None
    # The doorway the agent last walked through: a route read from other views may point straight
    # back through it (a doorway glimpsed through two aligned ones), and following such routes
    # both ways walked one episode to and fro between two rooms for 48 steps. Going back is left
    # to the dead-end rule below.
    came = next(
        (m.door for m in reversed(mem.moves) if m.door is not None and m.enter == here and m.room != here),
        None,
    )
    if here is not None and target is not None:
        route = known.route(here, target)
        if (
            route is not None
            and len(route) >= 2
            and frozenset((here, route[1])) in doors
            and frozenset((here, route[1])) not in hard
            and _door_key(frozenset((here, route[1]))) != came
        ):
            door, into = doors[frozenset((here, route[1]))], route[1]
    if door is None and here is not None:
        fresh = {
            k: d for k, d in doors.items() if here in k and not (k - {here}) <= visited and k not in hard
        }
        if target is not None:
            fresh = {k: d for k, d in fresh.items() if target in k} or fresh
        if fresh:
            committed = next((k for k in fresh if last is not None and last.door == _door_key(k)), None)
            key = committed or min(fresh, key=lambda k: math.hypot(fresh[k].x - pose.x, fresh[k].y - pose.y))
            door, into = fresh[key], next(iter(key - {here}))
    if door is None and here is not None:
        # No doorway out of this room leads anywhere new: walk back through placed doorways to
        # the nearest room that has one (a dead end is left the way it was entered).
        hop = _hop_to_frontier(here, {k: d for k, d in doors.items() if k not in hard}, visited, target)
        if hop is not None:
            door, into = doors[hop], next(iter(hop - {here}))
    if door is not None and into is not None:
        swap = blocked and last is not None and last.door == _door_key(door.rooms)
        leg = house_walk.leg_through(door, pose, into, swap_order=swap)
        if leg is not None and leg.turn == 0 and not leg.crossing and blocked_ahead(view):
            # The leg straight ahead runs into something the view already shows (no floor in
            # front of the body): walk the other leg first, as after a blocked one.
            other = house_walk.leg_through(door, pose, into, swap_order=not swap)
            if other is not None and other.turn != 0:
                leg = other
        why = f"the doorway to the {into}" + (
            f", on the way to the {target}" if target and target != into else ""
        )
        if leg is None:
            # Already past its threshold by the map: the room ahead is the one entered.
            return goto(
                {"direction": "ahead", "steps": 2}, why, door=_door_key(door.rooms), enter=into, cross=0.0
            )
        extra: dict[str, object] = {"door": _door_key(door.rooms), "target": f"the doorway to the {into}"}
        if leg.crossing:
            extra.update(enter=into, cross=round(float(leg.cross_m or 0.0), 2))
        return goto(house_walk.goto_args(leg), why, **extra)

    looks = _sweeps_in(memory, here)
    if (
        here is not None
        and mem.moves
        and (looks == 0 or (looks % LOOK_ROUND != 0 and memory[-1].startswith("SWEEP")))
    ):
        # No doorway to walk to: look round this room in quarter turns, so every doorway out of
        # it is seen, and placed, from here.
        return sweep(f"in the {here}: look round for its doorways")
    # No doorway placed: head for the target room's floor, or a room not yet entered, in view.
    x, why = None, ""
    if target is not None and target in seen.floor_x and target != here:
        x, why = seen.floor_x[target], f"the {target} shows that way"
    else:
        fresh_floor = [r for r in seen.floor_x if r not in visited and r != here]
        if fresh_floor:
            r = max(fresh_floor, key=lambda r: seen.rooms.get(r, 0))
            x, why = seen.floor_x[r], f"a room not yet entered ({r}) shows that way"
    if x is None:
        way, reach = house.open_way(view)
        if reach < house.OPEN_MIN_SHARE:
            return face("right", 90, "no open floor ahead; turn away")
        x, why = way, "walk on over open floor to see more of the house"
    side, turns = house.steer(x)
    if side in ("left", "right"):
        return face(side, 30 * turns, why)
    steps = 4
    extra = {}
    ahead = house_walk.floor_ahead(view, here, steps * house_walk.STEP_M + 1.0)
    if (
        ahead is not None
        and ahead[0] in visited
        and ahead[0] != target
        and x is not None
        and "open floor" in why
    ):
        # Open floor that leads back into a room already walked through: look elsewhere first.
        return face("right", 90, f"the way ahead leads back into the {ahead[0]}; look elsewhere")
    if ahead is not None:
        steps = min(house_walk.MAX_STEPS, int((ahead[1] + 1.0) / house_walk.STEP_M))
        extra = {"enter": ahead[0], "cross": round(ahead[1], 2)}
    return goto({"direction": "ahead", "steps": steps}, why, **extra)


_ASIDE = "the way ahead is blocked; step aside"
ESCAPE: list[tuple[int, int, bool]] = [(60, 2, False), (60, 2, False), (180, 3, False), (90, 2, True)]
"""The ladder of ways out after blocked moves in a row (ours): degrees to turn, steps to walk, and
whether to turn away from the side first chosen. Two steps aside to the freer side, then back off
(turn round and walk back over floor just crossed), then the other side; then again."""


def _inward(
    moves: list[house_walk.Move], here: str, doors: dict[frozenset[str], house_walk.Door]
) -> float | None:
    """The heading the agent walked into ``here`` along (through the doorway of its last walk
    into it), or ``None`` when no such walk is on record."""
    for m in reversed(moves):
        if m.enter != here or m.door is None or m.room == here:
            continue
        door = doors.get(frozenset(m.door.split("/")))
        if door is None:
            return None
        fx, fy = house_walk.forward(door.through)
        if (door.x - m.at[0]) * fx + (door.y - m.at[1]) * fy < 0:
            return house_walk.wrap(door.through + 180.0)
        return door.through
    return None


BODY_COLUMNS = 0.14
"""Share of the frame's width the body (0.4 m) covers at the bottom edge, 1.5 m ahead at 512x512."""


def blocked_ahead(view: View) -> bool:
    """Whether something stands right in front of the body: no floor at the bottom edge in the
    middle columns as wide as the body (furniture or a wall nearer than the nearest floor the
    level camera sees)."""
    reach = house.floor_reach(view)
    w = reach.size
    half = max(1, round(w * BODY_COLUMNS / 2))
    return float(reach[w // 2 - half : w // 2 + half].min()) <= 0.0


def _door_key(rooms: frozenset[str]) -> str:
    return "/".join(sorted(rooms))


def _hop_to_frontier(
    here: str, doors: dict[frozenset[str], house_walk.Door], visited: set[str], target: str | None
) -> frozenset[str] | None:
    """The first doorway on the fewest-doorway walk, through placed doorways, from ``here`` to a
    room with a placed doorway into a room not yet entered (or into ``target``)."""
    paths: dict[str, list[frozenset[str]]] = {here: []}
    todo = [here]
    while todo:
        room = todo.pop(0)
        for key in sorted(doors, key=sorted):
            if room not in key:
                continue
            (nxt,) = key - {room}
            if paths[room] and (nxt == target or nxt not in visited):
                return paths[room][0]
            if nxt not in paths and nxt in visited:
                paths[nxt] = [*paths[room], key]
                todo.append(nxt)
    return None


NEAR_FLOOR_SHARE = 0.3
"""Share of a start view's bottom rows that another room's floor must fill for the policy to
take it for a doorway right ahead (ours)."""
NEAR_DOOR_M = 1.0
"""Where such a doorway is placed: this far ahead of the start (the floor at the frame's bottom
edge lies 1.5 m ahead at 512x512, so the threshold is nearer than that), toward the middle of
that floor in the bottom rows (an agent offset from the opening sees the jamb on one side)."""


def start_views(memory: list[str]) -> list[tuple[str, float]]:
    """The start views' nearest floors (:func:`house_walk.bottom_floors`) and headings, as the
    start sweeps and the first walk wrote them down."""
    out: list[tuple[str, float]] = []
    for line in memory:
        got = house_walk.intent_args(line)
        if got is None or "saw" not in got[1] or "facing" not in got[1]:
            continue
        facing = got[1]["facing"]
        if isinstance(facing, int | float):
            out.append((str(got[1]["saw"]), float(facing)))
    return out


def doors_at_start(
    views: list[tuple[str, float]], start: str | None
) -> dict[frozenset[str], house_walk.Door]:
    """Doorways the start views show too close for their threshold to be seen: a view whose
    nearest floor was mostly another room's (the agent starts by that room's doorway, facing it).
    Each is placed :data:`NEAR_DOOR_M` ahead of the start, toward the middle of that floor in the
    view's bottom rows, and walked through square, along the view's heading."""
    if start is None:
        return {}
    return doors_right_ahead([(saw, house_walk.Pose2(0.0, 0.0, facing)) for saw, facing in views], start)


def doors_right_ahead(
    views: list[tuple[str, house_walk.Pose2]], here: str
) -> dict[frozenset[str], house_walk.Door]:
    """Doorways out of ``here`` too close for their threshold to show: views (their nearest
    floors, :func:`house_walk.bottom_floors`, and the poses they were taken from) whose bottom
    rows were mostly another room's floor. Each is placed :data:`NEAR_DOOR_M` ahead of its pose,
    toward the middle of that floor, and walked through square, along the view's heading."""
    out: dict[frozenset[str], tuple[float, house_walk.Door]] = {}
    for saw, at in views:
        for room, (share, x) in house_walk.read_floors_at(saw).items():
            key = frozenset((here, room))
            if room == here or share < NEAR_FLOOR_SHARE or (key in out and out[key][0] >= share):
                continue
            right = NEAR_DOOR_M * math.tan(math.radians(house.bearing(x)))
            cx, cy = at.to_world(NEAR_DOOR_M, right)
            through = 30.0 * round(house_walk.wrap(at.yaw) / 30.0)
            door = house_walk.Door(key, round(cx, 2), round(cy, 2), through, 1.0)
            out[key] = (share, door)
    return {k: d for k, (_, d) in out.items()}


def looks_in(memory: list[str], room: str | None) -> int:
    """Quarter-turn sweeps taken in ``room`` (each records the room it was taken in)."""
    return _sweeps_in(memory, room)


def _sweeps_in(memory: list[str], room: str | None) -> int:
    """Quarter-turn sweeps taken in ``room`` (each records the room it was taken in)."""
    n = 0
    for m in memory:
        got = house_walk.intent_args(m)
        if got is not None and got[0] == "SWEEP" and got[1].get("in") == room:
            n += 1
    return n


def _inside_goal(ask: house.HouseAsk, seen: house.HouseView, here: str) -> tuple[float | None, str]:
    """In the target room: the far thing of the named kind (else any unread blob) to walk up to."""
    if ask.kind not in house.OBJECT_KINDS:
        return None, f"in the {here}"
    far = [o for o in seen.objects if ask.category in (None, o.category) and not o.near]
    far = [o for o in far or seen.unread if o.room in (here, None)]
    if not far:
        return None, f"in the {here}"
    o = max(far, key=lambda o: o.area)
    return o.x, f"walk up to the {o.colour} {o.category or 'thing'} to read it"


def nav_intent(
    task: Task,
    view: View,
    memory: list[str],
    trail: list[str],
    remaining: int,
    ask: house.HouseAsk | None = None,
    pose: object = None,
    steps_used: int = 0,
) -> tuple[str, dict[str, object], str]:
    """EviSeek's next intent in a navigation world: ``(intent, args, why)``. ``pose`` is the
    dead-reckoned pose the seeker was shown (a :class:`~eviseek.types.Pose` as a dict);
    ``steps_used`` the steps the episode has taken (the seeker is told them)."""
    if remaining <= 0:
        return "DONE", {}, "no steps left"
    if ask is not None:
        looked = sum(1 for m in memory if m.startswith("SWEEP") and "'saw'" in m)
        if looked < START_SWEEPS and steps_used < 3 * START_SWEEPS:
            # (The step count guards a working memory kept per subtask, eviseek-nav:paper: a new
            # subtask's empty memory would otherwise turn round at the start spot again.)
            # A full turn in quarter turns, each recording the floor that fills the bottom rows
            # of the view it starts from: summed over the four sides, the start room's floor
            # wins even when the agent starts by a doorway and looks into the next room.
            saw = house_walk.bottom_floors(view)
            at = _pose(pose)
            args: dict[str, object] = {"direction": "left", "turns": 3, "saw": saw}
            if at is not None:
                args["facing"] = round(at.yaw)
            placed = house_walk.doors_in_view(view, at) if at is not None else {}
            if placed:
                args["doors"] = "; ".join(d.text() for d in placed.values())
            return "SWEEP", args, "scan the room around the current spot"
        return house_intent(ask, view, memory, trail, remaining, _pose(pose))
    swept = sum(1 for m in memory if m.startswith("SWEEP"))
    if swept < 2:
        return "SWEEP", {"direction": "left", "turns": 6}, "scan the room around the current spot"
    side = target_side(task, view)
    if side is not None and target_size(task, view) >= 0.2:
        return "DONE", {}, "the named object fills much of the view"
    if side == "ahead":
        return "APPROACH", {"steps": 4, "target": " ".join(task.colors)}, "close in on the named colour"
    if side in ("left", "right"):
        return "FACE", {"direction": side, "degrees": 30}, f"turn toward the named colour on the {side}"
    last = (trail or [""])[-1]
    if _FAILED.search(last):
        # Always the same way: alternating sides would turn back into the same wall.
        return "FACE", {"direction": "right", "degrees": 90}, "the way ahead is blocked; turn away"
    return "GOTO", {"direction": "ahead", "steps": 8}, "walk on to see more of the house"


def nav_atomic(
    task: Task,
    view: View,
    actions: list[str],
    failed_last: bool,
    legal: list[str],
    ask: house.HouseAsk | None = None,
    settled: bool = False,
) -> tuple[str | None, str]:
    """Single-model's next atomic action in a navigation world (None: nothing more to do)."""
    turns = sum(1 for a in actions[:12] if a == "turn_left")
    if turns < 11 and len(actions) < 11 and "turn_left" in legal:
        return "turn_left", "scan the room around the starting spot"
    if ask is not None:
        if settled:
            return None, "what I have seen settles the question"
        side, why = house.heading(ask, view)
        if side in ("left", "right") and f"turn_{side}" in legal and actions[-2:] != [f"turn_{side}"] * 2:
            return f"turn_{side}", why
        if failed_last:
            return ("turn_right" if "turn_right" in legal else None), "the way ahead is blocked; turn away"
        if house.read_view(view).room == ask.target_room and side is None and actions[-1:] != ["turn_left"]:
            return "turn_left", f"look round the {ask.target_room}"
        return ("move_forward" if "move_forward" in legal else None), why if side == "ahead" else "walk on"
    side = target_side(task, view)
    if side is not None and target_size(task, view) >= 0.2:
        return None, "the named object fills much of the view"
    if side in ("left", "right") and f"turn_{side}" in legal:
        return f"turn_{side}", f"turn toward the named colour on the {side}"
    if failed_last:
        # Always the same way: alternating sides would turn back into the same wall.
        return ("turn_right" if "turn_right" in legal else None), "the way ahead is blocked; turn away"
    return ("move_forward" if "move_forward" in legal else None), "walk on to see more of the house"


def failed(text: str) -> bool:
    """Whether an action-outcome text reports a failure."""
    return bool(_FAILED.search(text))
