"""Solvers for where objects stand relative to each other: lines, triangles, contact, sizes,
distances, connected regions and which object moved."""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage

from eviseek.models.reference.task import Task
from eviseek.models.reference.verdict import Verdict, pick_option
from eviseek.models.reference.views import best_view, blob_of, quality
from eviseek.models.reference.vision import Blob, View, gap_between

ALIGN_TOLERANCE = 0.055
"""Middle object's distance from the line through the end objects, over the end-to-end length,
below which three objects count as lined up."""
EQUAL_SIDES = 1.1
"""Two triangle sides whose lengths differ by less than this factor count as equal."""
TOUCH_GAP_PX = 1.5
"""Blobs of two objects closer than this many pixels in a top view count as touching."""


def _layout_points(task: Task, views: list[View]) -> tuple[int, View, list[Blob]] | None:
    i = best_view(task, views)
    if i is None:
        return None
    view = views[i]
    blobs = [blob_of(view, r) for r in task.objects]
    if any(b is None for b in blobs):
        return None
    return i, view, [b for b in blobs if b is not None]


def solve_alignment(task: Task, views: list[View]) -> Verdict:
    found = _layout_points(task, views)
    if found is None or len(found[2]) != 3:
        return Verdict(None, 0.0, reason="the three objects are not all in one view")
    i, view, blobs = found
    pts = [b.centroid for b in blobs]
    # The two points farthest apart are the ends; the third is measured against their line.
    pairs = [(0, 1, 2), (0, 2, 1), (1, 2, 0)]
    a, b, m = max(pairs, key=lambda p: math.dist(pts[p[0]], pts[p[1]]))
    (ax, ay), (bx, by), (mx, my) = pts[a], pts[b], pts[m]
    length = math.dist(pts[a], pts[b])
    if length < 1e-6:
        return Verdict(None, 0.0, reason="degenerate layout")
    off = abs((bx - ax) * (my - ay) - (by - ay) * (mx - ax)) / length / length
    answer = "yes" if off < ALIGN_TOLERANCE else "no"
    margin = min(1.0, abs(off - ALIGN_TOLERANCE) / ALIGN_TOLERANCE)
    conf = (0.55 + 0.45 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"middle object off the line by {off:.3f} of the line's length")


def solve_triangle(task: Task, views: list[View]) -> Verdict:
    found = _layout_points(task, views)
    if found is None or len(found[2]) != 3:
        return Verdict(None, 0.0, reason="the three objects are not all in one view")
    i, view, blobs = found
    p = [b.centroid for b in blobs]
    sides = sorted(math.dist(p[k], p[(k + 1) % 3]) for k in range(3))
    if sides[0] < 1e-6:
        return Verdict(None, 0.0, reason="degenerate layout")
    r_low, r_high = sides[1] / sides[0], sides[2] / sides[1]
    equal_low, equal_high = r_low < EQUAL_SIDES, r_high < EQUAL_SIDES
    if equal_low and equal_high and sides[2] / sides[0] < EQUAL_SIDES * 1.05:
        label = "equilateral"
    elif equal_low or equal_high:
        label = "isosceles"
    else:
        label = "random triangle"
    answer = pick_option(task, label)
    closest = min(abs(math.log(r_low / EQUAL_SIDES)), abs(math.log(r_high / EQUAL_SIDES)))
    margin = min(1.0, closest / math.log(1.08))
    conf = (0.5 + 0.5 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"side ratios {r_low:.2f} and {r_high:.2f}")


def solve_contact(task: Task, views: list[View]) -> Verdict:
    found = _layout_points(task, views)
    if found is None or len(found[2]) != 2:
        return Verdict(None, 0.0, reason="the two objects are not both in view")
    i, view, (a, b) = found
    gap = gap_between(a, b)
    answer = "yes" if gap <= TOUCH_GAP_PX else "no"
    margin = min(1.0, abs(gap - TOUCH_GAP_PX) / 2.0)
    conf = (0.5 + 0.5 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"{gap:.1f} px between them")


def solve_size(task: Task, views: list[View]) -> Verdict:
    found = _layout_points(task, views)
    if found is None or len(found[2]) != 2:
        return Verdict(None, 0.0, reason="the two objects are not both in view")
    i, view, (a, b) = found
    ratio = math.sqrt(a.area / max(1, b.area))
    first_larger = ratio > 1.0
    pick_first = first_larger != task.prefer_smaller
    answer = task.options[0] if pick_first else task.options[1]
    margin = min(1.0, abs(math.log(ratio)) / math.log(1.15))
    conf = (0.5 + 0.5 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"linear size ratio {ratio:.2f}")


def solve_distance(task: Task, views: list[View]) -> Verdict:
    if task.reference is None or len(task.objects) != 2:
        return Verdict(None, 0.0, reason="could not tell the reference object from the candidates")
    i = best_view(task, views)
    if i is None:
        return Verdict(None, 0.0, reason="the objects are not in view")
    view = views[i]
    ref = blob_of(view, task.reference)
    a, b = (blob_of(view, r) for r in task.objects)
    if ref is None or a is None or b is None:
        return Verdict(None, 0.0, reason="the three objects are not all in one view")
    da, db = math.dist(ref.centroid, a.centroid), math.dist(ref.centroid, b.centroid)
    pick_first = (da < db) == task.prefer_smaller
    answer = task.options[0] if pick_first else task.options[1]
    ratio = max(da, db) / max(1e-6, min(da, db))
    margin = min(1.0, math.log(ratio) / math.log(1.25))
    conf = (0.5 + 0.5 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"distances {da:.0f} px and {db:.0f} px")


def solve_moved(task: Task, views: list[View], refs: list[bool]) -> Verdict:
    names = [o for o in task.objects]
    ref_views = [v for v, r in zip(views, refs, strict=False) if r]
    live = [(i, v) for i, v in enumerate(views) if not refs[i]]
    if not names or not ref_views or not live:
        return Verdict(None, 0.0, reason="no reference image and live view to compare")
    ref = ref_views[0]

    def shown(v: View) -> int:
        blobs = [v.largest(o.color) for o in names]
        return sum(1 for b in blobs if b is not None and not b.touches_edge)

    # The live view showing the most of the objects, preferring views from above.
    i, view = max(live, key=lambda p: (shown(p[1]), p[1].steep, p[0]))
    before, after, missing = [], [], []
    for o in names:
        a, b = ref.largest(o.color), view.largest(o.color)
        if a is None:
            continue
        if b is None:
            missing.append(o)
            continue
        before.append(a.centroid)
        after.append(b.centroid)
    present = [o for o in names if ref.largest(o.color) is not None and view.largest(o.color) is not None]
    if len(present) < 4:
        # Something is out of sight: the object that left its old place is the first suspect.
        if missing:
            pick = missing[0]
            return Verdict(
                pick_option(task, pick.name),
                0.4 * len(present) / max(1, len(names)),
                i,
                f"the {pick.name.replace('_', ' ')} is not where the other objects are",
            )
        return Verdict(None, 0.0, reason="too few objects in view to compare")
    # Leave one out: the moved object is the one whose removal lets the rest line up best.
    src, dst = np.array(before), np.array(after)
    residuals = []
    for k in range(len(present)):
        keep = [j for j in range(len(present)) if j != k]
        residuals.append(_similarity_residual(src[keep], dst[keep]))
    order = np.argsort(residuals)
    k = int(order[0])
    margin = residuals[int(order[1])] / max(residuals[k], 1e-6)
    conf = min(1.0, 0.5 + 0.1 * margin) * quality(task, view)
    return Verdict(
        pick_option(task, present[k].name), conf, i, "the others keep their places relative to each other"
    )


def _similarity_residual(src: np.ndarray, dst: np.ndarray) -> float:
    """RMS error, relative to the spread of ``dst``, of the best rotation+scale+shift from src."""
    a = src - src.mean(axis=0)
    b = dst - dst.mean(axis=0)
    za = a[:, 0] + 1j * a[:, 1]
    zb = b[:, 0] + 1j * b[:, 1]
    denom = float(np.vdot(za, za).real)
    if denom < 1e-9:
        return float("inf")
    m = np.vdot(za, zb) / denom
    err = zb - m * za
    spread = math.sqrt(float(np.vdot(zb, zb).real) / len(zb)) or 1.0
    return math.sqrt(float(np.vdot(err, err).real) / len(zb)) / spread


def solve_connect(task: Task, views: list[View]) -> Verdict:
    found = _layout_points(task, views)
    if found is None or len(found[2]) != 2:
        return Verdict(None, 0.0, reason="the two objects are not both in view")
    i, view, (a, b) = found
    if view.free is None:
        return Verdict(None, 0.0, reason="no free-space map")
    # Regions of floor a thing could slide across: tabletop and mats, cut by walls (white, grey or
    # black) and by the table's edge. Two objects in one region are connected.
    regions, _ = ndimage.label(view.free)

    def region(blob: Blob) -> int:
        ids = regions[blob.top : blob.top + blob.height, blob.left : blob.left + blob.width][blob.mask]
        ids = ids[ids > 0]
        return int(np.bincount(ids).argmax()) if len(ids) else -1

    ra, rb = region(a), region(b)
    same = ra == rb and ra > 0
    conf = 0.8 * quality(task, view)
    return Verdict(
        "yes" if same else "no", conf, i, "one open region joins them" if same else "walls separate them"
    )
