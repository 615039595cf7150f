"""Solvers for questions about what a mirror shows: which of three look-alikes is the one
reflected (Correspondence), and which of two objects seen only in the mirror is really nearer
(Spatial Relations seen in a mirror).

A mirror facing the camera shows an object as if it stood behind the glass, as far behind it as
the object stands in front: farther from the camera, so smaller, and (for a mirror square to the
line of sight) in the same direction from the point the camera looks along, only nearer to it in
the picture by the ratio of the two distances. The ratio is read from sizes: the reflection of an
object identical to the others is as many times smaller as it is farther away.
"""

from __future__ import annotations

import math

from eviseek.models.reference.ground import ground_point
from eviseek.models.reference.task import ObjectRef, Task
from eviseek.models.reference.verdict import Verdict
from eviseek.models.reference.vision import Blob, View

POSITIONS = ("left", "middle", "right")


def look_alikes_and_reflection(task: Task, view: View) -> tuple[list[Blob], Blob] | None:
    """The three look-alikes (left to right) and the reflection in ``view``: the three largest
    blobs of the named colour and the largest smaller one."""
    if not task.objects:
        return None
    found = view.of(task.objects[0].color)
    if len(found) < 4:
        return None
    objects = sorted(found[:3], key=lambda b: b.centroid[0])
    return objects, found[3]


def solve_reflected(task: Task, views: list[View]) -> Verdict:
    """Which look-alike the mirror shows, from the view that shows all four blobs with the middle
    look-alike nearest the centre (the first view, or a return to it)."""
    shown = [(k, found) for k, v in enumerate(views) if (found := look_alikes_and_reflection(task, v))]
    if shown:
        k, (objects, image) = min(
            shown, key=lambda kf: (abs(kf[1][0][1].centroid[0] - views[kf[0]].width / 2), kf[0])
        )
        # The question's first view looks straight at the middle one; measured from it, the
        # reflection lies as many times nearer the middle as it is smaller than the objects.
        middle = objects[1].centroid[0]
        scale = sum(b.height for b in objects) / 3 / max(1, image.height)
        where = middle + (image.centroid[0] - middle) * scale
        gaps = [abs(b.centroid[0] - where) for b in objects]
        pick = min(range(3), key=lambda i: gaps[i])
        return Verdict(
            POSITIONS[pick],
            0.6,
            k,
            f"the reflection, {scale:.1f} times smaller, lines up with the {POSITIONS[pick]} object",
        )
    return Verdict(None, 0.0, reason="the three objects and the reflection are not all in one view")


DIRECT_AREA = 300
"""Fewest pixels of an object seen directly after turning round, not in the mirror. Ours, on
Spatial Relations questions of tuning seeds 300-302: in the first view the reflections cover
21-139 pixels, the objects seen directly 800 and more."""
TURNED_DOWN_DEG = 45.0
"""How far the turn-round routine looks below the horizon: these questions start 15 degrees down
(ours, seen in tuning-seed renders) and the routine tilts down twice more by 15."""


def _ground_distance(blob: Blob, view: View) -> float | None:
    point = ground_point(view, blob.centroid[0], blob.top + blob.height - 1, TURNED_DOWN_DEG)
    return None if point is None else float(math.hypot(point[0], point[1]))


def direct_view(ref: ObjectRef, views: list[View]) -> tuple[int, Blob] | None:
    """The view showing ``ref`` itself (large, not its reflection) most fully: whole if possible."""
    best: tuple[tuple[bool, int], int, Blob] | None = None
    for k, view in enumerate(views):
        b = view.largest(ref.color)
        if b is None or b.area < DIRECT_AREA:
            continue
        key = (not b.touches_edge, b.area)
        if best is None or key > best[0]:
            best = (key, k, b)
    return None if best is None else (best[1], best[2])


def solve_mirror_closer(task: Task, views: list[View]) -> Verdict:
    """Which of the two objects is really nearer, from views of the objects themselves.

    Turning in place keeps the camera where it stood, so each object's distance along the table
    from the camera's foot, read in whichever view shows it, is its distance from the start (in
    units of the camera's height, the same for every view)."""
    if len(task.objects) < 2 or len(task.options) < 2:
        return Verdict(None, 0.0, reason="the two objects are not named")
    dists: list[float | None] = []
    seen: list[int] = []
    for ref in task.objects[:2]:
        found = direct_view(ref, views)
        d = None if found is None else _ground_distance(found[1], views[found[0]])
        dists.append(d)
        if found is not None:
            seen.append(found[0])
    a, b = dists
    if a is None or b is None:
        return Verdict(None, 0.0, reason="the objects themselves have not both been seen")
    first_nearer = a < b
    pick_first = first_nearer == task.prefer_smaller
    answer = task.options[0] if pick_first else task.options[1]
    margin = min(1.0, abs(math.log(max(a, 1e-6) / max(b, 1e-6))) / math.log(1.3))
    return Verdict(
        answer,
        0.55 + 0.4 * margin,
        seen[-1],
        f"seen directly, they stand {a:.2f} and {b:.2f} camera heights from where I stand",
    )
