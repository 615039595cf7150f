"""Rule-based answer checking for AutoTool questions, shared by evaluation and training rewards.

Choice, yes/no, counting and free-text answers go through :mod:`eviseek.answers`; grounding
answers (a box) are compared by intersection over union (correct at IoU >= 0.5, the
RefCOCO convention). Nothing here raises on model text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eviseek.answers import AnswerScore, score_answer
from eviseek.autotool.reasoning import REASONING_BENCHMARKS, score_reasoning
from eviseek.types import AnswerContract, AnswerKind, Question
from eviseek.types.plans import AgentPlan, AutoToolPlan

SCORER = "autotool"
"""``Question.metadata["scorer"]`` of questions scored by :func:`score_episode_answer` (the
evaluation harness dispatches on it)."""

IOU_THRESHOLD = 0.5
MAX_ANSWER_CHARS = 1000
"""Longer answers score 0: a rollout that pours text into <answer> is not answering."""

_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_KINDS: tuple[str, ...] = ("option", "yes_no", "integer", "sequence", "text", "bbox")


def infer_kind(ground_truth: Any, options: list[str] | None = None) -> AnswerKind:
    """Guess the answer kind of a row that does not state it."""
    if options:
        return "option"
    if (
        isinstance(ground_truth, (list, tuple))
        and len(ground_truth) == 4
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in ground_truth)
    ):
        return "bbox"
    text = str(ground_truth).strip().lower()
    if text in ("yes", "no"):
        return "yes_no"
    if re.fullmatch(r"-?\d+", text):
        return "integer"
    return "text"


def option_truth(ground_truth: Any, options: list[str] | None) -> Any:
    """Map a letter ground truth (``"B"``, ``"(B)"``) to the option text when options are known."""
    if not options or not isinstance(ground_truth, str):
        return ground_truth
    m = re.fullmatch(r"\s*\(?([A-Za-z])\)?\.?\s*", ground_truth)
    if m:
        idx = ord(m.group(1).upper()) - 65
        if 0 <= idx < len(options):
            return options[idx]
    return ground_truth


def parse_box(text: Any) -> list[float] | None:
    """A box ``[x1, y1, x2, y2]`` from an answer: JSON with ``bbox_2d``/``bbox``, or four numbers."""
    if isinstance(text, (list, tuple)):
        vals = list(text)
    elif isinstance(text, dict):
        vals = text.get("bbox_2d") or text.get("bbox") or []
    else:
        s = str(text)
        vals = []
        try:
            data = json.loads(s)
            if isinstance(data, list) and data and isinstance(data[0], dict):
                data = data[0]
            if isinstance(data, dict):
                vals = data.get("bbox_2d") or data.get("bbox") or []
            elif isinstance(data, list):
                vals = data
        except (ValueError, RecursionError):
            vals = [float(x) for x in _NUM.findall(s)[:4]]
    if not isinstance(vals, list) or len(vals) != 4:
        return None
    try:
        box = [float(v) for v in vals]
    except (TypeError, ValueError, OverflowError):
        return None
    if box[2] <= box[0] or box[3] <= box[1]:
        return None
    return box


def iou(a: list[float], b: list[float]) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def check_answer(
    answer: str | None,
    ground_truth: Any,
    kind: str | None = None,
    options: list[str] | None = None,
) -> tuple[bool, str | None]:
    """Whether ``answer`` matches ``ground_truth``; returns ``(correct, canonical answer)``.

    ``kind`` is an :data:`~eviseek.types.AnswerKind` (inferred when ``None``). Grounding
    ground truths are ``[x1, y1, x2, y2]`` boxes in the same frame as the answer.
    """
    if answer is None or ground_truth is None:
        return False, None
    if len(answer) > MAX_ANSWER_CHARS:
        return False, None
    k = kind if kind in _KINDS else infer_kind(ground_truth, options)
    if k == "bbox":
        truth = parse_box(ground_truth)
        pred = parse_box(answer)
        if truth is None or pred is None:
            return False, None
        canon = json.dumps([round(v, 1) for v in pred])
        return iou(pred, truth) >= IOU_THRESHOLD, canon
    truths = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    truths = [str(option_truth(t, options)) for t in truths]
    q = Question(
        id="_",
        text="",
        contract=AnswerContract(kind=k, options=options or None),  # type: ignore[arg-type]
        ground_truth=truths if len(truths) > 1 else truths[0],
    )
    verdict = score_answer(q, answer)
    return verdict.correct, verdict.answer


def uses_official_prompt(question: Question) -> bool:
    """Whether a reasoning-benchmark question is asked and scored the benchmark's own way
    (``metadata["prompt_style"]``: ``official``, the default, or ``autotool``)."""
    return (
        question.metadata.get("benchmark") in REASONING_BENCHMARKS
        and question.metadata.get("prompt_style", "official") == "official"
    )


def answer_text(plan: AgentPlan, raw: str | None) -> str | None:
    """The ``<answer>`` text of an AutoTool episode: the agent's record of it in the trajectory's
    plan, else (trajectories saved before that record existed) read from the last reply."""
    if isinstance(plan, AutoToolPlan) and plan.answer_recorded:
        return plan.answer_text
    if raw is None:
        return None
    from eviseek.autotool.parser import parse_turn

    return parse_turn(raw, first=False).answer


def score_episode_answer(question: Question, text: str | None, plan: AgentPlan) -> AnswerScore:
    """The verdict on one AutoTool episode's ``<answer>`` text.

    Grounding questions (RefCOCO and ReasonSeg): the box is written in the shown frame
    (``plan.shown_size``) and mapped to the original pixels (``plan.original_size``) before the
    IoU with the ground-truth box; ``score`` is the IoU and ``answer`` the mapped box. POPE
    answers are read by POPE's official rule (:mod:`eviseek.autotool.pope`). Reasoning
    benchmarks use their own
    scorer (:mod:`eviseek.autotool.official`) on the final reply, or, when asked with the
    dual-mode prompt, the ``<answer>`` extraction of :mod:`eviseek.autotool.reasoning`;
    everything else :func:`check_answer`.
    """
    if question.contract.kind == "bbox":
        box = parse_box(text) if text is not None and len(text) <= MAX_ANSWER_CHARS else None
        truth = parse_box(question.ground_truth)
        sizes = plan if isinstance(plan, AutoToolPlan) else AutoToolPlan()
        shown, orig = sizes.shown_size, sizes.original_size
        if box is None or truth is None or not shown or not orig:
            return AnswerScore(answer=text, correct=False, score=0.0)
        sx, sy = orig[0] / shown[0], orig[1] / shown[1]
        box = [box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy]
        # RefCOCO and ReasonSeg alike (the paper, section 4.1): box IoU against the target's box.
        value = iou(box, truth)
        return AnswerScore(
            answer=json.dumps([round(v, 1) for v in box]), correct=value >= IOU_THRESHOLD, score=value
        )
    if question.family == "pope":
        from eviseek.autotool.pope import pope_answer

        # POPE's official reading (first sentence, a "no"/"not" word means no), not the generic
        # yes/no parser: "There is not a dog." is a no.
        read = pope_answer(text)
        ok = read is not None and read == str(question.ground_truth).strip().lower()
        return AnswerScore(answer=read if read is not None else text, correct=ok, score=1.0 if ok else 0.0)
    if question.metadata.get("benchmark") in REASONING_BENCHMARKS:
        if uses_official_prompt(question):
            from eviseek.autotool.official import official_score

            ok, canon = official_score(text or "", question)
        else:
            ok, canon = score_reasoning(text or "", question)
    else:
        contract = question.contract
        ok, canon = check_answer(text, question.ground_truth, contract.kind, contract.options)
    return AnswerScore(answer=canon if canon is not None else text, correct=ok, score=1.0 if ok else 0.0)
