"""ESI-Bench from a checkout of it (``esibench:PATH``), scored with its own rules.

Its questions choose one of two rule sets, ``esibench:paper`` (the loader's default) or
``esibench:official``, recorded in ``metadata["rules"]`` (see :mod:`eviseek.answers.esibench`);
the scorer here applies the chosen one. A question file or run directory of ESI-Bench questions
is recognised by that record, so runs saved before this registration score the same way.
"""

from __future__ import annotations

from eviseek.answers import AnswerScore, score_answer
from eviseek.answers.esibench import RULE_SETS, rule_set_of
from eviseek.eval.benchmark import TABLETOP_BUDGET, RuleSets, register_benchmark
from eviseek.types import Question, Trajectory
from eviseek.types.taxonomy import ESI_TAXONOMY

RULES = RuleSets(RULE_SETS, rule_set_of)
"""ESI-Bench's two rule sets; ``esibench`` (what older runs saved) reads as ``esibench:official``."""


def load(spec: str) -> list[Question]:
    from eviseek.eval.esibench import load_esibench

    return load_esibench(spec)


def owns(question: Question) -> bool:
    """Whether ``question`` names one of ESI-Bench's rule sets (its loader writes one into each)."""
    return RULES.of(question) is not None


def score(trajectory: Trajectory, question: Question, raw: str | None) -> AnswerScore:
    """ESI-Bench's reading and verdict under the question's rule set (its contract without one)."""
    return score_answer(question, raw, rules=RULES.of(question))


register_benchmark(
    "esibench",
    load,
    budget=TABLETOP_BUDGET,
    description="ESI-Bench's questions from its checkout (OmniGibson bridge or offline)",
    scorer=score,
    rules=RULES,
    owns=owns,
    taxonomy=ESI_TAXONOMY,
)
