"""The house benchmark (``house:dev``, ``house:test``): EXPRESS-style questions in seeded houses."""

from __future__ import annotations

from eviseek.eval.benchmark import NAVIGATION_BUDGET, register_benchmark
from eviseek.types import Question


def load(split: str) -> list[Question]:
    from eviseek.envs.house import load_split

    questions: list[Question] = load_split(split)
    return questions


register_benchmark(
    "house",
    load,
    env_id="eviseek/House-v0",
    budget=NAVIGATION_BUDGET,
    description="multi-room houses with EXPRESS-style and Cognitive Mapping questions",
)
