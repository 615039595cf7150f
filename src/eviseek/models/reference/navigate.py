"""The reference policy in a navigation-only world (a house): scan, head for colour, walk on.

A navigation interface has forward moves and turns but no vertical moves (no ``move_up``), so the
tabletop routines (rise for an overhead view, circle a board) cannot run. Here the policy does
what a simple explorer does, reading only the current picture and the reported action outcomes:

* scan a full circle first, so every side of the starting room has been seen once;
* when a colour the question names is in view, approach it (centre it first with a turn);
* otherwise walk ahead; after a blocked move, turn right and walk on.

The same recipe serves EviSeek's seeker (as intents), Single-model (as atomic actions) and the
frontier baseline's direction hint. It is a smoke-test player, not a navigator: it has no map.
"""

from __future__ import annotations

import re

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


def nav_intent(
    task: Task, view: View, memory: list[str], trail: list[str], remaining: int
) -> tuple[str, dict[str, object], str]:
    """EviSeek's next intent in a navigation world: ``(intent, args, why)``."""
    if remaining <= 0:
        return "DONE", {}, "no steps left"
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
    task: Task, view: View, actions: list[str], failed_last: bool, legal: list[str]
) -> tuple[str | None, str]:
    """Single-model's next atomic action in a navigation world (None: nothing more to do)."""
    turns = sum(1 for a in actions[:12] if a == "turn_left")
    if turns < 11 and len(actions) < 11 and "turn_left" in legal:
        return "turn_left", "scan the room around the starting spot"
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
