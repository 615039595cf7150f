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

import re

from eviseek.models.reference import house
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


ENTER_STEPS = 8
"""Steps (2 m) walked on into the target room when its floor first fills the bottom of the view
(that floor lies a metre or two ahead); the memory line of that GOTO, unblocked, marks the room
as entered."""
_ASIDE = "the way ahead is blocked; step aside"
_ASIDE_ARGS = "'degrees': 60, 'steps': 2}"
_ENTER = f"GOTO {{'direction': 'ahead', 'steps': {ENTER_STEPS}}}"


def house_intent(
    ask: house.HouseAsk, view: View, memory: list[str], trail: list[str], remaining: int
) -> tuple[str, dict[str, object], str]:
    """EviSeek's next intent for a house question.

    The floor at the bottom of the frame lies a metre or two ahead, so a view can show the
    target room before the agent stands in it: the policy first walks on into it, then turns
    round (two half-turn sweeps) once there. Otherwise it heads for the goal
    :func:`house.goal_x` picks on the map the notes record, turning only when the goal lies more
    than 20 degrees off centre (whole 30-degree turns), else walking three steps; with no goal in
    view, or after a blocked move, it heads for the most open floor in view
    (:func:`house.open_way`), and turns right by 90 degrees when there is none."""
    seen = house.read_view(view)
    here = seen.room
    blocked = _FAILED.search((trail or [""])[-1]) is not None
    if blocked:
        # Something the floor check missed is in the way (a door jamb, a table's overhang): turn
        # toward the freer side and walk on past it; blocked again, keep turning the same way,
        # so repeated blocks add up to turning round rather than swinging back and forth.
        last = (memory or [""])[-1]
        again = last.startswith("GOTO") and _ASIDE_ARGS in last and _FAILED.search(last) is not None
        side = ("left" if "'direction': 'left'" in last else "right") if again else house.freer_side(view)
        return "GOTO", {"direction": side, "degrees": 60, "steps": 2}, _ASIDE
    if here is not None and here == ask.target_room:
        entered = any(
            m.startswith(_ENTER) and f"in the {here}" in m and not _FAILED.search(m) for m in memory
        )
        swept = sum(1 for m in memory if m.startswith("SWEEP") and f"in the {here}" in m)
        last = (memory or [""])[-1]
        if not entered:
            walk_in = f"the {here} lies ahead: walk into it"
            return "GOTO", {"direction": "ahead", "steps": ENTER_STEPS}, walk_in
        if swept < 2 and not last.startswith("SWEEP"):
            return "SWEEP", {"direction": "left", "turns": 6}, f"in the {here}: turn round to see all of it"
    x, why = house.goal_x(ask, view, house.read_map(memory))
    if x is not None:
        side, turns = house.steer(x)
        if side in ("left", "right"):
            return "FACE", {"direction": side, "degrees": 30 * turns}, why
        return "GOTO", {"direction": "ahead", "steps": 3}, why
    way, reach = house.open_way(view)
    if reach < house.OPEN_MIN_SHARE:
        return "FACE", {"direction": "right", "degrees": 90}, "no open floor ahead; turn away"
    side, turns = house.steer(way)
    if side in ("left", "right"):
        return "FACE", {"direction": side, "degrees": 30 * turns}, "turn toward the most open floor"
    return "GOTO", {"direction": "ahead", "steps": 4}, "walk on over open floor to see more of the house"


def nav_intent(
    task: Task,
    view: View,
    memory: list[str],
    trail: list[str],
    remaining: int,
    ask: house.HouseAsk | None = None,
) -> tuple[str, dict[str, object], str]:
    """EviSeek's next intent in a navigation world: ``(intent, args, why)``."""
    if remaining <= 0:
        return "DONE", {}, "no steps left"
    swept = sum(1 for m in memory if m.startswith("SWEEP"))
    if swept < 2:
        return "SWEEP", {"direction": "left", "turns": 6}, "scan the room around the current spot"
    if ask is not None:
        return house_intent(ask, view, memory, trail, remaining)
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
