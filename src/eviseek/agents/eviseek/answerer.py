"""The answering stage and its three answer-time memories.

``board`` (EviSeek): the question and contract, the demands without coverage labels, the board's
items with their notes and feedback summaries, and task reference images; at most
``capacity`` board frames. ``recent`` (the no-board ablation): Single-model memory, i.e. the
whole text history with the current view and up to ``window`` earlier views. ``uniform`` (the
no-selective-retention ablation): frames sampled evenly over the trajectory at the same
capacity. Everything is read from the :class:`~eviseek.types.Trajectory`, so the same code
answers online and in board replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eviseek.agents.common import StageCaller, contract_metadata, resolve_answer
from eviseek.agents.eviseek.board import EvidenceBoard
from eviseek.agents.eviseek.config import Memory
from eviseek.agents.replies import AnswerReply
from eviseek.types import EvidenceItem, Feedback, Image, Question, Stage, Trajectory
from eviseek.types.plans import EviSeekPlan

_REASONING_KEYS = ("reasoning", "rationale", "thought", "thoughts", "explanation")


def feedback_note(feedback: Feedback | None, limit: int = 220) -> str:
    """A feedback summary for prompts: model reasoning removed, cut to ``limit`` characters."""
    if feedback is None:
        return ""
    if any(k in feedback.state for k in _REASONING_KEYS):
        feedback = feedback.model_copy(
            update={"state": {k: v for k, v in feedback.state.items() if k not in _REASONING_KEYS}}
        )
    return feedback.summary(limit)


def informative(feedback: Feedback | None) -> bool:
    """Whether a feedback says more than "the camera moved" (a failure, a reason or task state)."""
    return feedback is not None and (not feedback.success or bool(feedback.reason) or bool(feedback.state))


@dataclass
class AnswerContext:
    """What the answering call will show, and the provenance of each image."""

    items: list[dict[str, Any]] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    items_title: str = "Retained evidence"
    images: list[Image] = field(default_factory=list)
    frame_ids: list[int] = field(default_factory=list)


def evidence_label(k: int, item: EvidenceItem, feedback_chars: int, *, show_demand: bool) -> str:
    """How a call that reads the board names its ``k``-th item: where it came from (view,
    subtask, the demand if ``show_demand``, intent), then its note and an informative outcome."""
    where = [f"view {item.frame_id}"]
    if item.subtask is not None:
        where.append(f"subtask {item.subtask}")
    if show_demand and item.demand is not None:
        where.append(f"demand {item.demand}")
    if item.intent:
        where.append(f"via {item.intent}")
    label = f"Evidence {k} ({', '.join(where)})"
    if item.note:
        label += f": {item.note}"
    if informative(item.outcome):
        label += f" Outcome: {feedback_note(item.outcome, feedback_chars)}"
    return label


def eviseek_plan(traj: Trajectory) -> EviSeekPlan:
    """The trajectory's EviSeek plan; an empty one for a trajectory another agent wrote (so a
    replay of it answers from its steps, without demands or decisions)."""
    return traj.plan if isinstance(traj.plan, EviSeekPlan) else EviSeekPlan()


def _initial_frame(traj: Trajectory) -> int:
    return eviseek_plan(traj).initial_frame_id


FULL_RESULT_CHARS = 100_000
"""Long enough that no recorded action result is cut (Single-model's history keeps them whole)."""


def history_lines(traj: Trajectory, limit: int = 220) -> list[str]:
    """The full text history of an episode: each decision, then the steps it executed."""
    decisions = {d.index: d for d in eviseek_plan(traj).decisions}
    lines: list[str] = []
    shown: set[int] = set()
    for step in traj.steps:
        d = step.decision
        if d is not None and d not in shown and d in decisions:
            shown.add(d)
            dec = decisions[d]
            why = f" ({dec.reasoning})" if dec.reasoning else ""
            lines.append(f"Decision {d} for subtask {dec.subtask}: {dec.intent}{why}")
        lines.append(f"Step {step.index}: {step.action.text()} [{feedback_note(step.feedback, limit)}]")
    return lines


def build_context(
    traj: Trajectory,
    memory: Memory,
    *,
    capacity: int,
    window: int,
    feedback_chars: int,
    show_demands: bool,
    board: EvidenceBoard | None = None,
) -> AnswerContext:
    """The answer context of ``memory`` built from ``traj`` (the live board if given)."""
    ctx = AnswerContext()
    if memory == "board":
        board = board if board is not None else EvidenceBoard.from_trajectory(traj)
        for k, it in enumerate(board.select(capacity), 1):
            label = evidence_label(k, it, feedback_chars, show_demand=show_demands)
            ctx.items.append({"label": label, "image": it.image})
            if it.image is not None:
                ctx.images.append(it.image)
                ctx.frame_ids.append(it.frame_id)
        return ctx
    views: list[tuple[str, Image, int]] = []
    if traj.initial_image is not None:
        views.append(("the initial view", traj.initial_image, _initial_frame(traj)))
    for step in traj.steps:
        if step.image is not None:
            caption = f"after step {step.index} ({step.action.text()}"
            note = feedback_note(step.feedback, feedback_chars) if informative(step.feedback) else ""
            caption += f"; {note})" if note else ")"
            views.append((caption, step.image, step.frame_id))
    if memory == "recent":
        # Single-model's memory (the paper's no-board ablation): its full text history, so each
        # result is whole; the 220-character cut is EviSeek's own presentation (app. E).
        ctx.history = history_lines(traj, FULL_RESULT_CHARS)
        chosen = views[-(window + 1) :] if views else []
        ctx.items_title = "Most recent views (the last one is the current view)"
    else:  # uniform
        k = min(capacity, len(views))
        if k <= 1:
            idx = [len(views) - 1] if views else []
        else:
            idx = sorted({round(i * (len(views) - 1) / (k - 1)) for i in range(k)})
        chosen = [views[i] for i in idx]
        ctx.items_title = "Views sampled evenly over the episode"
    for caption, img, fid in chosen:
        ctx.items.append({"label": f"View {fid}, {caption}:", "image": img})
        ctx.images.append(img)
        ctx.frame_ids.append(fid)
    return ctx


def unretained_views(traj: Trajectory) -> list[tuple[str, Image, int]]:
    """The most recent view and the first view of an episode (one entry when they coincide)."""
    first = (
        [("the first view of the episode", traj.initial_image, _initial_frame(traj))]
        if traj.initial_image is not None
        else []
    )
    last = [
        (f"the most recent view, after step {s.index}", s.image, s.frame_id)
        for s in reversed(traj.steps)
        if s.image is not None
    ][:1]
    views = [*last, *first]
    if len(views) == 2 and views[0][2] == views[1][2]:
        views = views[:1]
    return views


def add_unretained_context(
    ctx: AnswerContext, traj: Trajectory, *, feedback_chars: int, at_step: int
) -> list[int]:
    """Guarded answer context (ours): give an empty board the latest and the first view.

    The paper lets subtasks close with nothing retained, and its answerer then sees no scene
    image; on our tabletop those blind answers are right far less often than the rest. The
    views are labelled as unretained so the answerer knows no stage chose them as evidence.
    The event ``guarded_context`` records which frames were added. Returns their frame ids.
    """
    views = unretained_views(traj)
    if not views:
        return []
    ctx.items_title = "No evidence was retained; views shown as unretained context instead"
    for caption, img, fid in views:
        ctx.items.append(
            {"label": f"Unretained context (view {fid}, {caption}; not chosen as evidence):", "image": img}
        )
        ctx.images.append(img)
        ctx.frame_ids.append(fid)
    traj.log(
        "guarded_context",
        f"empty board: the answer call sees {len(views)} unretained view(s) (frames "
        + ", ".join(str(v[2]) for v in views)
        + ")",
        stage=Stage.ANSWER,
        at_step=at_step,
        data={"frame_ids": [v[2] for v in views]},
    )
    return [v[2] for v in views]


async def answer_episode(
    caller: StageCaller,
    question: Question,
    traj: Trajectory,
    memory: Memory,
    *,
    capacity: int,
    window: int,
    feedback_chars: int,
    show_demands: bool,
    references: list[Image],
    forced_choice: bool,
    board: EvidenceBoard | None = None,
    at_step: int = 0,
    guarded: bool = False,
) -> tuple[str | None, str | None]:
    """Ask the answering call from ``memory``; fill ``answer_images``/``answer_frame_ids``.

    Returns ``(answer, raw_answer)`` after normalisation (and a forced choice if needed).
    ``guarded`` (ours; on by default in EviSeekConfig.guarded_answer, off in ``eviseek:paper``):
    an empty board gets the guarded context of
    :func:`add_unretained_context` instead of no scene image at all.
    """
    ctx = build_context(
        traj,
        memory,
        capacity=capacity,
        window=window,
        feedback_chars=feedback_chars,
        show_demands=show_demands,
        board=board,
    )
    if memory == "board" and not ctx.images:
        traj.log(
            "empty_board",
            "no evidence was retained; the answer call sees no scene image",
            stage=Stage.ANSWER,
            at_step=at_step,
        )
        if guarded:
            add_unretained_context(ctx, traj, feedback_chars=feedback_chars, at_step=at_step)
    demands = [d.model_dump() for d in eviseek_plan(traj).demands] if show_demands else []
    return await _ask_answer(
        caller,
        question,
        traj,
        ctx,
        memory=memory,
        demands=demands,
        references=references,
        recent=[it["label"] for it in ctx.items],
        forced_choice=forced_choice,
        at_step=at_step,
    )


async def answer_from_motion(
    caller: StageCaller,
    question: Question,
    traj: Trajectory,
    motion: list[tuple[Image, int]],
    *,
    references: list[Image],
    forced_choice: bool,
    at_step: int = 0,
) -> tuple[str | None, str | None]:
    """The answer call an action that set things moving invokes (paper app. E: Inclined Plane's
    put answers from the physics-frame sequence instead of the general answer interface).

    ``motion`` holds the frames in time order, the last the frame after the action. Fills
    ``answer_images``/``answer_frame_ids`` with what the call saw.
    """
    last = next((s for s in reversed(traj.steps) if s.action_frames), None)
    what = f"after {last.action.text()} " if last is not None else ""
    items = [
        {"label": f"Frame {k} of {len(motion)} {what}(physics simulation, oldest first)", "image": img}
        for k, (img, _) in enumerate(motion, 1)
    ]
    history = [f"Step {s.index}: {s.action.text()} [{feedback_note(s.feedback)}]" for s in traj.steps]
    ctx = AnswerContext(
        items=items,
        history=history,
        items_title="Frames of the physics simulation after the last action",
        images=[img for img, _ in motion],
        frame_ids=[fid for _, fid in motion],
    )
    return await _ask_answer(
        caller,
        question,
        traj,
        ctx,
        memory="motion",
        demands=[],
        references=references,
        recent=history,
        forced_choice=forced_choice,
        at_step=at_step,
        extra_metadata={"motion_frames": len(motion)},
    )


async def _ask_answer(
    caller: StageCaller,
    question: Question,
    traj: Trajectory,
    ctx: AnswerContext,
    *,
    memory: str,
    demands: list[dict[str, Any]],
    references: list[Image],
    recent: list[str],
    forced_choice: bool,
    at_step: int,
    extra_metadata: dict[str, Any] | None = None,
) -> tuple[str | None, str | None]:
    """The answer call itself, whichever memory built ``ctx``: references go before its images,
    the trajectory records what the call saw, and the reply is normalised (with a forced choice
    if enabled) against the last eight lines of ``recent``.

    ``extra_metadata`` lands between ``frame_ids`` and ``demands`` so that the request metadata
    keeps the key order saved runs already have.
    """
    images = [*references, *ctx.images]
    frame_ids = [*([-1] * len(references)), *ctx.frame_ids]
    parsed, completion = await caller.ask_rendered(
        Stage.ANSWER,
        AnswerReply,
        fallback="read the answer from the reply text",
        at_step=at_step,
        metadata={
            **contract_metadata(question),
            "memory": memory,
            "frame_ids": frame_ids,
            **(extra_metadata or {}),
            "demands": demands,
        },
        context={
            "question": question,
            "contract": question.contract.describe(),
            "demands": [{"id": d["id"], "text": d["text"]} for d in demands],
            "references": references,
            "history": ctx.history,
            "items": ctx.items,
            "items_title": ctx.items_title,
        },
    )
    raw = parsed.value.answer if parsed.value is not None else completion.text
    traj.answer_images = images
    traj.answer_frame_ids = frame_ids
    return await resolve_answer(
        caller,
        question,
        raw,
        images=images,
        context="\n".join(recent[-8:]),
        at_step=at_step,
        enabled=forced_choice,
    )
