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


_IN_ROOM = re.compile(r"\bin the ([a-z]+(?: [a-z]+)?)\b")


def visited_rooms(lines: list[str]) -> set[str]:
    """Rooms the notes say a view was taken in ("in the kitchen: ...")."""
    return {m for line in lines for m in _IN_ROOM.findall(line) if m in house.FLOOR_LOOKS}


def house_intent(
    ask: house.HouseAsk, view: View, memory: list[str], trail: list[str], remaining: int
) -> tuple[str, dict[str, object], str]:
    """EviSeek's next intent for a house question."""
    seen = house.read_view(view)
    here = seen.room
    sweeps_here = sum(
        1 for m in memory if m.startswith("SWEEP") and here is not None and f"in the {here}" in m
    )
    last = (memory or [""])[-1]
    if here is not None and here == ask.target_room and sweeps_here < 2 and not last.startswith("SWEEP"):
        return "SWEEP", {"direction": "left", "turns": 6}, f"in the {here}: turn round to see all of it"
    side, why = house.heading(ask, view, visited_rooms(memory))
    if side in ("left", "right"):
        return "FACE", {"direction": side, "degrees": 30}, why
    if side == "ahead" and not _FAILED.search((trail or [""])[-1]):
        return "GOTO", {"direction": "ahead", "steps": 3}, why
    if _FAILED.search((trail or [""])[-1]):
        return "FACE", {"direction": "right", "degrees": 90}, "the way ahead is blocked; turn away"
    return "GOTO", {"direction": "ahead", "steps": 6}, "walk on to see more of the house"


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
        side, why = house.heading(ask, view, set())
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
