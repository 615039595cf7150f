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
  show their sides (cubes against look-alike taller blocks). EviSeek does it in one LOOK_UP with
  ``down``; where LOOK_UP is not offered or cannot lower the camera, the routine is the overhead
  one.
* ``drape``: from the oblique start, move ahead over the cloth, rise and look straight down, where
  the cloth's flat top (or its lack) shows what it hides.
* ``jar``: from the low start facing the glass jar, rise, move over the jar and look straight
  down, where an object inside shows within the jar's footprint and one behind it outside.
* ``still``: no move at all, for questions about the first view itself (is this object seen in
  the mirror?); moving would only lose the view the question means.
* ``first``: the answer rests on the first view exactly as it was (with the reference images
  taken from the same pose): Single-model does not move; EviSeek glances aside and back, so that
  the view it returns to (the first one again) is kept as evidence.
* ``turn_round``: turn in place to face the objects a mirror showed behind the camera, tilt down
  and sweep across them, so that each is seen directly while the camera stays where it stood.
* ``look``: a short scan, for questions the policy cannot measure.

Each routine decides from the current picture and the agent's own dead-reckoned pose (which the
prompt states), never from the simulator. :func:`.intents.seek_intent` speaks EviSeek's intents;
:func:`.atomic.next_atomic` speaks the atomic actions Single-model uses; :mod:`.physical_tests`
runs the tests both share. This module holds what they share: which routine serves a question and
the dead-reckoned pose.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eviseek.models.reference.task import TEST_KINDS, Task
from eviseek.models.reference.vision import View

RISE_TARGET_M = 1.0
"""How far above its starting height the camera climbs for an overhead view."""
MOVE_M = 0.25
TURN_DEG = 15.0

CAMERA_NAMES = frozenset(
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
    "first": "As first seen",
    "turn_round": "Objects behind me",
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
    if task.kind in ("reflected", "path_count"):
        return "first"
    if task.kind in ("mirror_closer", "in_mirror"):
        return "turn_round"
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


def counted_whole(task: Task, view: View) -> bool:
    """Whether no candidate is cut off by the border of the picture."""
    if not task.objects:
        return True
    return all(not b.touches_edge for b in view.of(task.objects[0].color))


def peek_side(task: Task, view: View) -> str:
    """Which side of the picture the named object shows on (where it peeks out past a board)."""
    if task.objects:
        b = view.largest(task.objects[0].color)
        if b is not None:
            return "right" if b.centroid[0] >= view.width / 2 else "left"
    return "right"
