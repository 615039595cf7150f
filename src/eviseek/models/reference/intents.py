"""EviSeek's side of the viewing routines: the next intent (a parameterised macro-action) of a
routine, from the current view and the agent's relative pose estimate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eviseek.models.reference.physical_tests import test_action
from eviseek.models.reference.policy import (
    MOVE_M,
    RISE_TARGET_M,
    PoseEstimate,
    counted_whole,
    looking_down,
    peek_side,
)
from eviseek.models.reference.task import Task
from eviseek.models.reference.views import centring, visible_fraction
from eviseek.models.reference.vision import View


@dataclass
class Intent:
    """A seeker decision: an intent name (or DONE/BLOCKED), its arguments, a target, a reason."""

    intent: str
    args: dict[str, Any] = field(default_factory=dict)
    target: str = ""
    reasoning: str = ""

    def reply(self) -> dict[str, Any]:
        """The reply object of the seeking stage."""
        return {"intent": self.intent, "args": self.args, "target": self.target, "reasoning": self.reasoning}


def _target_text(task: Task) -> str:
    names = [o.name.replace("_", " ") for o in task.objects]
    if task.reference is not None and task.reference.name.replace("_", " ") not in names:
        names.insert(0, task.reference.name.replace("_", " "))
    return ", ".join(names)


def seek_intent(
    routine: str,
    task: Task,
    view: View,
    pose: PoseEstimate,
    offered: list[str],
    memory: list[str],
    remaining: int,
    specs: list[dict[str, Any]] | None = None,
) -> Intent:
    """The next intent of ``routine`` given the current view and the relative pose estimate.

    ``specs`` are the offered intents with their parameters (needed to name objects in tests).
    """
    if remaining <= 0:
        return Intent("DONE", reasoning="no steps left")
    tried = len(memory)
    if routine == "test":
        step = test_action(task, specs or [], "\n".join(memory))
        if step is None:
            looked = any(m.startswith("RISE_TOPDOWN") for m in memory)
            if task.kind == "fit" and not looked and "RISE_TOPDOWN" in offered and remaining >= 5:
                # From low down the walls hide what ended inside; look into the bin from above.
                return Intent(
                    "RISE_TOPDOWN", {"rise": 2, "degrees": 45}, reasoning="look into the container from above"
                )
            return Intent("DONE", reasoning="the test has been run and its outcome read")
        name, args, why = step
        return Intent(name, args, reasoning=why)
    if routine == "side" and _has_param(specs or [], "LOOK_UP", "down"):
        if tried == 0:
            # The same side view as Single-model's SIDE_PLAN: 0.5 m down, 0.5 m back, 45 degrees up.
            return Intent(
                "LOOK_UP",
                {"degrees": 45, "back": 2, "down": 2},
                reasoning="come down, back away and tilt up so the boxes show their sides and heights",
            )
        return Intent("DONE", reasoning="the boxes have been seen from the side")
    if routine in ("overhead", "side"):
        # Without a way down to a side view, the count from above is the best there is.
        return _overhead_intent(task, view, pose, offered, tried)
    if routine == "drape":
        return drape_intent(offered, tried)
    if routine == "still":
        if tried == 0 and "FACE" in offered:
            # The answer rests on the kept views only: a glance just aside keeps one like the first.
            return Intent(
                "FACE", {"direction": "left", "degrees": 15}, reasoning="a glance just aside to keep the view"
            )
        return Intent("DONE", reasoning="the question is about the first view, which is in hand")
    if routine == "first":
        # A glance aside and back: the view after it is the first one again, and kept as evidence.
        if tried == 0 and "FACE" in offered:
            return Intent("FACE", {"direction": "left", "degrees": 15}, reasoning="a glance aside")
        if tried == 1 and "FACE" in offered:
            return Intent(
                "FACE", {"direction": "right", "degrees": 15}, reasoning="back to the first view, to keep it"
            )
        return Intent("DONE", reasoning="the question is about the first view exactly as it was")
    if routine == "turn_round":
        return _turn_round_intent(offered, tried)
    if routine == "jar":
        if tried == 0 and "RISE_TOPDOWN" in offered:
            return Intent("RISE_TOPDOWN", {"rise": 3, "degrees": 90}, reasoning="rise and look straight down")
        if tried == 1 and "APPROACH" in offered:
            return Intent("APPROACH", {"steps": 2}, reasoning="move ahead until the jar is below the camera")
        return Intent("DONE", reasoning="the jar has been seen from above")
    if routine == "around":
        return _around_intent(task, view, offered, tried, memory)
    if routine == "tilted":
        return _tilted_intent(task, view, pose, offered, tried)
    if tried == 0 and "SWEEP" in offered:
        return Intent("SWEEP", {"direction": "left", "turns": 3}, reasoning="scan the scene once")
    return Intent("DONE", reasoning="the scan is done")


def _has_param(specs: list[dict[str, Any]], intent: str, param: str) -> bool:
    """Whether the offered ``intent`` takes ``param`` (LOOK_UP takes ``down`` only where the
    environment can lower the camera)."""
    for spec in specs:
        if spec.get("name") == intent:
            return any(isinstance(p, dict) and p.get("name") == param for p in spec.get("params") or [])
    return False


def _overhead_intent(task: Task, view: View, pose: PoseEstimate, offered: list[str], tried: int) -> Intent:
    target = _target_text(task)
    if pose.z < RISE_TARGET_M - 1e-6 or not looking_down(pose):
        if "RISE_TOPDOWN" not in offered:
            return Intent("BLOCKED", reasoning="this agent cannot rise and look down")
        rise = max(1, min(4, round((RISE_TARGET_M - pose.z) / MOVE_M)))
        degrees = max(15.0, 90.0 + pose.pitch)
        return Intent(
            "RISE_TOPDOWN",
            {"rise": rise, "degrees": degrees},
            reasoning="go up and look straight down so the layout shows without foreshortening",
        )
    if tried >= 5:
        return Intent("DONE", reasoning="as centred as a few moves allow")
    where = centring(task, view)
    whole = visible_fraction(task, view) >= 1.0 if task.kind != "count" else counted_whole(task, view)
    if where is None:
        if "APPROACH" in offered:
            return Intent(
                "APPROACH", {"steps": 2}, target=target, reasoning="nothing named is below me yet; move ahead"
            )
        return Intent("BLOCKED", reasoning="the objects are not in view and I cannot move ahead")
    x, y = where
    if y < 0.3 and "APPROACH" in offered:
        steps = 2 if y < 0.12 else 1
        return Intent(
            "APPROACH",
            {"steps": steps},
            target=target,
            reasoning="the objects sit near the top of the picture; move ahead to centre them",
        )
    if y > 0.72 and "RETREAT_WIDE" in offered:
        return Intent(
            "RETREAT_WIDE", {"steps": 1}, reasoning="the objects sit near the bottom of the picture; back up"
        )
    if abs(x - 0.5) > 0.3 and "GOTO" in offered:
        side = "left" if x < 0.5 else "right"
        return Intent(
            "GOTO",
            {"direction": side, "degrees": 90, "steps": 1},
            target=target,
            reasoning=f"the objects sit far to the {side}; turn and shift that way",
        )
    if whole:
        return Intent("DONE", reasoning="everything named is in view, whole, from straight above")
    if "RETREAT_WIDE" in offered and tried < 4:
        return Intent(
            "RETREAT_WIDE", {"steps": 1}, reasoning="something is cut off at the border; widen the view"
        )
    return Intent("DONE", reasoning="the overhead view is as complete as it gets")


def _around_intent(task: Task, view: View, offered: list[str], tried: int, memory: list[str]) -> Intent:
    target = _target_text(task)
    b = view.largest(task.objects[0].color) if task.objects else None
    whole = b is not None and not b.touches_edge and b.area >= 150
    if tried == 0 and "ORBIT" in offered:
        side = peek_side(task, view)
        return Intent(
            "ORBIT",
            {"direction": side, "steps": 2},
            target=target,
            reasoning=f"the object peeks out on the {side}; circle that way past the board's edge",
        )
    if whole and tried >= 1:
        return Intent("DONE", reasoning="the object is in view, whole")
    if tried == 1 and "ORBIT" in offered:
        side = "right" if any("right" in m for m in memory[:1]) else "left"
        if b is None:
            # Not a trace of it this way: it must peek out on the other side. Go back and past.
            other = "left" if side == "right" else "right"
            # No target to track: it stays hidden behind the board until the far edge is passed.
            return Intent(
                "ORBIT",
                {"direction": other, "steps": 4},
                reasoning=f"nothing of it on the {side}; circle round to the {other}",
            )
        return Intent(
            "ORBIT", {"direction": side, "steps": 1}, target=target, reasoning="circle a little further"
        )
    if tried == 2 and "RISE_TOPDOWN" in offered:
        return Intent("RISE_TOPDOWN", {"rise": 2, "degrees": 45}, reasoning="look over the board from above")
    return Intent("DONE", reasoning="no better view of the object within reach")


def _tilted_intent(task: Task, view: View, pose: PoseEstimate, offered: list[str], tried: int) -> Intent:
    target = _target_text(task)
    if tried == 0:
        if view.steep:
            if "LOOK_UP" in offered:
                # Looking steeply down: come lower and pitch up so the object shows its sides.
                return Intent(
                    "LOOK_UP",
                    {"degrees": 45, "back": 2},
                    reasoning="I see the object from steeply above; back away and tilt up to see its side",
                )
            # Otherwise only sideways shifts are on offer among the intents.
            if "ORBIT" in offered:
                return Intent(
                    "ORBIT",
                    {"direction": "right", "steps": 1},
                    target=target,
                    reasoning="shift sideways so the object shows a side, not only its top",
                )
        elif "RISE_TOPDOWN" in offered:
            return Intent(
                "RISE_TOPDOWN",
                {"rise": 2, "degrees": 45},
                reasoning="look at the object from well above its first, level view",
            )
    return Intent("DONE", reasoning="the object has been seen from a second elevation")


def drape_intent(offered: list[str], tried: int) -> Intent:
    if tried == 0 and "APPROACH" in offered:
        return Intent("APPROACH", {"steps": 3}, reasoning="move ahead until the cloth is below the camera")
    if tried <= 1 and "RISE_TOPDOWN" in offered:
        return Intent(
            "RISE_TOPDOWN",
            {"rise": 1, "degrees": 60},
            reasoning="rise a little and look straight down on the cloth",
        )
    return Intent("DONE", reasoning="the cloth has been seen from above")


def _turn_round_intent(offered: list[str], tried: int) -> Intent:
    """The turn-round routine as intents: the same spot, facing back, tilted down, swept across."""
    if tried == 0 and "FACE" in offered:
        return Intent(
            "FACE", {"direction": "left", "degrees": 135}, reasoning="turn round to what the mirror showed"
        )
    if tried == 1 and "RISE_TOPDOWN" in offered:
        # Rising keeps the spot on the table, so distances along the table still count from it.
        return Intent("RISE_TOPDOWN", {"rise": 1, "degrees": 30}, reasoning="look down at the objects")
    if tried == 2 and "FACE" in offered:
        return Intent("FACE", {"direction": "left", "degrees": 90}, reasoning="sweep across the objects")
    return Intent("DONE", reasoning="the objects have been seen directly")
