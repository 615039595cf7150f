"""Solvers for physical tests: the outcome the environment reported in words (inside=, overflowed=,
slid=, current_stack=)."""

from __future__ import annotations

import re

from eviseek.models.reference.task import Task
from eviseek.models.reference.verdict import Verdict


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
