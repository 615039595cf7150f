"""Answers from images: :func:`solve` hands each kind of question to its solver.

The solvers live by concern: :mod:`.layout` (where objects stand relative to each other),
:mod:`.counting`, :mod:`.looks` (one object's shape or place, a pile's order) and
:mod:`.outcomes` (physical tests reported in words); :mod:`.views` scores how useful a view is.
Every solver looks at the analysed images it was given (:class:`~.vision.View`), picks the views
that show what the question needs, and returns a :class:`~.verdict.Verdict`: the answer in the
contract's form, a confidence in [0, 1] and which image it rests on. Geometry is measured in
the image plane, which is faithful only in views that look down on the table; so layout
questions trust steep views and say so through a low confidence otherwise. Collinearity is the
exception: a straight line stays straight in any perspective view.
"""

from __future__ import annotations

from eviseek.models.reference.counting import solve_count, solve_count_side
from eviseek.models.reference.layout import (
    solve_alignment,
    solve_connect,
    solve_contact,
    solve_distance,
    solve_moved,
    solve_size,
    solve_triangle,
)
from eviseek.models.reference.looks import (
    solve_covered,
    solve_in_jar,
    solve_in_mirror,
    solve_order,
    solve_shape,
)
from eviseek.models.reference.mirrors import solve_mirror_closer, solve_reflected
from eviseek.models.reference.outcomes import (
    solve_base,
    solve_base_top,
    solve_capacity,
    solve_fit,
    solve_overflow,
    solve_slide,
    solve_stack,
    solve_which_fit,
)
from eviseek.models.reference.path import solve_path_count
from eviseek.models.reference.task import Task
from eviseek.models.reference.verdict import Verdict, default_answer, nearest_option
from eviseek.models.reference.vision import View


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
    elif task.kind in _TEST_AND_PIXEL_SOLVERS:
        verdict = _TEST_AND_PIXEL_SOLVERS[task.kind](task, text, live)
        if verdict.view is not None:
            verdict.view = live_idx[verdict.view]
    elif task.kind == "moved":
        verdict = solve_moved(task, views, refs)
    elif task.kind == "path_count":
        verdict = solve_path_count(task, views, refs)
    else:
        solver = solve_count_side if task.tall_lookalikes else _SOLVERS.get(task.kind, _solve_unknown)
        verdict = solver(task, live)
        if verdict.view is not None:
            verdict.view = live_idx[verdict.view]
    if verdict.answer is None:
        verdict = Verdict(answer=default_answer(task), confidence=0.0, reason=verdict.reason or "no evidence")
    if task.answer_kind == "option" and task.options and verdict.answer not in task.options:
        # A count asked as options (0-3): the offered number nearest the one measured.
        verdict.answer = nearest_option(task.options, verdict.answer)
    return verdict


def _solve_unknown(task: Task, views: list[View]) -> Verdict:
    return Verdict(default_answer(task), 0.1, None, "this question is outside what the policy can measure")


_TEXT_SOLVERS = {  # physical tests: the outcome is reported in words
    "fit": solve_fit,
    "base_top": solve_base_top,
    "overflow": solve_overflow,
    "capacity": solve_capacity,
    "slide": solve_slide,
    "stack": solve_stack,
}


_TEST_AND_PIXEL_SOLVERS = {  # physical tests read in words, with what the pixels add
    "which_fit": solve_which_fit,
    "base": solve_base,
}


_SOLVERS = {
    "alignment": solve_alignment,
    "triangle": solve_triangle,
    "contact": solve_contact,
    "size": solve_size,
    "distance": solve_distance,
    "count": solve_count,
    "shape": solve_shape,
    "connect": solve_connect,
    "order": solve_order,
    "covered": solve_covered,
    "in_jar": solve_in_jar,
    "in_mirror": solve_in_mirror,
    "reflected": solve_reflected,
    "mirror_closer": solve_mirror_closer,
}
