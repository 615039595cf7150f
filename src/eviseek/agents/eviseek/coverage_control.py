"""Coverage-driven control: the navigation variant's controller decides completion and stopping.

In the ESI-Bench configuration the seeker closes its own subtasks and the plan is followed as
written (optionally with :func:`~eviseek.agents.eviseek.control.coverage_check` between
subtasks). The navigation variant (paper 5.5 and app. F: "demand coverage to guide replanning and
stopping") hands those decisions to a controller:

- after every seeker decision that added evidence to the board, and whenever the seeker says DONE
  or BLOCKED, one coverage call labels the demands the retained evidence covers and proposes
  ``continue``, ``replan`` or ``stop``;
- the active subtask is complete exactly when its demand is covered; a seeker's DONE on an
  uncovered demand is refused (the seeker is told so and keeps looking), a BLOCKED closes it;
- the episode stops when every demand is covered or the controller says stop;
- when the plan runs out while demands are still uncovered and steps remain, the controller is
  asked once more and may replan (up to ``max_replans`` times).

Checking only when the board changed is ours: coverage is judged from retained evidence, so a
decision that kept nothing cannot change it, and skipping those calls keeps a 120-step episode
affordable. Which retained views a check sees as images is ``EviSeekConfig.coverage_views``:
only the new ones, or (ours, the navigation variant's default) all of them. With
``EviSeekConfig.coverage_walk`` (ours, on in the navigation variant) a check also reads the
seeker's working memory and the dead-reckoned pose: whether the agent has stood in the room the
question names is something the retained views alone do not show.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from eviseek.agents.eviseek.answerer import evidence_label
from eviseek.agents.eviseek.control import replan_subtasks
from eviseek.agents.eviseek.curator import keep_current
from eviseek.agents.eviseek.planner import Subtask
from eviseek.agents.eviseek.seeker import BLOCKED, DONE, SeekDecision, decision_record, seek
from eviseek.agents.eviseek.state import Episode, WorkingMemory
from eviseek.agents.replies import CoverageReply
from eviseek.types import Stage
from eviseek.types.plans import CoverageCheck, SeekerDecision

Trigger = Literal["new_evidence", "seeker_done", "seeker_blocked", "plan_exhausted"]
Verdict = Literal["continue", "replan", "stop"]
ActFn = Callable[[Episode, Subtask, SeekDecision, SeekerDecision, WorkingMemory], Awaitable[None]]


@dataclass
class CoverageState:
    """What the controller has established so far in one episode."""

    replans_left: int
    covered: set[int] = field(default_factory=set)
    board_checked: int = 0
    """Board size at the last check: items past it are new and travel as images."""


async def run_with_coverage_control(ep: Episode, act: ActFn) -> None:
    """Execute the plan with the controller deciding completion, replanning and stopping."""
    state = CoverageState(replans_left=ep.cfg.max_replans)
    while ep.remaining > 0 and not ep.ended:
        subtask = ep.plan.next_pending()
        if subtask is None:
            if _all_covered(ep, state):
                break
            verdict = await _check(ep, state, None, "plan_exhausted", ep.working_memory())
            if verdict != "replan":
                break
            continue
        verdict = await _run_subtask(ep, subtask, state, act)
        ep.board.bind(subtask.id, subtask.demand, ep.steps_used)
        if verdict == "stop":
            ep.traj.log(
                "early_stop",
                "the coverage controller stopped the episode: "
                + (
                    "every demand is covered"
                    if _all_covered(ep, state)
                    else "it found the evidence sufficient"
                ),
                stage=Stage.COVERAGE,
                at_step=ep.steps_used,
            )
            break
    ep.plan.covered = sorted(state.covered)


async def _run_subtask(ep: Episode, subtask: Subtask, state: CoverageState, act: ActFn) -> Verdict:
    """Work on ``subtask`` until the controller closes it; returns ``stop`` to end the episode."""
    subtask.status = "active"
    memory = ep.working_memory()
    decisions = 0
    while True:
        if ep.remaining <= 0 or ep.ended:
            _close(
                ep, subtask, state, "the step budget is spent" if ep.remaining <= 0 else "the episode ended"
            )
            return "continue"
        if decisions >= ep.cfg.max_decisions_per_subtask:
            _close(ep, subtask, state, f"{decisions} decisions without covering its demand")
            return "continue"
        decision = await seek(ep, subtask, memory)
        decisions += 1
        record = decision_record(ep, subtask, decision)
        if keep_current(ep, subtask, decision) is not None:  # split retention only
            record.kept_current = True
        if decision.intent in (DONE, BLOCKED):
            trigger: Trigger = "seeker_done" if decision.intent == DONE else "seeker_blocked"
            verdict = await _check(ep, state, subtask, trigger, memory)
            if verdict == "stop" or subtask.status != "active":
                _finish_active(ep, subtask, state)
                return verdict
            if _covered(subtask, state):
                subtask.status = "done"
                return "continue"
            if decision.intent == BLOCKED:
                subtask.status = "blocked"
                return "continue"
            ep.traj.log(
                "done_refused",
                f"subtask {subtask.id}: the seeker said DONE but demand {subtask.demand} is not covered",
                stage=Stage.COVERAGE,
                at_step=ep.steps_used,
            )
            memory.add(
                f"DONE was refused: the retained evidence does not yet cover demand {subtask.demand}; "
                "look somewhere new"
            )
            continue
        await act(ep, subtask, decision, record, memory)
        if len(ep.board) > state.board_checked:
            verdict = await _check(ep, state, subtask, "new_evidence", memory)
            if verdict == "stop" or subtask.status != "active":
                _finish_active(ep, subtask, state)
                return verdict
            if _covered(subtask, state):
                subtask.status = "done"
                return "continue"


def _covered(subtask: Subtask, state: CoverageState) -> bool:
    return subtask.demand is not None and subtask.demand in state.covered


def _all_covered(ep: Episode, state: CoverageState) -> bool:
    ids = {d.id for d in ep.plan.demands}
    return bool(ids) and ids <= state.covered


def _finish_active(ep: Episode, subtask: Subtask, state: CoverageState) -> None:
    """Close a subtask the controller ended (stop or replan) as done when its demand is covered."""
    if subtask.status == "active":
        subtask.status = "done" if _covered(subtask, state) else "timed_out"


def _close(ep: Episode, subtask: Subtask, state: CoverageState, why: str) -> None:
    if _covered(subtask, state):
        subtask.status = "done"
        return
    subtask.status = "timed_out"
    ep.traj.log("subtask_timed_out", f"subtask {subtask.id}: {why}", at_step=ep.steps_used)


def _items(ep: Episode, fresh_from: int) -> list[dict[str, Any]]:
    """The board as the controller sees it: every item's label, images only for new items."""
    out: list[dict[str, Any]] = []
    for k, it in enumerate(ep.board.items, 1):
        label = evidence_label(k, it, ep.cfg.feedback_chars, show_demand=False)
        out.append({"label": label, "image": it.image if k > fresh_from else None, "frame_id": it.frame_id})
    return out


async def _check(
    ep: Episode, state: CoverageState, active: Subtask | None, trigger: Trigger, memory: WorkingMemory
) -> Verdict:
    """One coverage call; updates what is covered and applies a replan. Returns the verdict.
    With ``coverage_walk`` (ours) the call also carries the seeker's working memory and the
    dead-reckoned pose, so the check can tell where the agent has stood."""
    remaining = [s for s in ep.plan.subtasks if s.status == "pending"]
    # Only new items travel as images, or (coverage_views="all") every retained one, so that
    # evidence spread over several views, some retained before this subtask, adds up.
    items = _items(ep, 0 if ep.cfg.coverage_views == "all" else state.board_checked)
    state.board_checked = len(ep.board)
    walk: dict[str, Any] = {}
    if ep.cfg.coverage_walk:
        walk = {"working_memory": memory.recent(), "pose": ep.pose.pose.model_dump()}
    parsed, _ = await ep.caller.ask_rendered(
        Stage.COVERAGE,
        CoverageReply,
        template="coverage_nav",
        fallback="keep the coverage found so far and continue",
        at_step=ep.steps_used,
        metadata={
            **ep.base_metadata(),
            "control": "navigation",
            "trigger": trigger,
            "demands": [d.model_dump() for d in ep.plan.demands],
            "covered_before": sorted(state.covered),
            "active": active.model_dump() if active is not None else None,
            "remaining": [s.model_dump() for s in remaining],
            "remaining_steps": ep.remaining,
            "board_frame_ids": [it["frame_id"] for it in items if it["image"] is not None],
            **walk,
        },
        context={
            "question": ep.question,
            "demands": ep.plan.demands,
            "covered": state.covered,
            "active": active,
            "trigger": trigger.replace("_", " "),
            "remaining": remaining,
            "steps_left": ep.remaining,
            "items": items,
            "memory": walk.get("working_memory", []),
            "pose": ep.pose.describe() if walk else "",
        },
    )
    reply = parsed.value
    known = {d.id for d in ep.plan.demands}
    newly = {d for d in (reply.covered if reply else []) if d in known}
    state.covered |= newly
    verdict: Verdict = reply.decision if reply is not None else "continue"
    if _all_covered(ep, state):
        verdict = "stop"
    if verdict == "replan":
        verdict = _replan(ep, state, active, reply, remaining)
    ep.plan.coverage.append(
        CoverageCheck(
            after_subtask=active.id if active is not None else None,
            trigger=trigger,
            covered=sorted(state.covered),
            decision=verdict,
            proposed=reply.decision if reply is not None else None,
            note=reply.note if reply else "",
            at_step=ep.steps_used,
        )
    )
    return verdict


def _replan(
    ep: Episode,
    state: CoverageState,
    active: Subtask | None,
    reply: CoverageReply | None,
    remaining: list[Subtask],
) -> Verdict:
    if state.replans_left <= 0:
        ep.traj.log(
            "replan_refused", "replan limit reached; continuing", stage=Stage.COVERAGE, at_step=ep.steps_used
        )
        return "continue"
    new = replan_subtasks(ep, reply, covered=state.covered)
    if not new:
        return "continue"
    state.replans_left -= 1
    if active is not None and active.status == "active":
        active.status = "done" if _covered(active, state) else "timed_out"
    ep.plan.subtasks = [s for s in ep.plan.subtasks if s.status != "pending"] + new
    ep.traj.log(
        "replan",
        f"replaced {len(remaining)} pending subtask(s)"
        + (f" and closed subtask {active.id}" if active is not None else "")
        + f" with {len(new)}",
        stage=Stage.COVERAGE,
        at_step=ep.steps_used,
        data={"dropped": [s.model_dump() for s in remaining]},
    )
    return "replan"
