"""EviSeek's seeking, keeping and control stages: the next intent, which views to keep, whether a
target is still in view, and when the demands are covered."""

from __future__ import annotations

from typing import Any

from eviseek.models.reference import house, navigate
from eviseek.models.reference.intents import Intent, seek_intent
from eviseek.models.reference.planning import names_of
from eviseek.models.reference.policy import CAMERA_NAMES, PoseEstimate, routine_of_goal
from eviseek.models.reference.request import Request
from eviseek.models.reference.solve import solve
from eviseek.models.reference.task import TEST_KINDS, Task, mentions
from eviseek.models.reference.views import quality, visible_fraction
from eviseek.models.reference.vision import View


def seek(req: Request) -> dict[str, Any]:
    view = req.current
    subtask = req.meta.get("subtask") or {}
    specs = [i for i in req.meta.get("intents", []) if isinstance(i, dict)]
    offered = [str(i.get("name")) for i in specs]
    memory = req.memory
    remaining = int(req.meta.get("remaining_steps", 0) or 0)
    if view is None:
        return Intent("BLOCKED", reasoning="no current view was shown").reply()
    if navigate.is_navigation(offered):
        name, args, why = navigate.nav_intent(
            req.task,
            view,
            memory,
            req.trail,
            remaining,
            req.house,
            req.meta.get("pose"),
            int(req.meta.get("steps_used", 0) or 0),
        )
        nav_reply = Intent(name, dict(args), reasoning=why).reply()
        if req.meta.get("ask_keep"):
            nav_reply.update(_seek_keep(req, view))
        return nav_reply
    pose = PoseEstimate.from_metadata(req.meta.get("pose"))
    pose.pitch_floor = any("pitch>=-90" in m for m in memory + req.trail)
    routine = routine_of_goal(str(subtask.get("goal", "")), req.task)
    reply = seek_intent(routine, req.task, view, pose, offered, memory, remaining, specs).reply()
    if req.meta.get("ask_keep"):
        reply.update(_seek_keep(req, view))
    return reply


def keep(req: Request) -> dict[str, Any]:
    if req.meta.get("purpose") == "track":
        return _track(req)
    views = req.views
    # The first image is the view before the intent; the rest are the new candidates.
    candidates = views[1:] if len(views) > 1 else views
    return _judge_views(req, candidates, _tested(req))


def _tested(req: Request) -> bool:
    """Whether the reported outcomes include a physical test (not only camera moves)."""
    outcomes = req.meta.get("outcomes") or []
    return any(str(o.get("operation", "")) not in CAMERA_NAMES for o in outcomes if isinstance(o, dict))


def curate(req: Request) -> dict[str, Any]:
    """Split retention's curator: the keeper's judgement over the intermediate frames shown."""
    verdict = _judge_views(req, req.views, _tested(req))
    return {"frames": verdict["frames"] if verdict["keep"] else [], "note": verdict["note"]}


def _seek_keep(req: Request, view: View) -> dict[str, Any]:
    """Split retention's keep field of a seek reply: the keeper's judgement of the current view.

    Whether that view shows a test's outcome is read from the last line of the action trail.
    """
    trail = [str(t) for t in req.trail]
    last = trail[-1].split(":", 1)[-1].strip() if trail else ""
    action = last.split("(", 1)[0].split(" ", 1)[0]
    verdict = _judge_views(req, [view], bool(action) and action not in CAMERA_NAMES)
    return {"keep": verdict["keep"], "keep_note": verdict["note"] if verdict["keep"] else ""}


def _judge_views(req: Request, candidates: list[View], tested: bool) -> dict[str, Any]:
    if req.house is not None:
        return _keep_house(req, candidates)
    if req.meta.get("navigation") and req.task.kind == "unknown":
        return _keep_named_colour(req, candidates)
    scores = [quality(req.task, v) for v in candidates]
    if not scores:
        return {"keep": False, "frames": [], "note": "nothing new to keep"}
    best = max(range(len(scores)), key=lambda i: (scores[i], i))
    if tested:
        return {"keep": True, "frames": [len(candidates)], "note": "the outcome of the test, seen after it"}
    if req.task.kind in TEST_KINDS:
        # After a test, a look from above shows where things ended up (e.g. inside a bin).
        seen = [i for i, v in enumerate(candidates) if v.steep and visible_fraction(req.task, v) >= 1.0]
        if seen:
            return {"keep": True, "frames": [seen[-1] + 1], "note": "where the objects ended up, from above"}
        return {"keep": False, "frames": [], "note": "the objects are not all in view"}
    # A look at a lone object is worth keeping whenever it shows the object whole; layouts need
    # everything named in one steep view.
    threshold = {"shape": 0.01, "order": 0.6}.get(req.task.kind, 0.8)
    if scores[best] < threshold:
        return {"keep": False, "frames": [], "note": "these views do not show what the question needs"}
    frames = [best + 1]
    if req.task.kind in ("count", "order", "moved", "mirror_closer"):
        # Views of a spread-out or piled scene complement each other: keep every good one.
        frames = [i + 1 for i, q in enumerate(scores) if q >= threshold]
    verdict = solve(req.task, [candidates[best]], text=req.text)
    note = f"{_view_words(req.task, candidates[best])}; {verdict.reason}"
    return {"keep": True, "frames": frames, "note": note}


def _view_words(task: Task, view: View) -> str:
    where = "from above" if view.steep else "from near table height"
    if task.kind == "count":
        return f"the table {where}"
    return f"{names_of(task)} {where}"


def _track(req: Request) -> dict[str, Any]:
    view = req.current
    if view is None:
        return {"visible": False, "note": "no image"}
    colors = [r.color for r in mentions(str(req.meta.get("target", "")))] or req.task.colors
    if not colors:
        return {"visible": True, "note": "no colour to look for; assuming it is still there"}
    seen = [c for c in colors if view.of(c)]
    return {"visible": bool(seen), "note": ("still see " + ", ".join(seen)) if seen else "lost from view"}


def coverage(req: Request) -> dict[str, Any]:
    if req.meta.get("control") == "navigation":
        return _coverage_nav(req)
    closed = req.meta.get("closed") or {}
    remaining = req.meta.get("remaining") or []
    covered = [int(closed["demand"])] if closed.get("status") == "done" and closed.get("demand") else []
    decision = "continue" if remaining else "stop"
    return {"covered": covered, "decision": decision, "subtasks": [], "note": "following the plan"}


def _keep_named_colour(req: Request, candidates: list[View]) -> dict[str, Any]:
    """In a house the policy cannot measure the question; it keeps the clearest view of a colour
    the question names (e.g. "the orange laptop"), if one is in view."""
    sizes = [navigate.target_size(req.task, v) for v in candidates]
    if not sizes or max(sizes) < NAMED_COLOUR_SHARE:
        return {"keep": False, "frames": [], "note": "no colour the question names is in view"}
    best = max(range(len(sizes)), key=lambda i: (sizes[i], i))
    colours = ", ".join(req.task.colors)
    note = f"{colours} in view ({sizes[best]:.1%} of the picture)"
    return {"keep": True, "frames": [best + 1], "note": note}


REPLAN_MIN_STEPS = 12
"""Steps a house search needs left to be worth a new subtask (a turn round and a few moves)."""

NAMED_COLOUR_SHARE = 0.002
"""Smallest share of the picture a named colour must cover for the house keeper to keep the view
(about 150 pixels at 320x240: a small object a few metres away)."""


def _keep_house(req: Request, candidates: list[View]) -> dict[str, Any]:
    """Keep the views that show something the house question turns on: its room (with any small
    objects in it), a doorway (two floors meeting), or the object it names anywhere. The note,
    kept or not, names the rooms the views were taken in and the doorways they show (the
    policy's map, read back from the working memory by :func:`house.read_map`)."""
    ask = req.house
    assert ask is not None
    frames: list[int] = []
    things: list[str] = []
    summaries = [house.read_view(v) for v in candidates]
    for i, s in enumerate(summaries):
        useful = (
            (s.room is not None and s.room in (ask.room, ask.other))
            or any(ask.category in (None, o.category) for o in s.objects)
            or (
                ask.kind in ("traversable_passage", "regional_boundary", "long_term_navigation")
                and bool(s.links)
            )
            or (ask.kind == "long_term_navigation" and s.room is not None)
        )
        if useful:
            frames.append(i + 1)
            things += [f"{o.colour} {o.category}" for o in s.objects]
    where = house.map_note(summaries)
    if not frames:
        return {"keep": False, "frames": [], "note": f"{where}; nothing the question needs"}
    seen = ", ".join(list(dict.fromkeys(things))[:3]) or "no small object"
    return {"keep": True, "frames": frames[-3:], "note": f"{where}; {seen}"}


def _absent_too_soon(req: Request) -> bool:
    """Whether the views say "none there" (existence "no", counting "0") before the agent has
    looked round the named room from two spots, by its own notes: one look round misses a small
    thing standing behind furniture of its own colour or too far off to read (ours)."""
    ask = req.house
    if ask is None or ask.kind not in ("existence", "counting") or not req.views:
        return False
    if req.verdict().answer not in ("no", "0"):
        return False
    return navigate.looks_in(req.memory, ask.target_room) < navigate.MORE_SWEEPS_IN_TARGET


def _coverage_nav(req: Request) -> dict[str, Any]:
    """The navigation controller's check: the active demand is covered when a newly retained
    view is good enough for the question (the keeper's own bar); stop once the retained views
    settle the question or the plan has run out."""
    covered = [int(c) for c in req.meta.get("covered_before") or []]
    active = req.meta.get("active") or {}
    threshold = {"shape": 0.01, "order": 0.6}.get(req.task.kind, 0.8)
    # Whether the agent has stood in the room the question names, by its own notes and pose
    # (None: the check was not shown them, as in the paper's controller).
    stood = navigate.stood_in_target(req.house, req.memory, req.meta.get("pose")) if req.house else None
    # Held back: not stood there yet, or about to say "none there" after one look round only.
    hold = stood is False or (stood is True and _absent_too_soon(req))
    if req.house is not None:
        # The demand is covered once the retained views hold evidence that settles it, and, for
        # a question about what is inside a named room, once the agent has stood in that room: a
        # view through a doorway shows only part of a room.
        fresh = req.views if not hold and house.covered(req.house, req.views) else []
    elif req.task.kind == "unknown":
        # A question the policy cannot measure: a retained view of the colour it names is as
        # much as it can establish.
        fresh = [v for v in req.views if navigate.target_size(req.task, v) >= NAMED_COLOUR_SHARE]
    else:
        fresh = [v for v in req.views if quality(req.task, v) >= threshold]
    if fresh and active.get("demand") is not None and int(active["demand"]) not in covered:
        covered.append(int(active["demand"]))
    settled = not hold and bool(req.views) and req.verdict().confidence >= 0.9
    demand_ids = [int(d["id"]) for d in req.meta.get("demands") or []]
    all_covered = set(demand_ids) <= set(covered)
    left = int(req.meta.get("remaining_steps", 0) or 0)
    if req.house is not None and not active and not settled and not all_covered and left >= REPLAN_MIN_STEPS:
        # The plan ran out before the evidence was found: look elsewhere while steps remain.
        todo = next(d for d in demand_ids if d not in covered)
        where = f"the {req.house.target_room}" if req.house.target_room else "a room not yet seen"
        goal = f"Look round {where} again, from a new spot, for what the question asks"
        if stood is False:
            goal = f"Walk into {where} and look round it for what the question asks"
        return {
            "covered": covered,
            "decision": "replan",
            "subtasks": [{"goal": goal, "demand": todo}],
            "note": "not found yet; search on",
        }
    if settled or not active or all_covered:
        return {
            "covered": covered,
            "decision": "stop",
            "subtasks": [],
            "note": "enough seen" if settled else "plan done",
        }
    return {"covered": covered, "decision": "continue", "subtasks": [], "note": "keep following the plan"}
