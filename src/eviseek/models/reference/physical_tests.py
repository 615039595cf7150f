"""Physical tests the policy runs for a question (drop in, pour, set on the slope, build the tower),
spoken as the legal action or intent that names the objects, shared by both agents."""

from __future__ import annotations

import itertools
import re
from collections.abc import Generator
from typing import Any

from eviseek.models.reference.task import ObjectRef, Task


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
    if task.kind == "which_fit" and len(objs) >= 2 and "put_inside" in names:
        for bin_ref in objs[1:]:
            if bin_ref.name in fit_outcomes(text):
                continue
            obj, target = (
                _choice(specs, "put_inside", "object", objs[0]),
                _choice(specs, "put_inside", "target", bin_ref),
            )
            if obj and target:
                return (
                    "put_inside",
                    {"object": obj, "target": target},
                    "drop it in and see whether it ends inside",
                )
        return None
    if task.kind == "base" and len(objs) >= 3 and "put_on" in names:
        if "put_on:" in text:  # one try settles it: exactly one of the two boxes is the base
            return None
        b, box = _choice(specs, "put_on", "object", objs[-1]), _choice(specs, "put_on", "target", objs[0])
        if b and box:
            return (
                "put_on",
                {"object": b, "target": box},
                "place B on one box and see whether it stays on top",
            )
    if task.kind == "base_top" and len(objs) >= 5 and "put_on" in names:
        return _base_top_step(task, specs, text)
    if task.kind == "overflow" and len(objs) >= 2 and "pour" in names:
        if "overflowed=" in text:
            return None
        src, dst = _choice(specs, "pour", "object", objs[0]), _choice(specs, "pour", "target", objs[1])
        if src and dst:
            return "pour", {"object": src, "target": dst}, "pour it and see whether anything spills"
    if task.kind == "capacity" and len(objs) >= 2 and {"fill", "pour"} <= names:
        if "overflowed=" in text:
            return None
        first, second = objs[0], objs[1]
        if "fill: ok" not in text and "already full" not in text:
            obj = _choice(specs, "fill", "object", first)
            if obj:
                return "fill", {"object": obj}, "fill it to the brim with water"
        src, dst = _choice(specs, "pour", "object", first), _choice(specs, "pour", "target", second)
        if src and dst:
            return (
                "pour",
                {"object": src, "target": dst},
                "pour the full one into the other and see whether it spills",
            )
    if task.kind == "slide" and objs and "put_on_slope" in names:
        if "put_on_slope: ok" in text:  # done once; its outcome is in the step's frames
            return None
        obj = _choice(specs, "put_on_slope", "object", objs[0])
        if obj:
            return "put_on_slope", {"object": obj}, "set it on the slope and watch it"
    if task.kind == "stack" and "put_on" in names:
        return _stack_step(task, specs, text)
    return None


_PUT_ON_TRY = re.compile(
    r"put_on: (?:ok|failed); ([a-z]+_[a-z]+) (?:rests on|did not stay on(?: top of)?) ([a-z]+_[a-z]+)"
)


def _base_top_step(
    task: Task, specs: list[dict[str, Any]], text: str
) -> tuple[str, dict[str, str], str] | None:
    """Three-object form (objects named crate, crate, B, block, block): put B on the first crate,
    put it back, then put the first block on B. One try each settles it: exactly one crate carries
    B and exactly one block stays on B."""
    crate, b, block = task.objects[0], task.objects[2], task.objects[3]
    tries = _PUT_ON_TRY.findall(text)
    b_name = _choice(specs, "put_on", "object", b)
    if not b_name:
        return None
    if not any(obj == b_name for obj, _ in tries):
        target = _choice(specs, "put_on", "target", crate)
        if target:
            return (
                "put_on",
                {"object": b_name, "target": target},
                "place B on one crate and see whether it stays on top",
            )
        return None
    if any(target == b_name for _, target in tries):
        return None
    if f"{b_name} is back where it started" not in text and "put_back" in _offered(specs):
        return "put_back", {"object": b_name}, "return B to its place before trying a block on it"
    top = _choice(specs, "put_on", "object", block)
    if top:
        return (
            "put_on",
            {"object": top, "target": b_name},
            "place one block on B and see whether it stays on top",
        )
    return None


_INSIDE = re.compile(r"\b[a-z]+_[a-z]+ (is inside|does not fit inside) ([a-z]+_[a-z]+)")


def fit_outcomes(text: str) -> dict[str, bool]:
    """Every container an object was dropped into, and whether it ended inside (the last try)."""
    return {box: verb == "is inside" for verb, box in _INSIDE.findall(text)}


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
