"""EXPRESS-Bench's own question file (``express:PATH/express-bench.json``), on the Habitat
bridge, reported with EXPRESS-Bench's metrics once the EXPRESS judge has graded a run."""

from __future__ import annotations

from eviseek import env_ids
from eviseek.eval.benchmark import NAVIGATION_BUDGET, register_benchmark
from eviseek.types import Question

ENV_ID = env_ids.EXPRESS


def load(path: str) -> list[Question]:
    from eviseek.envs.express import load_express

    return load_express(path)


def owns(question: Question) -> bool:
    """Whether ``question`` runs on the Habitat bridge (the EXPRESS loader names it)."""
    return question.env_id == ENV_ID


register_benchmark(
    "express",
    load,
    env_id=ENV_ID,
    budget=NAVIGATION_BUDGET,
    description="EXPRESS-Bench's HM3D questions (needs a Habitat env server)",
    owns=owns,
    report_sections=("express",),
)
