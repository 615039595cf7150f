"""The house benchmark (``house:dev``, ``house:test``): EXPRESS-style and Cognitive Mapping
questions in seeded houses, reported with ESI-Bench's taxonomy and, once the EXPRESS judge has
graded a run, EXPRESS-Bench's metrics."""

from __future__ import annotations

from eviseek import env_ids
from eviseek.eval.benchmark import NAVIGATION_BUDGET, register_benchmark
from eviseek.types import Question
from eviseek.types.taxonomy import ESI_TAXONOMY

ENV_ID = env_ids.HOUSE


def load(split: str) -> list[Question]:
    from eviseek.envs.house import load_split

    questions: list[Question] = load_split(split)
    return questions


def owns(question: Question) -> bool:
    """Whether ``question`` runs in a house (every generated house question names it)."""
    return question.env_id == ENV_ID


register_benchmark(
    "house",
    load,
    env_id=ENV_ID,
    budget=NAVIGATION_BUDGET,
    description="multi-room houses with EXPRESS-style and Cognitive Mapping questions",
    owns=owns,
    taxonomy=ESI_TAXONOMY,
    report_sections=("express",),
)
