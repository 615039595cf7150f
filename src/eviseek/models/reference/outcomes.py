"""Solvers for physical tests: the outcome the environment reported in words (inside=, overflowed=,
slid=, current_stack=), and, for ESI-Bench's which-container and base forms, what the pixels add
(which fitting bin is smaller, which box stands on the left)."""

from __future__ import annotations

import re

from eviseek.models.reference.physical_tests import fit_outcomes
from eviseek.models.reference.task import Task
from eviseek.models.reference.verdict import Verdict
from eviseek.models.reference.vision import View


def _last_flag(text: str, key: str) -> bool | None:
    found = re.findall(rf"\b{key}=(True|False)\b", text)
    return None if not found else found[-1] == "True"


def solve_fit(task: Task, text: str) -> Verdict:
    inside = _last_flag(text, "inside")
    if inside is None:
        return Verdict(None, 0.0, reason="the object has not been tried in the container yet")
    return Verdict("yes" if inside else "no", 0.95, None, f"put_inside reported inside={inside}")


def solve_overflow(task: Task, text: str) -> Verdict:
    over = _last_flag(text, "overflowed")
    if over is None:
        return Verdict(None, 0.0, reason="nothing has been poured yet")
    return Verdict("yes" if over else "no", 0.95, None, f"pouring reported overflowed={over}")


def solve_capacity(task: Task, text: str) -> Verdict:
    """Which container holds more, from the last pour of a filled container into the other: the
    poured one holds more when the other overflowed."""
    over = _last_flag(text, "overflowed")
    sources = re.findall(r"\bsource=([a-z]+_[a-z]+)", text)
    names = [o.name for o in task.objects]
    if over is None or not sources or sources[-1] not in names or len(names) != 2:
        return Verdict(None, 0.0, reason="no filled container has been poured into the other yet")
    src = sources[-1]
    other = next(n for n in names if n != src)
    pick = src if over else other
    if [o.lower() for o in task.options] == ["left", "right"]:
        # ESI-Bench's form: the question names the left container first and the right one second.
        return Verdict(
            "left" if pick == names[0] else "right", 0.95, None, f"pouring {src} reported overflowed={over}"
        )
    answer = next((o for o in task.options if o.lower() == pick), pick)
    return Verdict(answer, 0.95, None, f"pouring {src} reported overflowed={over}")


def solve_slide(task: Task, text: str) -> Verdict:
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


def solve_stack(task: Task, text: str) -> Verdict:
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


def solve_which_fit(task: Task, text: str, views: list[View]) -> Verdict:
    """The smallest offered bin the object ended inside: the bins it fits are read from the
    ``put_inside`` outcomes; when several fit, the smaller is the one whose opening covers fewer
    pixels in the steepest view showing them all (the first view when none looks down)."""
    bins = [o.name for o in task.objects[1:]]
    tried = fit_outcomes(text)
    fits = [b for b in bins if tried.get(b)]
    untried = [b for b in bins if b not in tried]
    if not fits:
        if untried:
            return Verdict(None, 0.0, reason="the object has not been tried in every bin yet")
        return Verdict(None, 0.0, reason="the object fitted in no bin")
    if len(fits) == 1 and not untried:
        return Verdict(_option(task, fits[0]), 0.95, None, f"it ended inside {fits[0]} only")
    colours = [b.split("_")[0] for b in fits]
    shown = [v for v in views if all(v.largest(c) is not None for c in colours)]
    if not shown:
        return Verdict(_option(task, fits[0]), 0.3, None, "several bins fit; none seen to compare")
    view = next((v for v in shown if v.steep), shown[0])
    areas = {b: view.largest(c).area for b, c in zip(fits, colours, strict=True)}  # type: ignore[union-attr]
    best = min(fits, key=lambda b: areas[b])
    return Verdict(
        _option(task, best), 0.6, views.index(view), f"it fits {', '.join(fits)}; {best} looks smallest"
    )


_PUT_ON = re.compile(
    r"put_on: (ok|failed); ([a-z]+_[a-z]+) "
    r"(?:rests on|did not stay on top of|did not stay on) ([a-z]+_[a-z]+)"
)


def solve_base(task: Task, text: str, views: list[View]) -> Verdict:
    """Which box carries B (from the ``put_on`` outcome: the tried box, or else the other), and
    whether it stands left or right: the box whose colour's largest blob lies further left in the
    earliest view showing both boxes."""
    boxes = [o.name for o in task.objects[:2]]
    tried = [(ok == "ok", target) for ok, _, target in _PUT_ON.findall(text) if target in boxes]
    if len(boxes) < 2 or not tried:
        return Verdict(None, 0.0, reason="B has not been placed on a box yet")
    held, target = tried[-1]
    base = target if held else next(b for b in boxes if b != target)
    other = next(b for b in boxes if b != base)
    for i, view in enumerate(views):
        mine, theirs = view.largest(base.split("_")[0]), view.largest(other.split("_")[0])
        if mine is None or theirs is None:
            continue
        side = "left" if mine.centroid[0] < theirs.centroid[0] else "right"
        return Verdict(side, 0.9, i, f"{base} carries B and stands to the {side} of {other}")
    return Verdict(None, 0.0, reason=f"{base} carries B, but no view shows both boxes")


def _option(task: Task, name: str) -> str:
    return next((o for o in task.options if o.lower() == name), name)


_SIDE_OF = re.compile(r"the ([a-z]+) ([a-z]+) (?:to the )?(left|right|above|below)\b")


def solve_base_top(task: Task, text: str) -> Verdict:
    """ESI-Bench's three-object form: the crate that carries B (the tried one if B stayed on it,
    else the other) and the block that stays on B (likewise), each answered by the side of B the
    question says it stands on."""
    sides = {f"{c}_{n}": side for c, n, side in _SIDE_OF.findall(task.text.lower())}
    crates = [o.name for o in task.objects if o.noun == "crate"]
    blocks = [o.name for o in task.objects if o.noun == "block"]
    tries = [(ok == "ok", obj, target) for ok, obj, target in _PUT_ON.findall(text)]
    on_crate = [(ok, target) for ok, _, target in tries if target in crates]
    on_b = [(ok, obj) for ok, obj, target in tries if obj in blocks]
    if len(crates) != 2 or len(blocks) != 2 or not on_crate or not on_b:
        return Verdict(None, 0.0, reason="B has not been tried on a crate and a block on B yet")
    (held, crate), (stayed, blk) = on_crate[-1], on_b[-1]
    base = crate if held else next(c for c in crates if c != crate)
    top = blk if stayed else next(k for k in blocks if k != blk)
    if base not in sides or top not in sides:
        return Verdict(None, 0.0, reason="the question does not say where the crates and blocks stand")
    answer = f"{sides[base]}, {sides[top]}"
    return Verdict(answer, 0.95, None, f"{base} carries B and {top} stays on it")
