"""The tabletop benchmark (``tabletop:dev``, ``tabletop:test``): generated PyBullet scenes of
ESI-Bench's subcategories, scored by each question's answer contract and reported in the order of
ESI-Bench's taxonomy."""

from __future__ import annotations

from eviseek import env_ids
from eviseek.eval.benchmark import TABLETOP_BUDGET, register_benchmark
from eviseek.types import Question
from eviseek.types.taxonomy import ESI_TAXONOMY

ENV_ID = env_ids.TABLETOP


def load(split: str) -> list[Question]:
    from eviseek._lazy import require_pybullet

    require_pybullet("the tabletop question splits")
    from eviseek.envs.tabletop import load_split

    questions: list[Question] = load_split(split)
    return questions


def owns(question: Question) -> bool:
    """Whether ``question`` runs on the tabletop (every generated tabletop question names it)."""
    return question.env_id == ENV_ID


register_benchmark(
    "tabletop",
    load,
    env_id=ENV_ID,
    budget=TABLETOP_BUDGET,
    description="generated tabletop scenes of ESI-Bench's subcategories",
    owns=owns,
    taxonomy=ESI_TAXONOMY,
)
