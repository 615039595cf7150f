"""Answering stages: the answer with its reason, the forced choice, triage, the frontier
baseline's check, the EXPRESS judge, and a schema-shaped reply for any stage the policy does not play."""

from __future__ import annotations

from typing import Any

from eviseek.models.reference import house, navigate
from eviseek.models.reference.express_judge import express_judge_reply
from eviseek.models.reference.request import Request
from eviseek.models.reference.verdict import Verdict


def answer(req: Request) -> dict[str, Any]:
    verdict = req.verdict()
    return {"answer": verdict.answer, "reasoning": why(verdict, len(req.views))}


def forced_choice(req: Request) -> dict[str, Any]:
    return {"answer": req.verdict().answer}


def why(verdict: Verdict, n_views: int) -> str:
    if verdict.view is None:
        return f"{verdict.reason} (guessing)"
    return f"image {verdict.view + 1} of {n_views}: {verdict.reason}"


def triage(req: Request) -> dict[str, Any]:
    verdict = req.verdict()
    sufficient = verdict.confidence >= 0.9
    return {
        "sufficient": sufficient,
        "answer": verdict.answer if sufficient else "",
        "reasoning": why(verdict, len(req.views)),
    }


def explore_check(req: Request) -> dict[str, Any]:
    """Enough when the attached views settle the question; else point at a named colour in view."""
    verdict = req.verdict()
    final = bool(req.meta.get("final"))
    enough = final or verdict.confidence >= 0.9
    view = req.current
    if req.house is not None and view is not None:
        side = house.heading(req.house, view)[0]
    else:
        side = navigate.target_side(req.task, view) if view is not None else None
    return {
        "enough": enough,
        "answer": verdict.answer,
        "direction": side or "",
        "reasoning": why(verdict, len(req.views)),
    }


def express_judge(req: Request) -> dict[str, Any]:
    """EXPRESS-Bench's answer judge, played by a text rule (see :mod:`.express_judge`)."""
    return express_judge_reply(req.meta, len(req.images))


# --------------------------------------------------------------------------------------------
# any other stage


def _describe(req: Request) -> str:
    """Plain text for a request without a reply schema: the colour of the most central region
    when the question asks about a colour, else the colours in view by size."""
    view = req.current
    if view is None:
        return "I was shown no image."
    blobs = [b for found in view.blobs.values() for b in found]
    if not blobs:
        return "I see no coloured object."
    if "colour" in req.text.lower() or "color" in req.text.lower():
        cx, cy = view.width / 2, view.height / 2
        centre = min(blobs, key=lambda b: (b.centroid[0] - cx) ** 2 + (b.centroid[1] - cy) ** 2)
        return centre.color
    sizes: dict[str, int] = {}
    for b in blobs:
        sizes[b.color] = sizes.get(b.color, 0) + b.area
    return "I see " + ", ".join(sorted(sizes, key=lambda c: -sizes[c])) + "."


def from_schema(req: Request) -> dict[str, Any] | str:
    """A minimal object that fits the reply schema of a stage this policy does not play."""
    if not req.config.response_schema:
        return _describe(req)
    schema = req.config.response_schema or {}
    out: dict[str, Any] = {}
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        spec = props.get(name, {})
        kind = spec.get("type")
        if kind == "boolean":
            out[name] = False
        elif kind in ("integer", "number"):
            out[name] = 0
        elif kind == "array":
            out[name] = []
        elif kind == "object":
            out[name] = {}
        else:
            out[name] = req.verdict().answer if name == "answer" else ""
    return out
