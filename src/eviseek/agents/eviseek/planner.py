"""Evidence-demand planning: demands from the question, then a fixed acquisition plan.

The planner makes two calls. The first turns the question (with its answer contract, the task's
advice and the initial view) into K evidence demands that are question-conditioned, observable
and answer-agnostic. The second turns the demands into an ordered plan of subtasks, each an
observable goal linked to the demand it serves. The plan's goals and links stay fixed for the
episode; only statuses change (unless coverage-driven control replans what is left).

The plan is the episode's ``Trajectory.plan``, an :class:`eviseek.types.plans.EviSeekPlan`
(``demands``, ``subtasks``, ``mode`` and the decision and coverage logs): the stages update that
record in place, so the trajectory always holds the current plan.
"""

from __future__ import annotations

from eviseek.agents.replies import DemandsReply, PlanReply, SubtaskItem
from eviseek.types import Stage, Trajectory
from eviseek.types.plans import Demand, EviSeekPlan, Subtask, SubtaskStatus

Status = SubtaskStatus

__all__ = [
    "Demand",
    "EviSeekPlan",
    "Status",
    "Subtask",
    "demands_from_reply",
    "plan_from_reply",
    "subtasks_from_items",
]


def demands_from_reply(
    reply: DemandsReply | None, question_text: str, max_demands: int, trajectory: Trajectory
) -> list[Demand]:
    """Demands from the model's reply, cleaned; a single question-wide demand as the fallback."""
    texts = [d.text.strip() for d in (reply.demands if reply else []) if d.text and d.text.strip()]
    seen: set[str] = set()
    unique = []
    for t in texts:
        if t.lower() not in seen:
            seen.add(t.lower())
            unique.append(t)
    if len(unique) > max_demands:
        trajectory.log(
            "plan_trimmed",
            f"{len(unique)} demands proposed; kept the first {max_demands}",
            stage=Stage.DEMANDS,
        )
        unique = unique[:max_demands]
    if not unique:
        if reply is not None:
            trajectory.log(
                "plan_fallback",
                "the demand list was empty; using one question-wide demand",
                stage=Stage.DEMANDS,
            )
        unique = [f"Views or test outcomes that show what the question asks: {question_text}"]
    return [Demand(id=i + 1, text=t) for i, t in enumerate(unique)]


def subtasks_from_items(
    items: list[SubtaskItem],
    demands: list[Demand],
    *,
    start_id: int,
    limit: int,
    trajectory: Trajectory,
    stage: str,
) -> list[Subtask]:
    """Subtasks from reply items: goals cleaned, demand links checked, count capped.

    A link to a demand that does not exist is a model mistake: it is logged and the subtask is
    assigned to a demand in turn, so every subtask keeps serving some demand.
    """
    ids = [d.id for d in demands]
    goals = [(it.goal.strip(), it.demand) for it in items if it.goal and it.goal.strip()]
    if len(goals) > limit:
        trajectory.log("plan_trimmed", f"{len(goals)} subtasks proposed; kept the first {limit}", stage=stage)
        goals = goals[:limit]
    out: list[Subtask] = []
    for j, (goal, link) in enumerate(goals):
        demand: int | None = None
        if ids:
            if link in ids:
                demand = link
            else:
                demand = ids[j % len(ids)]
                trajectory.log(
                    "plan_repaired",
                    f"subtask {goal[:60]!r} named demand {link!r}, which does not exist; linked to {demand}",
                    stage=stage,
                )
        out.append(Subtask(id=start_id + j, goal=goal, demand=demand))
    return out


def plan_from_reply(
    reply: PlanReply | None, demands: list[Demand], max_subtasks: int, trajectory: Trajectory
) -> list[Subtask]:
    """The acquisition plan from the model's reply; one subtask per demand as the fallback."""
    subtasks = subtasks_from_items(
        reply.subtasks if reply else [],
        demands,
        start_id=1,
        limit=max_subtasks,
        trajectory=trajectory,
        stage=Stage.PLAN,
    )
    if subtasks:
        return subtasks
    if reply is not None:
        trajectory.log("plan_fallback", "the plan was empty; one subtask per demand", stage=Stage.PLAN)
    if demands:
        return [
            Subtask(id=i + 1, goal=f"Obtain a clear observation of: {d.text}", demand=d.id)
            for i, d in enumerate(demands[:max_subtasks])
        ]
    return [Subtask(id=1, goal="Find and look closely at what the question is about", demand=None)]
