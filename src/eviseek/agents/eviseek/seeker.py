"""The seeker: picks the next acquisition intent for the active subtask.

Its inputs are the subtask's goal (and demand), the current view, the subtask's working memory,
the recent action trail with feedback, and the dead-reckoned pose annotation, plus the task's
exploration advice (appendix D: EviSeek gets the same advice as Single-model, spread over the
planning, seeking and answering stages; the seeker is the stage that acts on it). It never sees the
evidence board: retention and control are kept apart, as in the paper. With split retention
(``EviSeekConfig.retention="split"``, the paper's stage prompts) its reply also says whether to
keep the current view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eviseek.agents.eviseek.planner import Subtask
from eviseek.agents.eviseek.state import Episode, WorkingMemory
from eviseek.agents.replies import SeekReply
from eviseek.types import Stage
from eviseek.types.plans import SeekerDecision

DONE = "DONE"
BLOCKED = "BLOCKED"
_DONE_WORDS = {"DONE", "STOP", "FINISH", "FINISHED", "COMPLETE", "STOP_SUBTASK", "SUBTASK_DONE"}
_BLOCKED_WORDS = {"BLOCKED", "GIVE_UP", "SKIP", "IMPOSSIBLE", "UNREACHABLE"}


@dataclass
class SeekDecision:
    """What the seeker decided, or the fallback taken when its reply was unreadable."""

    intent: str
    args: dict[str, Any] = field(default_factory=dict)
    target: str = ""
    reasoning: str = ""
    fallback: bool = False
    keep: bool = False
    """Split retention: the seeker asked to keep the view it decided on."""
    keep_note: str = ""


def fallback_decision(ep: Episode) -> SeekDecision:
    """The safe default when the seeker's reply cannot be read: a short scan in place.

    Turning in place costs little budget, cannot collide with anything and usually brings
    something new into view. Without turns, the first offered intent runs with its defaults.
    """
    names = ep.library.names()
    if "SWEEP" in names:
        return SeekDecision(intent="SWEEP", args={"direction": "left", "turns": 2}, fallback=True)
    for atomic in ("turn_left", "move_forward"):
        if atomic in names:
            return SeekDecision(intent=atomic, fallback=True)
    viewpoint = [s.name for s in ep.library.offered() if s.kind != "manipulation"]
    if viewpoint:
        return SeekDecision(intent=viewpoint[0], fallback=True)
    return SeekDecision(intent=BLOCKED, reasoning="no camera intent is available", fallback=True)


def decision_record(ep: Episode, subtask: Subtask, decision: SeekDecision) -> SeekerDecision:
    """Log ``decision`` in the plan (``ep.plan.decisions``) and return its record, which the
    executing stage fills in (intent compiled, actions run, why it stopped)."""
    record = SeekerDecision(
        index=len(ep.plan.decisions) + 1,
        subtask=subtask.id,
        intent=decision.intent,
        args=decision.args,
        target=decision.target,
        reasoning=decision.reasoning,
        fallback=decision.fallback,
        executed=0,
        aborted=None,
        notes=[],
    )
    ep.plan.decisions.append(record)
    return record


def classify(intent: str) -> str:
    """``DONE``, ``BLOCKED`` or the intent name itself."""
    key = "_".join(intent.replace("-", " ").upper().split())
    if key in _DONE_WORDS:
        return DONE
    if key in _BLOCKED_WORDS:
        return BLOCKED
    return intent


async def seek(ep: Episode, subtask: Subtask, memory: WorkingMemory) -> SeekDecision:
    """Ask the seeker for the next intent of ``subtask``."""
    demand = ep.demand_of(subtask)
    fb = fallback_decision(ep)
    ask_keep = ep.cfg.retention == "split"
    parsed, _ = await ep.caller.ask_rendered(
        Stage.SEEK,
        SeekReply,
        fallback=f"run {fb.intent} {fb.args}".strip(),
        at_step=ep.steps_used,
        metadata={
            **ep.base_metadata(),
            "subtask": subtask.model_dump(),
            "demand": demand,
            "intents": ep.library.offered_dump(),
            "legal_actions": ep.legal_dump(),
            "remaining_steps": ep.remaining,
            "pose": ep.pose.pose.model_dump(),
            "frame_id": ep.frame_id,
            "working_memory": memory.recent(),
            "trail": ep.trail[-ep.cfg.trail_window :],
            "steps_used": ep.steps_used,
            "guidance": ep.question.guidance,
            **({"ask_keep": True} if ask_keep else {}),
        },
        context={
            "question": ep.question,
            "subtask": subtask,
            "n_subtasks": len(ep.plan.subtasks),
            "demand": demand,
            "memory": memory.recent(),
            "memory_scope": ep.cfg.memory_scope,
            "trail": ep.trail[-ep.cfg.trail_window :],
            "pose": ep.pose.describe(),
            "remaining": ep.remaining,
            "budget": ep.cfg.budget,
            "view": ep.view,
            "intents": ep.library.lines(),
            "ask_keep": ask_keep,
        },
    )
    reply = parsed.value
    if reply is None:
        return fb
    return SeekDecision(
        intent=classify(reply.intent.strip()),
        args=reply.args,
        target=reply.target,
        reasoning=reply.reasoning,
        keep=ask_keep and reply.keep,
        keep_note=reply.keep_note,
    )
