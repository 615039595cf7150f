"""Reading the plan an agent stored in ``Trajectory.plan`` for the episode page.

The plan's schema is declared once, in :mod:`eviseek.types.plans`. An EviSeek plan is read as
it is; a saved plan that fits no record (an :class:`~eviseek.types.plans.UnreadPlan`) gives
warnings and the raw JSON instead of an error, and its readable demands and subtasks still show.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import ValidationError

from eviseek.types.plans import SUBTASK_STATUSES, AgentPlan, Demand, EviSeekPlan, Subtask, UnreadPlan
from eviseek.viewer.view_models import SubtaskView, subtask_color

_PlanEntry = TypeVar("_PlanEntry", Demand, Subtask)


def read_plan(plan: AgentPlan, warnings: list[str]) -> tuple[list[Demand], list[Subtask], str | None]:
    """Demands and subtasks of the plan; on an unreadable plan, warn and keep the raw JSON."""
    if isinstance(plan, EviSeekPlan):
        return list(plan.demands), list(plan.subtasks), None
    if not isinstance(plan, UnreadPlan):
        return [], [], None
    raw = plan.raw if isinstance(plan.raw, dict) else {}
    problems: list[str] = []
    demands = _read_entries(raw, "demands", Demand, problems)
    subtasks = _read_entries(raw, "subtasks", Subtask, problems)
    warnings.extend(problems or plan.problems)
    return demands, subtasks, json.dumps(plan.raw, indent=1, sort_keys=True, default=str)


def _read_entries(
    plan: dict[str, Any], key: str, model: type[_PlanEntry], problems: list[str]
) -> list[_PlanEntry]:
    raw = plan.get(key, [])
    if not isinstance(raw, list):
        problems.append(f"plan[{key!r}] is a {type(raw).__name__}, expected a list")
        return []
    out: list[_PlanEntry] = []
    for i, entry in enumerate(raw):
        try:
            out.append(model.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "entry"
            problems.append(f"plan[{key!r}][{i}]: {where}: {first['msg']}")
    return out


def build_subtask_views(subtasks: list[Subtask], demand_text: dict[int, str]) -> list[SubtaskView]:
    return [
        SubtaskView(
            id=s.id,
            goal=s.goal,
            status=s.status,
            known_status=s.status in SUBTASK_STATUSES,
            demand=s.demand,
            demand_text=demand_text.get(s.demand) if s.demand is not None else None,
            steps=list(s.steps),
            color=subtask_color(pos),
        )
        for pos, s in enumerate(subtasks)
    ]
