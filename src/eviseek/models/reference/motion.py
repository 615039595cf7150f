"""Answering from an action's frame sequence (Inclined Plane's slide), by pixels.

When a request carries ``motion_frames = N``, its last N images are frames of the physics
simulation after an action, oldest first, all from one camera. For slope questions the policy
follows the named object's colour from the first frame to the last: the object slid when its
centre moved by more than :data:`SLID_SHARE` of its own apparent size, or left the picture. The
text feedback is not read.
"""

from __future__ import annotations

import math

from eviseek.models.reference.task import Task
from eviseek.models.reference.verdict import Verdict
from eviseek.models.reference.vision import View

SLID_SHARE = 0.5
"""Centre displacement, in units of the object's apparent size (square root of its pixel area),
above which it slid (ours: an object that holds moves well under 0.1; one that slides leaves the
ramp, many sizes away)."""


def solve_slide_frames(task: Task, frames: list[View]) -> Verdict | None:
    """Whether the named object stayed (``None`` when the first frame does not show it)."""
    if task.kind != "slide" or not task.objects or len(frames) < 2:
        return None
    color = task.objects[0].color
    first = frames[0].largest(color)
    if first is None or first.area < 6:
        return None
    last = frames[-1].largest(color)
    if last is None:
        moved = math.inf
    else:
        (x0, y0), (x1, y1) = first.centroid, last.centroid
        moved = math.hypot(x1 - x0, y1 - y0) / math.sqrt(first.area)
    slid = moved > SLID_SHARE
    yes = (not slid) if task.asks_to_stay else slid
    shown = "left the picture" if math.isinf(moved) else f"moved {moved:.2f} of its size"
    return Verdict(
        "yes" if yes else "no",
        0.9,
        len(frames) - 1,
        f"over {len(frames)} frames of the slide the {color} object {shown}",
    )
