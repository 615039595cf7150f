"""Single-model's step: the next atomic action of the question's routine, with the current answer."""

from __future__ import annotations

from typing import Any

from eviseek.models.reference import navigate
from eviseek.models.reference.atomic import next_atomic
from eviseek.models.reference.policy import Replay, routine_for
from eviseek.models.reference.request import HISTORY_ACTION, Request


def _replay(text: str) -> Replay:
    rep = Replay()
    for m in HISTORY_ACTION.finditer(text):
        rep.actions.append(m.group(1))
        rep.clamped.append("clamped" in m.group(3))
    return rep


def single_step(req: Request) -> dict[str, Any]:
    specs = [a for a in req.meta.get("legal_actions", []) if isinstance(a, dict)]
    legal = [str(a.get("name")) for a in specs if a.get("kind") != "control"]
    step = int(req.meta.get("step", 0) or 0)
    view = req.current
    verdict = req.verdict()
    if view is None:
        return {"action": "stop", "answer": verdict.answer, "confidence": 0.0, "reasoning": "no image"}
    replay = _replay(req.text)
    first_steep = view.steep if step == 0 else None
    if navigate.is_navigation(legal):
        results = [m.group(3) for m in HISTORY_ACTION.finditer(req.text)]
        action, why = navigate.nav_atomic(
            req.task,
            view,
            replay.actions,
            bool(results) and navigate.failed(results[-1]),
            legal,
            req.house,
            verdict.confidence >= 0.9,
        )
    else:
        action, why = next_atomic(
            routine_for(req.task), req.task, view, replay, legal, first_steep, specs, req.text
        )
    if action is None:
        conf = max(verdict.confidence, 0.85)
        return {"action": "stop", "answer": verdict.answer, "confidence": round(conf, 3), "reasoning": why}
    return {
        "action": action,
        "answer": verdict.answer,
        "confidence": round(min(verdict.confidence, 0.6), 3),
        "reasoning": why,
    }
