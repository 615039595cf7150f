"""Score an answer against a question's ground truth according to its answer contract."""

from __future__ import annotations

from pydantic import BaseModel

from eviseek.answers.esibench import ESIRule, esibench_score, rule_set_of
from eviseek.answers.normalize import normalize_answer
from eviseek.types import AnswerContract, Question


class AnswerScore(BaseModel):
    """The verdict on one answer."""

    answer: str | None
    """The canonical answer (``None`` when nothing readable was given)."""
    correct: bool
    score: float
    """In [0, 1]; equals ``correct`` except for counting, which also earns partial credit."""


def soft_count_score(predicted: int, truth: int) -> float:
    """Partial credit for counts: ``max(0, 1 - |error| / 3)``, as ESI-Bench reports it."""
    return max(0.0, 1.0 - abs(predicted - truth) / 3.0)


def accepted_answers(question: Question) -> list[str]:
    """Canonical forms of every accepted ground-truth answer."""
    truths = question.ground_truth
    if truths is None:
        return []
    items = truths if isinstance(truths, list) else [truths]
    out = []
    for t in items:
        canon = normalize_answer(str(t), question.contract)
        if canon is not None:
            out.append(canon)
    return out


def score_answer(question: Question, raw: str | None, *, rules: str | None = None) -> AnswerScore:
    """Normalise ``raw`` under the question's contract and compare it with the ground truth.

    A missing or unreadable answer scores 0. Several accepted answers (a list ground truth,
    e.g. equivalent stacking orders) all count as correct. ``rules`` naming one of ESI-Bench's
    rule sets (``esibench:paper``, ``esibench:official``) scores by ESI-Bench's reading and
    verdict instead; the caller chooses it (the ESI-Bench benchmark's scorer, from the rule set
    the question was loaded with).
    """
    chosen = rule_set_of(rules)
    if chosen is not None:
        return _score_by_esibench_rules(question, raw, chosen)
    contract: AnswerContract = question.contract
    answer = normalize_answer(raw, contract)
    truths = accepted_answers(question)
    if answer is None or not truths:
        return AnswerScore(answer=answer, correct=False, score=0.0)
    correct = answer in truths
    score = 1.0 if correct else 0.0
    if contract.kind == "integer" and not correct:
        score = max(soft_count_score(int(answer), int(t)) for t in truths)
    return AnswerScore(answer=answer, correct=correct, score=score)


def _score_by_esibench_rules(question: Question, raw: str | None, rules: str) -> AnswerScore:
    """ESI-Bench's reading and verdict under ``rules`` (``esibench:official`` or
    ``esibench:paper``); an abstention, ``None`` there, scores 0 here."""
    spec = question.metadata.get("esibench") or {}
    verdict = esibench_score(ESIRule.model_validate(spec.get("rule") or {}), raw, rules)
    answer = verdict.answer
    if isinstance(answer, list):
        text: str | None = "|".join(str(a) for a in answer)
    else:
        text = None if answer is None else str(answer)
    correct = verdict.correct is True
    score = verdict.soft_score if verdict.soft_score is not None else float(correct)
    return AnswerScore(answer=text, correct=correct, score=score)
