"""The keeper: decides what an intent produced is worth retaining, and checks tracked targets.

After every executed intent the keeper sees the view before it, the new views it produced (up to
``keep_candidates``, evenly spaced, the last always) and the reported outcome, and keeps zero or
more of them on the evidence board with a note. During APPROACH and ORBIT a shorter check of the
same stage asks whether the target is still in view; this is what decides that a target is lost,
never the simulator.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from eviseek.agents.eviseek.answerer import feedback_note, informative
from eviseek.agents.eviseek.intents import CompiledIntent
from eviseek.agents.eviseek.planner import Subtask
from eviseek.agents.eviseek.state import Episode, WorkingMemory
from eviseek.agents.replies import KeepReply, TrackReply
from eviseek.types import EvidenceItem, Image, Stage, StepRecord

R = TypeVar("R", bound=BaseModel)


def candidate_steps(steps: list[StepRecord], limit: int) -> list[StepRecord]:
    """At most ``limit`` of an intent's steps, evenly spaced and always including the last."""
    with_images = [s for s in steps if s.image is not None]
    if len(with_images) <= limit:
        return with_images
    if limit == 1:
        return [with_images[-1]]
    n = len(with_images)
    idx = sorted({round(i * (n - 1) / (limit - 1)) for i in range(limit)})
    return [with_images[i] for i in idx]


async def ask_review(
    ep: Episode,
    subtask: Subtask,
    compiled: CompiledIntent,
    steps: list[StepRecord],
    candidates: list[StepRecord],
    memory: WorkingMemory | None,
    *,
    stage: Stage,
    reply: type[R],
    fallback: str,
    purpose: str | None = None,
    before: Image | None = None,
    before_frame: int | None = None,
    includes_last: bool = False,
) -> R | None:
    """Ask a call that reviews an intent's views; its parsed reply, or ``None`` if unreadable.

    The keeper and the curator ask the same question about the same material (the intent, its
    subtask and demand, the outcomes, the working memory and the candidate views); the keeper
    adds the view before the intent. Each caller keeps its own stage, reply schema and answer
    to an unreadable reply. Metadata keys keep one order, so saved records compare.
    """
    outcomes = [feedback_note(s.feedback, ep.cfg.feedback_chars) for s in steps if informative(s.feedback)]
    demand = ep.demand_of(subtask)
    intent_text = compiled.name if not compiled.target else f"{compiled.name} (target: {compiled.target})"
    tried = memory.recent() if memory is not None else []
    metadata: dict[str, Any] = {**ep.base_metadata()}
    if purpose is not None:
        metadata["purpose"] = purpose
    metadata.update(intent=compiled.name, target=compiled.target, subtask=subtask.model_dump(), demand=demand)
    if before_frame is not None:
        metadata["before_frame_id"] = before_frame
    metadata.update(
        candidate_frame_ids=[s.frame_id for s in candidates],
        outcomes=[s.feedback.model_dump() for s in steps],
        working_memory=tried,
        navigation=ep.library.nav_only,
    )
    context: dict[str, Any] = {
        "question": ep.question,
        "subtask": subtask,
        "demand": demand,
        "intent": intent_text,
        "outcome": "; ".join(outcomes),
        "memory": tried,
        "candidates": [{"step": s.index, "image": s.image} for s in candidates],
        "includes_last": includes_last,
    }
    if before is not None:
        context["before"] = before
    parsed, _ = await ep.caller.ask_rendered(
        stage, reply, fallback=fallback, at_step=ep.steps_used, metadata=metadata, context=context
    )
    return parsed.value


def keep_step(
    ep: Episode, step: StepRecord, compiled: CompiledIntent, subtask: Subtask, note: str
) -> EvidenceItem:
    """Put one of an intent's views on the board with its provenance."""
    return ep.board.add(
        frame_id=step.frame_id,
        step_index=step.index,
        image=step.image,
        outcome=step.feedback,
        intent=compiled.name,
        subtask=subtask.id,
        demand=None if ep.cfg.no_demands else subtask.demand,
        note=note,
    )


async def review(
    ep: Episode,
    subtask: Subtask,
    compiled: CompiledIntent,
    before: Image,
    before_frame: int,
    steps: list[StepRecord],
    memory: WorkingMemory | None = None,
    refused: list[str] | None = None,
) -> list[EvidenceItem]:
    """Ask the keeper about an intent's new views; add the kept ones to the board.

    When the keeper keeps nothing, its note (what the views showed, if it said) is appended to
    ``refused``: the working memory records it, so what an intent saw is not forgotten just
    because none of it was evidence.

    The keeper is conditioned on the subtask's working memory as well (the paper's
    ``pi_keep(. | g, o_t, xi_t, o_t+1, r_t+1, W_t)``, section 4.3): what was already tried and
    kept for this subtask tells it whether a new view adds anything.
    """
    candidates = candidate_steps(steps, ep.cfg.keep_candidates)
    if not candidates:
        return []
    reply = await ask_review(
        ep,
        subtask,
        compiled,
        steps,
        candidates,
        memory,
        stage=Stage.KEEP,
        reply=KeepReply,
        fallback="keep the last new view",
        purpose="keep",
        before=before,
        before_frame=before_frame,
    )
    if reply is None:
        chosen, note = [candidates[-1]], "kept by default: the keeper's reply could not be read"
    elif not reply.keep:
        if refused is not None and reply.note.strip():
            refused.append(reply.note.strip())
        return []
    else:
        picks = [i for i in reply.frames if 1 <= i <= len(candidates)]
        if len(picks) != len(reply.frames):
            ep.traj.log(
                "keep_repaired",
                f"keeper named views {reply.frames} but only 1..{len(candidates)} exist; kept the valid ones"
                + ("" if picks else " (or the last)"),
                stage=Stage.KEEP,
                at_step=ep.steps_used,
            )
        chosen = [candidates[i - 1] for i in sorted(set(picks))] or [candidates[-1]]
        note = reply.note
    return [keep_step(ep, s, compiled, subtask, note) for s in chosen]


async def target_visible(ep: Episode, target: str) -> bool:
    """Whether the model still sees ``target`` in the current view (unreadable reply: assume yes).

    Assuming "visible" on an unreadable reply lets the intent finish, which is what it would do
    without tracking; the failure is logged.
    """
    parsed, _ = await ep.caller.ask_rendered(
        Stage.KEEP,
        TrackReply,
        template="track",
        fallback="assume the target is still visible",
        at_step=ep.steps_used,
        metadata={**ep.base_metadata(), "purpose": "track", "target": target, "frame_id": ep.frame_id},
        context={"target": target, "view": ep.view},
    )
    return True if parsed.value is None else parsed.value.visible
