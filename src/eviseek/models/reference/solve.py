"""Answers from images: one small solver per kind of question, plus a view-quality score.

Every solver looks at the analysed images it was given (:class:`~.vision.View`), picks the
views that show what the question needs, and returns a :class:`Verdict`: the answer in the
contract's form, a confidence in [0, 1] and which image it rests on. Geometry is measured in
the image plane, which is faithful only in views that look down on the table; so layout
questions trust steep views and say so through a low confidence otherwise. Collinearity is the
exception: a straight line stays straight in any perspective view.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from eviseek.models.reference.cloth import answer_option, measure
from eviseek.models.reference.glass import look
from eviseek.models.reference.shapes import SHAPES, classify, shape_scores
from eviseek.models.reference.task import ObjectRef, Task
from eviseek.models.reference.vision import Blob, View, gap_between

ALIGN_TOLERANCE = 0.055
"""Middle object's distance from the line through the end objects, over the end-to-end length,
below which three objects count as lined up."""
EQUAL_SIDES = 1.1
"""Two triangle sides whose lengths differ by less than this factor count as equal."""
TOUCH_GAP_PX = 1.5
"""Blobs of two objects closer than this many pixels in a top view count as touching."""


@dataclass
class Verdict:
    """An answer, how sure the policy is of it, and the image it rests on."""

    answer: str | None
    confidence: float
    view: int | None = None
    reason: str = ""


def blob_of(view: View, ref: ObjectRef) -> Blob | None:
    """The blob that best stands for ``ref`` in ``view`` (its colour's largest region)."""
    return view.largest(ref.color) if ref.color else None


def _named(task: Task) -> list[ObjectRef]:
    refs = list(task.objects)
    if task.reference is not None and all(r.name != task.reference.name for r in refs):
        refs.insert(0, task.reference)
    return refs


def visible_fraction(task: Task, view: View) -> float:
    """Share of the named objects shown whole (a blob that does not touch the image border)."""
    refs = _named(task)
    if not refs:
        return 0.0
    ok = 0
    for r in refs:
        b = blob_of(view, r)
        if b is not None and not b.touches_edge:
            ok += 1
    return ok / len(refs)


def centring(task: Task, view: View) -> tuple[float, float] | None:
    """Where the named objects (or, for counting, the tabletop) sit: (x, y) in [0, 1] image units."""
    pts = []
    if task.kind == "count":
        blobs = [b for b in view.of(task.objects[0].color)] if task.objects else []
        pts = [b.centroid for b in blobs]
        if view.wood < 0.45:
            # Most of the picture is off the table: head for the tabletop itself.
            return table_centre(view)
    else:
        for r in _named(task):
            b = blob_of(view, r)
            if b is not None:
                pts.append(b.centroid)
    if not pts:
        return None
    x = sum(p[0] for p in pts) / len(pts) / view.width
    y = sum(p[1] for p in pts) / len(pts) / view.height
    return x, y


def table_centre(view: View) -> tuple[float, float] | None:
    """Where the tabletop (and what stands on it) sits in ``view``, in [0, 1] image units."""
    if view.free is None or not view.free.any():
        return None
    ys, xs = np.nonzero(view.free)
    return float(xs.mean()) / view.width, float(ys.mean()) / view.height


def quality(task: Task, view: View) -> float:
    """How useful ``view`` is for answering ``task``, in [0, 1]."""
    if task.kind == "count":
        if not task.objects:
            return 0.0
        share = min(1.0, view.wood / 0.6)
        return (0.9 if view.steep else 0.3) * share + (0.1 if view.of(task.objects[0].color) else 0.0)
    if task.kind == "shape":
        if not task.objects:
            return 0.0
        b = view.largest(task.objects[0].color)
        if b is None or b.touches_edge:
            return 0.0
        size = min(1.0, b.area / 400.0)
        return (0.5 + 0.5 * size) * (1.0 if not view.steep else 0.7)
    if task.kind == "in_mirror":
        return 1.0 if task.objects and blob_of(view, task.objects[0]) is not None else 0.0
    if task.kind == "in_jar":
        seen = look(view, blob_of(view, task.objects[0])) if task.objects else None
        if seen is None:
            return 0.0
        return 0.3 if seen.touches_edge or oblique(view) else 1.0
    if task.kind == "covered":
        drape = measure(view)
        if drape is None:
            return 0.0
        return 0.3 if drape.touches_edge or oblique(view) else 1.0
    if task.kind == "unknown":
        return 0.1
    if task.kind == "order":
        # A pile is read from the side: the more named layers one low view shows, the better.
        layers = len(_pile(view, task.objects)) / max(1, min(3, len(task.objects)))
        return min(1.0, layers) * (1.0 if not view.steep else 0.4)
    if task.kind in ("fit", "overflow", "slide", "stack"):
        frac = visible_fraction(task, view)
        return 0.5 * frac
    frac = visible_fraction(task, view)
    if frac < 1.0:
        return 0.3 * frac
    return 1.0 if view.steep else 0.35


def best_view(task: Task, views: list[View]) -> int | None:
    """Index of the most useful view; ties go to the later one (agents look closer over time)."""
    best, best_q = None, 0.0
    for i, v in enumerate(views):
        q = quality(task, v)
        if q > 0 and q >= best_q:
            best, best_q = i, q
    return best


def solve(task: Task, views: list[View], *, text: str = "", references: list[bool] | None = None) -> Verdict:
    """Answer ``task`` from ``views`` and, for physical tests, the outcomes reported in ``text``.

    ``references`` flags the views that are task-supplied reference images (not the live scene).
    With nothing to go on the answer is a well-formed guess with zero confidence.
    """
    refs = list(references or [])
    refs += [False] * (len(views) - len(refs))
    live_idx = [i for i, r in enumerate(refs[: len(views)]) if not r]
    live = [views[i] for i in live_idx]
    if task.kind in _TEXT_SOLVERS:
        verdict = _TEXT_SOLVERS[task.kind](task, text)
    elif task.kind == "moved":
        verdict = _solve_moved(task, views, refs)
    else:
        solver = _solve_count_side if task.tall_lookalikes else _SOLVERS.get(task.kind, _solve_unknown)
        verdict = solver(task, live)
        if verdict.view is not None:
            verdict.view = live_idx[verdict.view]
    if verdict.answer is None:
        verdict = Verdict(answer=default_answer(task), confidence=0.0, reason=verdict.reason or "no evidence")
    if task.answer_kind == "option" and task.options and verdict.answer not in task.options:
        # A count asked as options (0-3): the offered number nearest the one measured.
        verdict.answer = _nearest_option(task.options, verdict.answer)
    return verdict


def _nearest_option(options: list[str], answer: str | None) -> str:
    """The option that best stands for ``answer``: the same text ignoring case, else the nearest
    number, else the first option."""
    for o in options:
        if answer is not None and o.lower() == answer.lower():
            return o
    try:
        value = float(answer or "")
    except ValueError:
        return options[0]
    numbers = [(abs(float(o) - value), o) for o in options if o.replace(".", "", 1).isdigit()]
    return min(numbers)[1] if numbers else options[0]


def default_answer(task: Task) -> str:
    """A well-formed answer when nothing could be measured."""
    if task.answer_kind == "integer":
        return "1"
    if task.answer_kind == "sequence" and task.options:
        return ", ".join(task.options)
    if task.options:
        return task.options[0]
    return "unknown"


def _layout_points(task: Task, views: list[View]) -> tuple[int, View, list[Blob]] | None:
    i = best_view(task, views)
    if i is None:
        return None
    view = views[i]
    blobs = [blob_of(view, r) for r in task.objects]
    if any(b is None for b in blobs):
        return None
    return i, view, [b for b in blobs if b is not None]


def _solve_alignment(task: Task, views: list[View]) -> Verdict:
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


def _solve_triangle(task: Task, views: list[View]) -> Verdict:
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
    answer = _pick_option(task, label)
    closest = min(abs(math.log(r_low / EQUAL_SIDES)), abs(math.log(r_high / EQUAL_SIDES)))
    margin = min(1.0, closest / math.log(1.08))
    conf = (0.5 + 0.5 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"side ratios {r_low:.2f} and {r_high:.2f}")


def _solve_contact(task: Task, views: list[View]) -> Verdict:
    found = _layout_points(task, views)
    if found is None or len(found[2]) != 2:
        return Verdict(None, 0.0, reason="the two objects are not both in view")
    i, view, (a, b) = found
    gap = gap_between(a, b)
    answer = "yes" if gap <= TOUCH_GAP_PX else "no"
    margin = min(1.0, abs(gap - TOUCH_GAP_PX) / 2.0)
    conf = (0.5 + 0.5 * margin) * quality(task, view)
    return Verdict(answer, conf, i, f"{gap:.1f} px between them")


def _solve_size(task: Task, views: list[View]) -> Verdict:
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


def _solve_distance(task: Task, views: list[View]) -> Verdict:
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


ROW_RATIO = 1.6
"""A blob seen from above at least this much longer than wide is read as a row of touching
objects (ours: one compact object stays under about 1.2 from any side)."""


def pieces(blob: Blob) -> int:
    """How many same-sized objects a blob seen from above holds: a row of ``k`` touching objects is
    about ``k`` times as long as it is wide. Length and width are the blob's extents along and
    across its main axis (ours: on Spatial Segmentation questions of tuning seeds 300-301 the
    spread of the pixels, used before, over-counted rows of round objects by one; extents took
    Single-model from 2 to 5 of 8 right)."""
    ys, xs = np.nonzero(blob.mask)
    if len(xs) < 12:
        return 1
    pts = np.stack([xs, ys]).astype(float)
    _, axes = np.linalg.eigh(np.cov(pts))
    along, across = axes[:, 1] @ pts, axes[:, 0] @ pts
    ratio = float(np.ptp(along) + 1) / float(np.ptp(across) + 1)
    return max(1, round(ratio)) if ratio >= ROW_RATIO else 1


def count_in(task: Task, view: View) -> int:
    """How many blobs in ``view`` look like the counted kind (colour, then shape)."""
    if not task.objects:
        return 0
    target = task.objects[0]
    n = 0
    for b in view.of(target.color):
        if target.shape is None:
            n += 1
            continue
        # Flat faces (cubes, pyramids) against curved surfaces (balls, cylinders, cones) is the
        # split the shading shows reliably even on small blobs; within a kind, a blob is left
        # out only when its cues clearly favour another shape.
        kind = FLAT_FACED if b.flatness >= 0.7 else CURVED
        if target.shape not in kind:
            continue
        guess, conf = classify(b, steep=view.steep, allowed=list(kind))
        if guess != target.shape and conf >= 0.5:
            continue
        # From above, touching objects of one colour merge into one blob; a row shows by its length.
        n += pieces(b) if view.steep else 1
    return n


FLAT_FACED = ("cube", "pyramid")
CURVED = ("cylinder", "ball", "cone")


def _solve_count(task: Task, views: list[View]) -> Verdict:
    if not views or not task.objects:
        return Verdict(None, 0.0, reason="nothing to count")
    i = best_view(task, views)
    if i is None:
        return Verdict(None, 0.0, reason="no usable view")
    counts = [(quality(task, v), k, count_in(task, v)) for k, v in enumerate(views)]
    good = [c for c in counts if c[0] >= 0.5 * quality(task, views[i])]
    # Several good views each show part of the table at most once: the largest count is the
    # least likely to have missed something hidden.
    q, k, n = max(good, key=lambda c: (c[2], c[0]))
    n = max(n, 1)  # the questions promise at least one
    return Verdict(str(n), min(1.0, q), k, f"{n} found in the clearest overhead view")


SIDE_PITCH_DEG = 45.0
"""How far below the horizon the side-view routine points the camera (it tilts up 3 x 15 degrees
from straight down); the tall-block test reads each object's elevation from it."""
TALL_SIDE_RATIO = 0.8
"""Side-to-footprint index above which a box is a tall block, not a cube. The index is the
blob's height over its width with the top face's share (sin of the elevation) taken off, over
the cosine of the elevation: about 0.7-1.0 for a cube in theory (yaw decides where) and twice
that for a block twice as tall. Ours, set on renders of Category Ambiguity questions from the
tuning seeds 300 and 301 (not dev 1000 or test 2000): cubes measured -0.3 to 0.64, blocks 0.95
and up."""


def oblique(view: View) -> bool:
    """Whether ``view`` looks across the table rather than down on it: the top tenth of the picture
    is mostly beyond the tabletop (floor or open space)."""
    if view.free is None:
        return False
    top = view.free[: max(1, view.height // 10)]
    return float(top.mean()) < 0.5


def side_index(blob: Blob, view: View, pitch_deg: float = SIDE_PITCH_DEG) -> float:
    """How tall a box stands for its footprint, read from one oblique view (see TALL_SIDE_RATIO)."""
    focal = (view.height / 2) / math.tan(math.radians(30.0))
    elev = math.radians(pitch_deg) + math.atan((blob.centroid[1] - view.height / 2) / focal)
    return (blob.height / max(1, blob.width) - math.sin(elev)) / max(math.cos(elev), 1e-3)


def _solve_count_side(task: Task, views: list[View]) -> Verdict:
    """Count cubes among look-alike tall blocks in an oblique view, where heights show."""
    side = [(k, v) for k, v in enumerate(views) if oblique(v)]
    if not side or not task.objects:
        return _solve_count(task, views)
    color = task.objects[0].color

    def found(v: View) -> list[Blob]:
        return [b for b in v.of(color) if b.area >= 20]

    # The oblique view showing the most candidates has hidden the fewest behind others.
    k, view = max(side, key=lambda kv: (len(found(kv[1])), kv[0]))
    blobs = found(view)
    if not blobs:
        return _solve_count(task, views)
    cubes = sum(1 for b in blobs if side_index(b, view) < TALL_SIDE_RATIO)
    n = max(cubes, 1)  # the questions promise at least one
    return Verdict(
        str(n), 0.8, k, f"{n} of {len(blobs)} {color} boxes are no taller than wide, seen from the side"
    )


def _solve_shape(task: Task, views: list[View]) -> Verdict:
    if not task.objects:
        return Verdict(None, 0.0, reason="no target named")
    allowed = [o for o in task.options if o in SHAPES] or list(SHAPES)
    target = task.objects[0]
    votes = {s: 0.0 for s in allowed}
    weight_total = 0.0
    best_i, best_w = None, 0.0
    for i, view in enumerate(views):
        b = view.largest(target.color)
        if b is None or b.touches_edge or b.area < 20:
            continue
        w = quality(task, view)
        scores = shape_scores(b, steep=view.steep)
        low = min(scores[s] for s in allowed)
        for s in allowed:
            votes[s] += w * math.exp(-(scores[s] - low) / 4.0)
        weight_total += w
        if w >= best_w:
            best_i, best_w = i, w
    if weight_total == 0:
        return Verdict(None, 0.0, reason="the object is not clearly in view")
    ranked = sorted(allowed, key=lambda s: votes[s], reverse=True)
    share = votes[ranked[0]] / sum(votes.values())
    answer = _pick_option(task, ranked[0])
    conf = min(1.0, share) * min(1.0, best_w * 1.2)
    return Verdict(answer, conf, best_i, f"outline and shading look most like a {ranked[0]}")


def _solve_covered(task: Task, views: list[View]) -> Verdict:
    """What the cloth hides, from the latest view that looks down on the whole cloth."""
    found = [(k, d) for k, v in enumerate(views) if (d := measure(v)) is not None]
    if not found:
        return Verdict(None, 0.0, reason="no cloth in view")
    above = [(k, d) for k, d in found if not d.touches_edge and not oblique(views[k])]
    k, drape = (above or found)[-1]
    shape = drape.shape()
    conf = 0.8 if above else 0.3
    return Verdict(
        answer_option(shape, task.options),
        conf,
        k,
        f"from above the cloth's flat top covers {drape.flat_top_share:.2f} of its raised part: a {shape}",
    )


INSIDE_SHARE = 0.5
"""Share of the object's pixels inside the jar's footprint, seen from above, at and above which it
stands inside (ours: 1.0 inside and 0.0 behind on all 8 tuning-seed questions, seeds 300-301)."""


def _solve_in_jar(task: Task, views: list[View]) -> Verdict:
    """Inside the glass jar or behind it: where the object shows against the jar's footprint."""
    if not task.objects:
        return Verdict(None, 0.0, reason="no object named")
    found = [(k, j) for k, v in enumerate(views) if (j := look(v, blob_of(v, task.objects[0]))) is not None]
    above = [(k, j) for k, j in found if not j.touches_edge and not oblique(views[k])]
    if not above:
        return Verdict(None, 0.0, reason="the jar has not been seen from above")
    k, jar = above[-1]
    inside = jar.inside_share >= INSIDE_SHARE
    return Verdict(
        "yes" if inside else "no",
        0.9,
        k,
        f"from above, {jar.inside_share:.0%} of the object lies within the jar's footprint",
    )


MIRROR_IMAGE_SHARE = 0.008
"""Largest share of the picture an object seen in the mirror covers. A reflection is seen from at
least twice as far as the mirror (the object stands behind the camera), an object seen directly
from nearer than the mirror, so their sizes differ many times over. Ours, on the 8 Reflection
Authoring questions of tuning seeds 300-301: reflections 0.0013, objects seen directly 0.026-0.091."""


def _solve_in_mirror(task: Task, views: list[View]) -> Verdict:
    """Seen directly or in the mirror: judged in the first view, the one the question means."""
    if not task.objects or not views:
        return Verdict(None, 0.0, reason="no object named")
    first = views[0]
    b = blob_of(first, task.objects[0])
    if b is None:
        return Verdict(None, 0.0, reason="the object is not in the first view")
    share = b.area / float(first.width * first.height)
    mirrored = share < MIRROR_IMAGE_SHARE
    return Verdict(
        "yes" if mirrored else "no",
        0.85,
        0,
        f"it covers {share:.2%} of the picture: "
        + ("far, in the mirror" if mirrored else "near, seen directly"),
    )


def _solve_unknown(task: Task, views: list[View]) -> Verdict:
    return Verdict(default_answer(task), 0.1, None, "this question is outside what the policy can measure")


# --- physical tests: the outcome is reported in words ----------------------------------------


def _last_flag(text: str, key: str) -> bool | None:
    found = re.findall(rf"\b{key}=(True|False)\b", text)
    return None if not found else found[-1] == "True"


def _solve_fit(task: Task, text: str) -> Verdict:
    inside = _last_flag(text, "inside")
    if inside is None:
        return Verdict(None, 0.0, reason="the object has not been tried in the container yet")
    return Verdict("yes" if inside else "no", 0.95, None, f"put_inside reported inside={inside}")


def _solve_overflow(task: Task, text: str) -> Verdict:
    over = _last_flag(text, "overflowed")
    if over is None:
        return Verdict(None, 0.0, reason="nothing has been poured yet")
    return Verdict("yes" if over else "no", 0.95, None, f"pouring reported overflowed={over}")


def _solve_slide(task: Task, text: str) -> Verdict:
    slid = _last_flag(text, "slid")
    if slid is None:
        return Verdict(None, 0.0, reason="the object has not been set on the slope yet")
    yes = (not slid) if task.asks_to_stay else slid
    return Verdict("yes" if yes else "no", 0.95, None, f"the slope test reported slid={slid}")


_STACK = re.compile(r"put_on: (ok|failed)[^\n\]]*?current_stack=\[([^\]]*)\]")


def stacks_seen(text: str) -> list[tuple[bool, list[str]]]:
    """Every ``put_on`` outcome in ``text``: whether it held, and the stack it reported."""
    out = []
    for ok, items in _STACK.findall(text):
        names = [x.strip().strip("'\"") for x in items.split(",") if x.strip()]
        out.append((ok == "ok", names))
    return out


def _solve_stack(task: Task, text: str) -> Verdict:
    names = [o.name for o in task.objects]
    for ok, stack in reversed(stacks_seen(text)):
        if ok and len(stack) >= len(names) >= 2:
            return Verdict(", ".join(stack), 0.95, None, "a full tower stood after the last placement")
    # Untested: things nothing can rest on (balls, cones, pyramids) go on top.
    carriers = [o.name for o in task.objects if o.shape not in ("ball", "cone", "pyramid")]
    rest = [n for n in names if n not in carriers]
    return Verdict(
        ", ".join(carriers + rest) if names else None, 0.2, None, "untested: round or pointed on top"
    )


def _solve_moved(task: Task, views: list[View], refs: list[bool]) -> Verdict:
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
                _pick_option(task, pick.name),
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
        _pick_option(task, present[k].name), conf, i, "the others keep their places relative to each other"
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


def _solve_connect(task: Task, views: list[View]) -> Verdict:
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


def _pile(view: View, refs: list[ObjectRef]) -> list[tuple[ObjectRef, Blob]]:
    """The named objects that stand in one vertical pile in ``view``, bottom to top."""
    shown = [(r, b) for r in refs if (b := view.largest(r.color)) is not None]
    if not shown:
        return []

    def overlaps(p: Blob, q: Blob) -> bool:
        return min(p.left + p.width, q.left + q.width) - max(p.left, q.left) > 0.3 * min(p.width, q.width)

    best = max(shown, key=lambda rb: sum(1 for _, o in shown if overlaps(rb[1], o)))
    pile = [(r, b) for r, b in shown if overlaps(best[1], b)]
    return sorted(pile, key=lambda rb: -(rb[1].centroid[1]))


def _solve_order(task: Task, views: list[View]) -> Verdict:
    if not views or not task.objects:
        return Verdict(None, 0.0, reason="nothing to look at")
    # The side view showing the tallest pile of named objects tells the order of the moves.
    scored = [(len(_pile(v, task.objects)), not v.steep, k) for k, v in enumerate(views)]
    n, _, k = max(scored)
    pile = _pile(views[k], task.objects)
    if n < 2:
        return Verdict(None, 0.0, reason="no pile of the named objects in view")
    names = [r.name for r, _ in pile]
    asked = task.order_asked
    conf = min(1.0, n / 3.0) * (0.8 if not views[k].steep else 0.4)
    if asked == "last":
        return Verdict(_pick_option(task, names[-1]), conf, k, "it is on top of the pile")
    if asked == "first":
        # A pile of four holds an object that was there before the moves, at the bottom.
        first = names[1] if len(names) >= 4 else names[0]
        return Verdict(_pick_option(task, first), conf, k, "it is the lowest moved object in the pile")
    named = [o.name for o in task.objects]
    order = [x for x in names if x in named]
    order += [x for x in named if x not in order]
    return Verdict(", ".join(order), conf, k, "the pile reads bottom to top")


_TEXT_SOLVERS = {
    "fit": _solve_fit,
    "overflow": _solve_overflow,
    "slide": _solve_slide,
    "stack": _solve_stack,
}


def _pick_option(task: Task, label: str) -> str:
    for o in task.options:
        if o.lower() == label.lower():
            return o
    return label


_SOLVERS = {
    "alignment": _solve_alignment,
    "triangle": _solve_triangle,
    "contact": _solve_contact,
    "size": _solve_size,
    "distance": _solve_distance,
    "count": _solve_count,
    "shape": _solve_shape,
    "connect": _solve_connect,
    "order": _solve_order,
    "covered": _solve_covered,
    "in_jar": _solve_in_jar,
    "in_mirror": _solve_in_mirror,
}
