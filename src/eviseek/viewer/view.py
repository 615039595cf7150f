"""Build what an episode page shows from a saved :class:`Trajectory` (and its :class:`Question`).

The page template only formats; every decision about what a trajectory means (which frames the
board kept, which subtask a step served, whether the answer is right) is made here, in plain
Python that tests can check without a browser.

The view models live in :mod:`~eviseek.viewer.view_models`, the reading of agents' plans in
:mod:`~eviseek.viewer.plan`. Agents without a plan (Single-model, Passive, AutoTool) leave it
empty and the page omits those sections.
"""

from __future__ import annotations

import json
from typing import Any

from eviseek.types import (
    EpisodeResult,
    EvidenceItem,
    Feedback,
    ModelCall,
    Question,
    Trajectory,
    Usage,
)
from eviseek.types.trajectory import distinct_images
from eviseek.viewer.images import ImageSourcer
from eviseek.viewer.plan import build_subtask_views, read_plan
from eviseek.viewer.view_models import (
    MAX_OUTPUT_CHARS,
    MAX_PROMPT_CHARS,
    NO_SUBTASK_COLOR,
    SUBTASK_COLORS,
    AnswerImageView,
    BoardEventView,
    BoardItemView,
    CallView,
    CostView,
    DemandView,
    EpisodeView,
    EventView,
    FrameView,
    MessageView,
    OutcomeView,
    QuestionView,
    SubtaskView,
    subtask_color,
)

__all__ = [
    "NO_SUBTASK_COLOR",
    "SUBTASK_COLORS",
    "EpisodeView",
    "build_episode_view",
    "subtask_color",
]

# ---------------------------------------------------------------------------------------------


def build_episode_view(
    trajectory: Trajectory,
    images: ImageSourcer,
    question: Question | None = None,
    *,
    links: list[tuple[str, str]] | None = None,
) -> EpisodeView:
    """Assemble the :class:`EpisodeView` of ``trajectory``; images resolve through ``images``."""
    warnings: list[str] = []
    if question is not None and question.id != trajectory.question_id:
        raise ValueError(
            f"question {question.id!r} does not belong to this trajectory (question_id "
            f"{trajectory.question_id!r}); pass the matching Question or none"
        )

    demands, subtasks, plan_json = read_plan(trajectory.plan, warnings)
    demand_text = {d.id: d.text for d in demands}
    subtask_views = build_subtask_views(subtasks, demand_text)
    by_subtask = {s.id: s for s in subtask_views}

    all_items, history, removed = _replay_board(trajectory)
    answer_frames = set(trajectory.answer_frame_ids)
    kept_frames = {item.frame_id for item in all_items.values() if item.id not in removed}

    frames = _frame_views(trajectory, images, by_subtask, kept_frames, answer_frames, all_items)
    known_frames = {f.frame_id for f in frames}
    for fid in sorted(kept_frames - known_frames):
        warnings.append(f"board keeps frame {fid}, which no step recorded")

    board = [
        _board_item_view(item, images, by_subtask, demand_text, removed.get(item.id), answer_frames)
        for item in _board_order(all_items, removed)
    ]
    demand_views = [
        DemandView(
            id=d.id,
            text=d.text,
            subtask_ids=[s.id for s in subtask_views if s.demand == d.id],
            kept_item_ids=[b.id for b in board if b.demand == d.id and b.removed_at is None],
        )
        for d in demands
    ]

    answer_images = _answer_image_views(trajectory, images, kept_frames, warnings)
    result = trajectory.result
    mode = (result.mode if result is not None else None) or _str_or_none(trajectory.plan.mode)
    mode = mode or _str_or_none(trajectory.config.get("mode"))

    return EpisodeView(
        title=f"{trajectory.agent} · {trajectory.question_id}",
        episode_id=trajectory.episode_id,
        agent=trajectory.agent,
        model=(result.model if result is not None and result.model else trajectory.model),
        mode=mode,
        question=_question_view(trajectory, question, images),
        demands=demand_views,
        subtasks=subtask_views,
        frames=frames,
        board=board,
        board_history=history,
        answer_images=answer_images,
        outcome=_outcome_view(result, question, warnings),
        cost=_cost_view(trajectory),
        calls=[_call_view(i, c) for i, c in enumerate(trajectory.calls)],
        events=[
            EventView(
                kind=e.kind,
                stage=e.stage,
                at_step=e.at_step,
                message=e.message,
                data=json.dumps(e.data, sort_keys=True, default=str) if e.data else "",
            )
            for e in trajectory.events
        ],
        plan_json=plan_json,
        warnings=warnings,
        links=list(links or []),
    )


def _str_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _replay_board(
    trajectory: Trajectory,
) -> tuple[dict[int, EvidenceItem], list[BoardEventView], dict[int, int]]:
    """Apply the board events in order.

    Returns every item ever added (latest version, keyed by id), the history, and for items no
    longer on the board the step at which they were removed.
    """
    items: dict[int, EvidenceItem] = {}
    removed: dict[int, int] = {}
    history: list[BoardEventView] = []
    for event in trajectory.board:
        item = event.item
        if event.kind == "remove":
            removed[item.id] = event.at_step
            items.setdefault(item.id, item)
        else:  # "add" puts an item on the board; "bind" updates its links (demand, note)
            items[item.id] = item
            removed.pop(item.id, None)
        history.append(
            BoardEventView(
                kind=event.kind,
                at_step=event.at_step,
                item_id=item.id,
                frame_id=item.frame_id,
                note=item.note,
                demand=item.demand,
            )
        )
    return items, history, removed


def _board_order(items: dict[int, EvidenceItem], removed: dict[int, int]) -> list[EvidenceItem]:
    """Items still on the board first (by id), then removed ones."""
    return sorted(items.values(), key=lambda it: (it.id in removed, it.id))


def _frame_views(
    trajectory: Trajectory,
    images: ImageSourcer,
    by_subtask: dict[int, SubtaskView],
    kept_frames: set[int],
    answer_frames: set[int],
    items: dict[int, EvidenceItem],
) -> list[FrameView]:
    frames: list[FrameView] = []
    if trajectory.initial_image is not None:
        frames.append(
            FrameView(
                frame_id=0,
                label="start",
                image=images.ref(trajectory.initial_image),
                pose=trajectory.initial_pose.describe() if trajectory.initial_pose else None,
            )
        )
    for step in trajectory.steps:
        sub = by_subtask.get(step.subtask) if step.subtask is not None else None
        frames.append(
            FrameView(
                frame_id=step.frame_id,
                step=step.index,
                label=f"step {step.index}",
                image=images.ref(step.image),
                action=step.action.text(),
                intent=step.intent,
                subtask=step.subtask,
                subtask_label=(f"S{step.subtask}" if step.subtask is not None else None),
                color=sub.color if sub is not None else NO_SUBTASK_COLOR,
                feedback=_feedback_text(step.feedback),
                success=step.feedback.success,
                pose=step.pose.describe() if step.pose else None,
                decision=step.decision,
                action_frames=[images.ref(f) for f in step.action_frames],
                action_frame_ids=list(step.action_frame_ids),
            )
        )
    return _mark_frames(frames, kept_frames, answer_frames, items)


def _mark_frames(
    frames: list[FrameView],
    kept_frames: set[int],
    answer_frames: set[int],
    items: dict[int, EvidenceItem],
) -> list[FrameView]:
    # Several steps can leave the same frame id (a failed action that did not move the camera
    # re-reports the same view); the board refers to the last one, so mark the last occurrence.
    last_index = {f.frame_id: i for i, f in enumerate(frames)}
    for i, frame in enumerate(frames):
        if last_index[frame.frame_id] != i:
            continue
        frame.in_answer = frame.frame_id in answer_frames
        frame.board_item_ids = sorted(it.id for it in items.values() if it.frame_id == frame.frame_id)
        frame.kept = frame.frame_id in kept_frames
    return frames


def _feedback_text(feedback: Feedback) -> str:
    return feedback.summary(limit=400)


def _board_item_view(
    item: EvidenceItem,
    images: ImageSourcer,
    by_subtask: dict[int, SubtaskView],
    demand_text: dict[int, str],
    removed_at: int | None,
    answer_frames: set[int],
) -> BoardItemView:
    sub = by_subtask.get(item.subtask) if item.subtask is not None else None
    return BoardItemView(
        id=item.id,
        frame_id=item.frame_id,
        step_index=item.step_index,
        image=images.ref(item.image) if item.image is not None else None,
        intent=item.intent,
        subtask=item.subtask,
        subtask_label=f"S{item.subtask}" if item.subtask is not None else None,
        color=sub.color if sub is not None else NO_SUBTASK_COLOR,
        demand=item.demand,
        demand_text=demand_text.get(item.demand) if item.demand is not None else None,
        note=item.note,
        outcome=_feedback_text(item.outcome) if item.outcome is not None else None,
        outcome_success=item.outcome.success if item.outcome is not None else None,
        removed_at=removed_at,
        in_answer=item.frame_id in answer_frames,
    )


def _answer_image_views(
    trajectory: Trajectory, images: ImageSourcer, kept_frames: set[int], warnings: list[str]
) -> list[AnswerImageView]:
    ids: list[int | None] = list(trajectory.answer_frame_ids)
    if trajectory.answer_images and len(ids) != len(trajectory.answer_images):
        warnings.append(
            f"{len(trajectory.answer_images)} answer images but {len(ids)} answer frame ids; "
            "unmatched images are shown without a frame id"
        )
        ids = (ids + [None] * len(trajectory.answer_images))[: len(trajectory.answer_images)]
    # Frames the guarded answer context added to an empty board (EviSeek's guarded_answer).
    unretained = {
        int(f)
        for e in trajectory.events
        if e.kind == "guarded_context"
        for f in e.data.get("frame_ids", [])
        if isinstance(f, int)
    }
    out = []
    for pos, (img, fid) in enumerate(zip(trajectory.answer_images, ids, strict=True)):
        if fid is None:
            label = "frame unknown"
        elif fid < 0:
            label = "task reference image"
        elif fid in unretained:
            label = f"frame {fid}, unretained context (the board was empty)"
        else:
            label = f"frame {fid}"
        out.append(
            AnswerImageView(
                position=pos + 1,
                frame_id=fid,
                label=label,
                image=images.ref(img),
                kept=fid is not None and fid in kept_frames,
            )
        )
    return out


def _question_view(trajectory: Trajectory, question: Question | None, images: ImageSourcer) -> QuestionView:
    if question is None:
        return QuestionView(id=trajectory.question_id)
    c = question.contract
    text = (question.metadata.get("esibench") or {}).get("task_text") or {}
    return QuestionView(
        id=question.id,
        text=question.text,
        family=question.family,
        subcategory=question.subcategory,
        contract_kind=c.kind,
        contract_text=c.describe(),
        options=list(c.options or []),
        format_hint=c.format_hint,
        guidance=question.guidance,
        task_actions=[str(a.get("phrase", "")) for a in text.get("actions") or []],
        forced_choice_prompt=str(text.get("forced_choice_prompt") or ""),
        task_text_source=str((text.get("hooks") or {}).get("system_prompt") or ""),
        reference_images=[images.ref(img) for img in question.reference_images],
    )


def _truth_text(truth: str | list[str] | None) -> str | None:
    if truth is None:
        return None
    if isinstance(truth, list):
        return " | ".join(str(t) for t in truth)
    return str(truth)


_SUPPORT_LABELS = {1.0: "full", 0.5: "partial", 0.0: "none"}


def _outcome_view(
    result: EpisodeResult | None, question: Question | None, warnings: list[str]
) -> OutcomeView:
    truth = result.ground_truth if result is not None and result.ground_truth is not None else None
    if truth is None and question is not None:
        truth = question.ground_truth
    if result is None:
        return OutcomeView(recorded=False, truth=_truth_text(truth))
    correct, score, scored_here = result.correct, result.score, False
    if correct is None and question is not None and question.ground_truth is not None:
        # The run was not scored yet (e.g. a trajectory saved by an agent alone): score it the
        # way the harness does, and say so on the page.
        from eviseek.answers import score_answer
        from eviseek.answers.esibench import saved_rule_set

        verdict = score_answer(
            question,
            result.raw_answer if result.raw_answer is not None else result.answer,
            rules=saved_rule_set(question.metadata),
        )
        correct, score, scored_here = verdict.correct, verdict.score, True
    support = result.support
    label = "not graded"
    if support is not None:
        label = _SUPPORT_LABELS.get(float(support), f"{support:g}")
    return OutcomeView(
        recorded=True,
        answer=result.answer,
        raw_answer=result.raw_answer,
        truth=_truth_text(truth),
        correct=correct,
        score=score,
        scored_here=scored_here,
        support=support,
        support_label=label,
        error=result.error,
    )


def _cost_view(trajectory: Trajectory) -> CostView:
    usage = sum((c.usage for c in trajectory.calls), Usage())
    result = trajectory.result
    if result is not None:
        return CostView(
            steps=result.steps,
            calls=result.calls,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            reasoning_tokens=result.reasoning_tokens,
            total_tokens=result.total_tokens,
            images_sent=usage.images_sent,
            images_in_answer=result.images_in_answer or distinct_images(trajectory.answer_images),
            wall_time_s=result.wall_time_s,
            from_result=True,
        )
    return CostView(
        steps=len(trajectory.steps),
        calls=len(trajectory.calls),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        total_tokens=usage.total_tokens,
        images_sent=usage.images_sent,
        images_in_answer=distinct_images(trajectory.answer_images),
        wall_time_s=None,
        from_result=False,
    )


def _cut(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def _call_view(index: int, call: ModelCall) -> CallView:
    output, cut = _cut(call.output, MAX_OUTPUT_CHARS)
    prompt = []
    for msg in call.messages:
        if isinstance(msg.content, str):
            text, n_images = msg.content, 0
        else:
            pieces: list[tuple[bool, str]] = []  # (is an image marker, text)
            n_images = 0
            for part in msg.content:
                if part.type == "image":
                    n_images += 1
                    pieces.append((True, f"[image {n_images}]"))
                else:
                    pieces.append((False, part.text))
            # Each image marker on a line of its own, so "[image 1]" never runs into the text.
            text = ""
            previous_image = False
            for is_image, piece in pieces:
                apart = text.endswith("\n") or piece.startswith("\n")
                if text and (is_image or previous_image) and not apart:
                    text += "\n"
                text += piece
                previous_image = is_image
        text, mcut = _cut(text, MAX_PROMPT_CHARS)
        prompt.append(MessageView(role=msg.role, text=text, images=n_images, truncated=mcut))
    return CallView(
        index=index + 1,
        stage=call.stage or call.config.stage or "unknown",
        model=call.model,
        images_sent=call.usage.images_sent,
        input_tokens=call.usage.input_tokens,
        output_tokens=call.usage.output_tokens,
        latency_s=call.latency_s,
        output=output,
        output_truncated=cut,
        error=call.error,
        notes=list(call.notes),
        prompt=prompt,
    )
