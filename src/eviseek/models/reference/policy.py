"""Where to look next: the reference policy's viewing routines, for intents and for atomic actions.

A routine is a short recipe for an informative view, chosen by the kind of question:

* ``overhead``: rise, tilt until the camera looks straight down, then shift until the named
  objects (or the counted ones) sit whole in the middle of the picture. Layout, contact, size
  and counting questions are settled there: perspective no longer hides offsets or gaps, and
  boards no longer hide what stands behind them.
* ``around``: circle past the edge of an occluding board, on the side where the hidden object
  peeks out in the first view, to see the object whole and from low down (its outline and
  shading are clearest there).
* ``tilted``: look at a single object from a clearly different elevation than the first view.
* ``test``: run the physical test the question is about (drop the object into the bin, pour,
  set it on the slope, build the tower) and read the outcome the environment reports.
* ``side``: come down and back from a straight-down start and tilt up to 45 degrees, so boxes
  show their sides (cubes against look-alike taller blocks). EviSeek's intents cannot lower the
  camera or tilt it up, so for EviSeek this routine is the overhead one.
* ``drape``: from the oblique start, move ahead over the cloth, rise and look straight down, where
  the cloth's flat top (or its lack) shows what it hides.
* ``jar``: from the low start facing the glass jar, rise, move over the jar and look straight
  down, where an object inside shows within the jar's footprint and one behind it outside.
* ``still``: no move at all, for questions about the first view itself (is this object seen in
  the mirror?); moving would only lose the view the question means.
* ``look``: a short scan, for questions the policy cannot measure.

Each routine decides from the current picture and the agent's own dead-reckoned pose (which the
prompt states), never from the simulator. :func:`seek_intent` speaks EviSeek's intents;
:func:`next_atomic` speaks the atomic actions Single-model uses.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from eviseek.models.reference.solve import centring, visible_fraction
from eviseek.models.reference.task import TEST_KINDS, ObjectRef, Task
from eviseek.models.reference.vision import View

RISE_TARGET_M = 1.0
"""How far above its starting height the camera climbs for an overhead view."""
MOVE_M = 0.25
TURN_DEG = 15.0

_CAMERA_NAMES = frozenset(
    f"{verb}_{way}"
    for verb, ways in (
        ("move", ("forward", "backward", "left", "right", "up", "down")),
        ("turn", ("left", "right", "up", "down")),
    )
    for way in ways
)

ROUTINE_LABELS: dict[str, str] = {
    "overhead": "Overhead view",
    "around": "View past the board",
    "tilted": "Second elevation",
    "test": "Physical test",
    "side": "Side view",
    "drape": "Cloth from above",
    "jar": "Jar from above",
    "still": "First view",
    "look": "Look around",
}
"""Plan goals start with these labels, so the seeking stage knows which routine a goal asks for."""


def routine_for(task: Task) -> str:
    """The routine that best serves ``task``."""
    if task.kind == "shape":
        return "around" if task.occluder is not None else "tilted"
    if task.kind == "order":
        return "around"
    if task.tall_lookalikes:
        return "side"
    if task.kind == "covered":
        return "drape"
    if task.kind == "in_jar":
        return "jar"
    if task.kind == "in_mirror":
        return "still"
    if task.kind in TEST_KINDS:
        return "test"
    if task.kind == "unknown":
        return "look"
    return "overhead"


def routine_of_goal(goal: str, task: Task) -> str:
    """The routine a plan goal names by its label, else the task's own."""
    for name, label in ROUTINE_LABELS.items():
        if goal.strip().lower().startswith(label.lower()):
            return name
    return routine_for(task)


@dataclass
class PoseEstimate:
    """A relative pose estimate: metres and degrees from the start (the agent's own axes)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    yaw: float = 0.0
    pitch: float = 0.0
    pitch_floor: bool = False
    """A downward tilt was refused at the limit: the camera already looks straight down."""

    @classmethod
    def from_metadata(cls, data: dict[str, Any] | None) -> PoseEstimate:
        """Read the pose estimate an agent put in its request."""
        data = data or {}

        def num(key: str) -> float:
            return float(data.get(key, 0.0) or 0.0)

        return cls(x=num("x"), y=num("y"), z=num("z"), yaw=num("yaw"), pitch=num("pitch"))


@dataclass
class Replay:
    """A pose estimate rebuilt from the list of actions an agent reports having taken."""

    actions: list[str] = field(default_factory=list)
    clamped: list[bool] = field(default_factory=list)

    def pose(self) -> PoseEstimate:
        """Dead-reckon the actions (the same arithmetic a person would do with the step sizes)."""
        p = PoseEstimate()
        for name, clamp in zip(self.actions, self.clamped, strict=False):
            if name == "move_up" and not clamp:
                p.z += MOVE_M
            elif name == "move_down" and not clamp:
                p.z -= MOVE_M
            elif name == "turn_down":
                if clamp:
                    p.pitch_floor = True
                else:
                    p.pitch -= TURN_DEG
            elif name == "turn_up" and not clamp:
                p.pitch += TURN_DEG
            elif name == "turn_left":
                p.yaw += TURN_DEG
            elif name == "turn_right":
                p.yaw -= TURN_DEG
        return p

    def count(self, name: str) -> int:
        """How many times ``name`` was taken."""
        return sum(1 for a in self.actions if a == name)


def looking_down(pose: PoseEstimate, start_steep: bool = False) -> bool:
    """Whether the camera should now look straight down (six tilts, or a refused tilt)."""
    return pose.pitch_floor or pose.pitch <= -90.0 + 1e-6 or (start_steep and pose.pitch <= -60.0)


# --------------------------------------------------------------------------------------------
# EviSeek: intents


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
    if routine in ("overhead", "side"):
        return _overhead_intent(task, view, pose, offered, tried)
    if routine == "drape":
        return _drape_intent(offered, tried)
    if routine == "still":
        if tried == 0 and "FACE" in offered:
            # The answer rests on the kept views only: a glance just aside keeps one like the first.
            return Intent(
                "FACE", {"direction": "left", "degrees": 15}, reasoning="a glance just aside to keep the view"
            )
        return Intent("DONE", reasoning="the question is about the first view, which is in hand")
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
    whole = visible_fraction(task, view) >= 1.0 if task.kind != "count" else _counted_whole(task, view)
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


def _counted_whole(task: Task, view: View) -> bool:
    """Whether no candidate is cut off by the border of the picture."""
    if not task.objects:
        return True
    return all(not b.touches_edge for b in view.of(task.objects[0].color))


def _peek_side(task: Task, view: View) -> str:
    """Which side of the picture the named object shows on (where it peeks out past a board)."""
    if task.objects:
        b = view.largest(task.objects[0].color)
        if b is not None:
            return "right" if b.centroid[0] >= view.width / 2 else "left"
    return "right"


def _around_intent(task: Task, view: View, offered: list[str], tried: int, memory: list[str]) -> Intent:
    target = _target_text(task)
    b = view.largest(task.objects[0].color) if task.objects else None
    whole = b is not None and not b.touches_edge and b.area >= 150
    if tried == 0 and "ORBIT" in offered:
        side = _peek_side(task, view)
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


# --------------------------------------------------------------------------------------------
# physical tests


def _choice(specs: list[dict[str, Any]], action: str, param: str, ref: ObjectRef) -> str | None:
    """The legal value of ``param`` of ``action`` that names ``ref`` (matched by colour, then noun)."""
    for spec in specs:
        if spec.get("name") != action:
            continue
        choices: list[str] = []
        params = spec.get("params") or []
        if params and isinstance(params[0], dict):  # intent specs list their parameters as objects
            for p in params:
                if p.get("name") == param:
                    choices = list(p.get("choices") or [])
        else:  # action specs keep the choices in a mapping
            choices = list((spec.get("choices") or {}).get(param) or [])
        same_color = [c for c in choices if c.split("_")[0] == ref.color]
        exact = [c for c in same_color if ref.noun in c]
        if exact or same_color:
            return (exact or same_color)[0]
        return ref.name if not choices else None
    return None


def _offered(specs: list[dict[str, Any]]) -> set[str]:
    return {str(s.get("name")) for s in specs}


def test_action(task: Task, specs: list[dict[str, Any]], text: str) -> tuple[str, dict[str, str], str] | None:
    """The next physical test to run for ``task`` (None when done): action, arguments, reason.

    ``text`` holds the outcomes reported so far (history or memory lines), which is how a test
    sequence (building a tower) knows where it stands.
    """
    names = _offered(specs)
    objs = task.objects
    if task.kind == "fit" and len(objs) >= 2 and "put_inside" in names:
        if "inside=" in text:
            return None
        obj, box = (
            _choice(specs, "put_inside", "object", objs[0]),
            _choice(specs, "put_inside", "target", objs[1]),
        )
        if obj and box:
            return "put_inside", {"object": obj, "target": box}, "drop it in and see whether it ends inside"
    if task.kind == "overflow" and len(objs) >= 2 and "pour" in names:
        if "overflowed=" in text:
            return None
        src, dst = _choice(specs, "pour", "object", objs[0]), _choice(specs, "pour", "target", objs[1])
        if src and dst:
            return "pour", {"object": src, "target": dst}, "pour it and see whether anything spills"
    if task.kind == "slide" and objs and "put_on_slope" in names:
        if "slid=" in text:
            return None
        obj = _choice(specs, "put_on_slope", "object", objs[0])
        if obj:
            return "put_on_slope", {"object": obj}, "set it on the slope and watch it"
    if task.kind == "stack" and "put_on" in names:
        return _stack_step(task, specs, text)
    return None


_MANIPULATION_OUTCOME = re.compile(r"\b(put_on|put_back|place_on_table|pick_up|put_inside): (ok|failed)")

NON_CARRIERS = ("ball", "cone", "pyramid")
"""Shapes nothing can rest on: they belong at the top of a tower."""


def stack_orders(task: Task) -> list[list[ObjectRef]]:
    """Every bottom-to-top order of the objects, most plausible first (non-carriers on top)."""
    objs = list(task.objects)

    def rank(order: tuple[ObjectRef, ...]) -> tuple[int, int]:
        below = sum(1 for o in order[:-1] if o.shape in NON_CARRIERS)
        return below, 0 if order[-1].shape in NON_CARRIERS else 1

    return [list(o) for o in sorted(itertools.permutations(objs), key=rank)]


def _stack_plan(task: Task) -> Generator[tuple[str, ObjectRef, ObjectRef | None], bool, None]:
    """The test sequence for a tower, as (action, object, target); it reads each outcome back
    through ``send`` (True when the action succeeded) and stops when a full tower stood."""
    for order in stack_orders(task)[:3]:
        placed: list[ObjectRef] = []
        ok: bool = True
        for lower, upper in itertools.pairwise(order):
            ok = yield ("put_on", upper, lower)
            if not ok:
                break
            placed.append(upper)
        if ok:
            return
        # Undo the try, top first, so the next order starts from the table.
        for obj in reversed(placed):
            yield ("put_back", obj, None)


def _stack_step(task: Task, specs: list[dict[str, Any]], text: str) -> tuple[str, dict[str, str], str] | None:
    if len(task.objects) < 2:
        return None
    outcomes = [ok == "ok" for _, ok in _MANIPULATION_OUTCOME.findall(text)]
    plan = _stack_plan(task)
    try:
        step = next(plan)
        for ok in outcomes:
            step = plan.send(ok)
    except StopIteration:
        return None
    action, obj, target = step
    if action not in _offered(specs):
        return None
    a = _choice(specs, action, "object", obj)
    if a is None:
        return None
    if target is None:
        return action, {"object": a}, "undo the last try before the next order"
    b = _choice(specs, action, "target", target)
    if b is None:
        return None
    return (
        action,
        {"object": a, "target": b},
        f"try the {obj.name.replace('_', ' ')} on the {target.name.replace('_', ' ')}",
    )


# --------------------------------------------------------------------------------------------
# Single-model: one atomic action at a time


def next_atomic(
    routine: str,
    task: Task,
    view: View,
    replay: Replay,
    legal: list[str],
    first_view_steep: bool | None,
    specs: list[dict[str, Any]] | None = None,
    history: str = "",
) -> tuple[str | None, str]:
    """The next atomic action of ``routine`` (None when the routine is complete) and why.

    ``replay`` holds the actions taken so far (read from the prompt's history, whose text is
    ``history``); ``first_view_steep`` says whether the first view looked down (None when no
    longer known); ``specs`` are the legal actions with their arguments.
    """
    pose = replay.pose()
    if routine == "test":
        step = test_action(task, specs or [], history)
        if step is None:
            if task.kind == "fit":
                # From low down the walls hide what ended inside; look into the bin from above.
                tested_at = max(i for i, a in enumerate(replay.actions) if a not in _CAMERA_NAMES)
                after = replay.actions[tested_at + 1 :]
                plan = ["move_up", "move_up", "turn_down", "turn_down", "turn_down"]
                if len(after) < len(plan) and plan[len(after)] in legal:
                    return plan[len(after)], "look into the container from above"
            return None, "the test has been run and its outcome read"
        name, args, why = step
        inner = ", ".join(f"{k}={v}" for k, v in args.items())
        return f"{name}({inner})", why
    if routine == "overhead":
        return _overhead_atomic(task, view, replay, pose, legal)
    if routine == "around":
        return _around_atomic(task, view, replay, legal)
    if routine == "tilted":
        return _tilted_atomic(view, replay, legal, first_view_steep)
    if routine == "side":
        return _side_atomic(replay, legal)
    if routine == "still":
        return None, "the question is about the first view, which is in hand"
    if routine in ("drape", "jar"):
        route = DRAPE_PLAN if routine == "drape" else JAR_PLAN
        k = len(replay.actions)
        if k < len(route) and route[k] in legal:
            return route[
                k
            ], f"get above the {'cloth' if routine == 'drape' else 'jar'} and look straight down"
        return None, "seen from straight above"
    if replay.count("turn_left") < 3 and "turn_left" in legal:
        return "turn_left", "scan the scene"
    return None, "the scan is done"


def _overhead_atomic(
    task: Task, view: View, replay: Replay, pose: PoseEstimate, legal: list[str]
) -> tuple[str | None, str]:
    if pose.z < RISE_TARGET_M - 1e-6 and "move_up" in legal:
        return "move_up", "rise for a view from above"
    if not looking_down(pose) and "turn_down" in legal:
        return "turn_down", "tilt down towards a straight-down view"
    moves = sum(replay.count(m) for m in ("move_forward", "move_backward", "move_left", "move_right"))
    if moves >= 6:
        return None, "as centred as a few moves allow"
    where = centring(task, view)
    if where is None:
        return (
            ("move_forward", "nothing named below yet; move ahead") if "move_forward" in legal else (None, "")
        )
    x, y = where
    if y < 0.3 and "move_forward" in legal:
        return "move_forward", "objects near the top of the picture; move ahead"
    if y > 0.72 and "move_backward" in legal:
        return "move_backward", "objects near the bottom of the picture; back up"
    if x < 0.22 and "move_left" in legal:
        return "move_left", "objects near the left edge; shift left"
    if x > 0.78 and "move_right" in legal:
        return "move_right", "objects near the right edge; shift right"
    whole = visible_fraction(task, view) >= 1.0 if task.kind != "count" else _counted_whole(task, view)
    if not whole and moves < 4 and "move_up" in legal and pose.z < RISE_TARGET_M + 0.3:
        return "move_up", "something is cut off at the border; widen the view"
    return None, "everything named is in view from straight above"


def _around_atomic(task: Task, view: View, replay: Replay, legal: list[str]) -> tuple[str | None, str]:
    rights, lefts = replay.count("move_right"), replay.count("move_left")
    done = rights + lefts
    side = _peek_side(task, view) if done == 0 else ("right" if rights >= lefts else "left")
    move, turn = (f"move_{side}", "turn_left" if side == "right" else "turn_right")
    b = view.largest(task.objects[0].color) if task.objects else None
    whole = b is not None and not b.touches_edge and b.area >= 150
    last = replay.actions[-1] if replay.actions else None
    if last == move and turn in legal:
        return turn, "turn back towards the object"
    if done >= 2 and whole:
        return None, "the object is in view, whole"
    if done < 3 and move in legal:
        return move, f"circle to the {side}, past the board's edge"
    return None, "no better view within reach"


DRAPE_PLAN = (
    "move_forward",
    "move_forward",
    "move_forward",
    "move_up",
    "turn_down",
    "turn_down",
    "turn_down",
    "turn_down",
)
"""From the cloth question's start (a metre from the cloth, 30-40 degrees down, looking at it):
0.75 m ahead, 0.25 m up, then tilt until the camera looks straight down (the last tilt is refused
at the limit). Ours, checked on tuning-seed renders: the whole cloth is in the picture."""


JAR_PLAN = ("move_up",) * 3 + ("move_forward",) * 2 + ("turn_down",) * 6
"""From the jar question's low, level start about 0.4-0.5 m from the jar: 0.75 m up, 0.5 m ahead,
then straight down (ours, checked on tuning-seed renders: jar and object whole in the picture)."""


def _drape_intent(offered: list[str], tried: int) -> Intent:
    if tried == 0 and "APPROACH" in offered:
        return Intent("APPROACH", {"steps": 3}, reasoning="move ahead until the cloth is below the camera")
    if tried <= 1 and "RISE_TOPDOWN" in offered:
        return Intent(
            "RISE_TOPDOWN",
            {"rise": 1, "degrees": 60},
            reasoning="rise a little and look straight down on the cloth",
        )
    return Intent("DONE", reasoning="the cloth has been seen from above")


SIDE_PLAN = ("move_down", "move_down", "move_backward", "move_backward", "turn_up", "turn_up", "turn_up")
"""From a straight-down start 1 m up: 0.5 m lower, 0.5 m back, 45 degrees below the horizon, so
the whole table stays in view while each box shows a side (ours, checked on tuning-seed renders)."""


def _side_atomic(replay: Replay, legal: list[str]) -> tuple[str | None, str]:
    k = len(replay.actions)
    if k < len(SIDE_PLAN) and SIDE_PLAN[k] in legal:
        return SIDE_PLAN[k], "come down and tilt up until the boxes show their sides and heights"
    return None, "the boxes are seen from the side"


def _tilted_atomic(
    view: View, replay: Replay, legal: list[str], first_view_steep: bool | None
) -> tuple[str | None, str]:
    if first_view_steep is None:
        first_view_steep = replay.count("move_backward") > 0
    if first_view_steep:
        plan = ["move_backward", "move_backward", "turn_up", "turn_up", "turn_up"]
    else:
        plan = ["move_up", "move_up", "turn_down", "turn_down", "turn_down"]
    k = len(replay.actions)
    if k < len(plan) and plan[k] in legal:
        return plan[k], "see the object from a clearly different elevation"
    return None, "the object has been seen from a second elevation"
