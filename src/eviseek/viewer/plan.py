"""Reading the plan an agent stored in ``Trajectory.plan`` for the episode page.

The plan's schema is declared once, in :mod:`eviseek.types.plans` (``PlanDemand``,
``PlanSubtask``). It is read leniently (extra keys kept, missing ones defaulted); a malformed
plan gives warnings and the raw JSON instead of an error.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import ValidationError

from eviseek.types.plans import SUBTASK_STATUSES, PlanDemand, PlanSubtask
from eviseek.viewer.view_models import SubtaskView, subtask_color

_PlanEntry = TypeVar("_PlanEntry", PlanDemand, PlanSubtask)


def read_plan(
    plan: dict[str, Any], warnings: list[str]
) -> tuple[list[PlanDemand], list[PlanSubtask], str | None]:
    """Parse demands and subtasks; on a malformed plan, warn and keep the raw JSON for display."""
    if not plan:
        return [], [], None
    problems: list[str] = []
    demands = _read_entries(plan, "demands", PlanDemand, problems)
    subtasks = _read_entries(plan, "subtasks", PlanSubtask, problems)
    plan_json = None
    if problems:
        warnings.extend(problems)
        plan_json = json.dumps(plan, indent=1, sort_keys=True, default=str)
    return demands, subtasks, plan_json


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


def build_subtask_views(subtasks: list[PlanSubtask], demand_text: dict[int, str]) -> list[SubtaskView]:
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
