"""Whether an agent's answer is one its question accepts, or needs a forced choice.

eviseek's own benchmarks read an answer by its :class:`~eviseek.types.AnswerContract`
(:func:`~eviseek.answers.normalize_answer`). An ESI-Bench question is read by its task's own
rule instead (:func:`~eviseek.answers.esibench.esibench_accepted`): its reader keeps what the
task keeps, and a forced choice follows only where the task's rule asks one. Reading it by
eviseek's contract would accept forms the task scores wrong (a letter where the task has no
lettering) and refuse forms it accepts (stacking's ``1) ... 2) ... 3) ...``).
"""

from __future__ import annotations

from eviseek.answers.esibench import ESIRule, esibench_accepted, saved_rule_set
from eviseek.answers.normalize import normalize_answer
from eviseek.types import Question


def esibench_rule(question: Question) -> ESIRule | None:
    """The ESI-Bench rule a question was loaded with (``None``: not an ESI-Bench question)."""
    if saved_rule_set(question.metadata) is None:
        return None
    spec = (question.metadata.get("esibench") or {}).get("rule")
    return ESIRule.model_validate(spec) if isinstance(spec, dict) and spec.get("task") else None


def accept_answer(question: Question, raw: str | None, *, stop_reason: str = "") -> str | None:
    """``raw`` as the question reads it, or ``None`` when it needs a forced choice.

    ``stop_reason`` ``max_steps`` says the episode ran out of steps (two ESI-Bench tasks then
    always ask their forced choice).
    """
    rule = esibench_rule(question)
    if rule is not None:
        return esibench_accepted(rule, raw, stop_reason)
    return normalize_answer(raw, question.contract)
