"""The two optional controllers: adaptive seeking (triage) and coverage-driven control.

Triage is one call before planning: when the initial view already settles the question the
episode answers passively and records ``mode="passive"``. Coverage-driven control runs after each
closed subtask: the model labels which demands the retained evidence covers and decides to
continue, replace the remaining subtasks (``replan``) or stop and answer.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from eviseek.agents.eviseek.answerer import build_context
from eviseek.agents.eviseek.planner import Subtask, subtasks_from_items
from eviseek.agents.eviseek.state import Episode
from eviseek.agents.replies import CoverageReply, TriageReply
from eviseek.types import Stage
from eviseek.types.plans import CoverageCheck


@dataclass
class TriageDecision:
    """Whether to skip exploration, and the answer given if so."""

    sufficient: bool
    answer: str | None = None


async def triage(ep: Episode) -> TriageDecision:
    """Ask whether the initial view suffices (unreadable reply: explore, the safe choice)."""
    parsed, _ = await ep.caller.ask_rendered(
        Stage.TRIAGE,
        TriageReply,
        fallback="explore (treat the initial view as insufficient)",
        at_step=0,
        metadata={**ep.base_metadata(), "frame_id": ep.frame_id},
        context={
            "question": ep.question,
            "contract": ep.question.contract.describe(),
            "references": ep.references,
            "view": ep.view,
        },
    )
    reply = parsed.value
    if reply is None:
        return TriageDecision(sufficient=False)
    return TriageDecision(sufficient=reply.sufficient, answer=reply.answer)


async def coverage_check(ep: Episode, closed: Subtask, replans_left: int) -> str:
    """Run the coverage check after ``closed``; apply a replan. Returns the decision taken.

    ``replan`` replaces every pending subtask with the model's list (ids continue after the
    highest used; links are checked as in planning). A replan with no usable subtasks, or one
    past the replan limit, is logged and treated as ``continue``.
    """
    remaining = [s for s in ep.plan.subtasks if s.status == "pending"]
    ctx = build_context(
        ep.traj,
        "board",
        capacity=ep.cfg.frame_capacity,
        window=ep.cfg.memory_window,
        feedback_chars=ep.cfg.feedback_chars,
        show_demands=True,
        board=ep.board,
    )
    # Only the images retained for the subtask just closed travel with the call; earlier items
    # are described by their notes, which keeps this check cheap.
    fresh = {it.frame_id for it in ep.board.items if it.subtask == closed.id}
    items = []
    for it, fid in zip(ctx.items, ctx.frame_ids, strict=False):
        items.append({"label": it["label"], "image": it["image"] if fid in fresh else None})
    parsed, _ = await ep.caller.ask_rendered(
        Stage.COVERAGE,
        CoverageReply,
        fallback="continue with the plan",
        at_step=ep.steps_used,
        metadata={
            **ep.base_metadata(),
            "demands": [d.model_dump() for d in ep.plan.demands],
            "closed": closed.model_dump(),
            "remaining": [s.model_dump() for s in remaining],
            "board_frame_ids": ctx.frame_ids,
        },
        context={
            "question": ep.question,
            "demands": ep.plan.demands,
            "closed": closed,
            "remaining": remaining,
            "steps_left": ep.remaining,
            "items": items,
        },
    )
    reply = parsed.value
    decision = reply.decision if reply is not None else "continue"
    record = CoverageCheck(
        after_subtask=closed.id,
        covered=[d for d in (reply.covered if reply else []) if ep.plan.demand(d) is not None],
        decision=decision,
        note=reply.note if reply else "",
    )
    if decision == "replan":
        if replans_left <= 0:
            ep.traj.log(
                "replan_refused",
                "replan limit reached; continuing with the plan",
                stage=Stage.COVERAGE,
                at_step=ep.steps_used,
            )
            decision = "continue"
        else:
            new = replan_subtasks(ep, reply)
            if not new:
                decision = "continue"
            else:
                dropped = [s.model_dump() for s in remaining]
                ep.plan.subtasks = [s for s in ep.plan.subtasks if s.status != "pending"] + new
                ep.traj.log(
                    "replan",
                    f"replaced {len(dropped)} pending subtask(s) with {len(new)}",
                    stage=Stage.COVERAGE,
                    at_step=ep.steps_used,
                    data={"dropped": dropped},
                )
    record.decision = decision
    ep.plan.coverage.append(record)
    return decision


def replan_subtasks(ep: Episode, reply: CoverageReply | None, covered: Collection[int] = ()) -> list[Subtask]:
    """The usable subtasks of a coverage reply that asked to replan, numbered after the highest
    id used so far and checked as in planning; a subtask for a demand in ``covered`` is dropped
    (it would close at once). When none is left, the refusal is logged as ``replan_empty`` and
    the caller continues with its plan. Both controllers (:func:`coverage_check` and the
    navigation controller) replan this way.
    """
    start = max((s.id for s in ep.plan.subtasks), default=0) + 1
    new = subtasks_from_items(
        reply.subtasks if reply else [],
        ep.plan.demands,
        start_id=start,
        limit=ep.cfg.max_subtasks,
        trajectory=ep.traj,
        stage=Stage.COVERAGE,
    )
    new = [s for s in new if s.demand not in covered]
    if not new:
        ep.traj.log(
            "replan_empty",
            "replan asked without usable subtasks; continuing",
            stage=Stage.COVERAGE,
            at_step=ep.steps_used,
        )
    return new
