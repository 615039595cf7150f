"""Which views show what a question needs: named objects' blobs, centring and a view-quality score."""

from __future__ import annotations

import numpy as np

from eviseek.models.reference.cloth import measure
from eviseek.models.reference.glass import look
from eviseek.models.reference.mirrors import direct_view, look_alikes_and_reflection
from eviseek.models.reference.path import robot_at
from eviseek.models.reference.task import ObjectRef, Task
from eviseek.models.reference.vision import Blob, View


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
        # Cubes among look-alike taller blocks are told apart from the side, not from above.
        good = oblique(view) if task.tall_lookalikes else view.steep
        return (0.9 if good else 0.3) * share + (0.1 if view.of(task.objects[0].color) else 0.0)
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
    if task.kind == "reflected":
        return 1.0 if look_alikes_and_reflection(task, view) is not None else 0.0
    if task.kind == "mirror_closer":
        return 1.0 if any(direct_view(r, [view]) for r in task.objects[:2]) else 0.0
    if task.kind == "path_count":
        # Worth keeping when it shows the robot and the asked colour; the solver itself picks the
        # view taken from the reference images' pose among those kept.
        has_kind = bool(task.objects) and bool(view.of(task.objects[0].color))
        return 1.0 if has_kind and robot_at(view) is not None else 0.0
    if task.kind == "unknown":
        return 0.1
    if task.kind == "order":
        # A pile is read from the side: the more named layers one low view shows, the better.
        layers = len(pile(view, task.objects)) / max(1, min(3, len(task.objects)))
        return min(1.0, layers) * (1.0 if not view.steep else 0.4)
    if task.kind in ("fit", "overflow", "capacity", "slide", "stack"):
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


def oblique(view: View) -> bool:
    """Whether ``view`` looks across the table rather than down on it: the top tenth of the picture
    is mostly beyond the tabletop (floor or open space)."""
    if view.free is None:
        return False
    top = view.free[: max(1, view.height // 10)]
    return float(top.mean()) < 0.5


def pile(view: View, refs: list[ObjectRef]) -> list[tuple[ObjectRef, Blob]]:
    """The named objects that stand in one vertical pile in ``view``, bottom to top."""
    shown = [(r, b) for r in refs if (b := view.largest(r.color)) is not None]
    if not shown:
        return []

    def overlaps(p: Blob, q: Blob) -> bool:
        return min(p.left + p.width, q.left + q.width) - max(p.left, q.left) > 0.3 * min(p.width, q.width)

    best = max(shown, key=lambda rb: sum(1 for _, o in shown if overlaps(rb[1], o)))
    pile = [(r, b) for r, b in shown if overlaps(best[1], b)]
    return sorted(pile, key=lambda rb: -(rb[1].centroid[1]))
