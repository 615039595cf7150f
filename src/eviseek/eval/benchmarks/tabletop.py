"""The tabletop benchmark (``tabletop:dev``, ``tabletop:test``): generated PyBullet scenes."""

from __future__ import annotations

from eviseek.eval.benchmark import TABLETOP_BUDGET, register_benchmark
from eviseek.types import Question


def load(split: str) -> list[Question]:
    from eviseek._lazy import require_pybullet

    require_pybullet("the tabletop question splits")
    from eviseek.envs.tabletop import load_split

    questions: list[Question] = load_split(split)
    return questions


register_benchmark(
    "tabletop",
    load,
    env_id="eviseek/Tabletop-v0",
    budget=TABLETOP_BUDGET,
    description="generated tabletop scenes of ESI-Bench's subcategories",
)
