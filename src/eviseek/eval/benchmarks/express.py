"""EXPRESS-Bench's own question file (``express:PATH/express-bench.json``), on the Habitat bridge."""

from __future__ import annotations

from eviseek.eval.benchmark import NAVIGATION_BUDGET, register_benchmark
from eviseek.types import Question


def load(path: str) -> list[Question]:
    from eviseek.envs.express import load_express

    return load_express(path)


register_benchmark(
    "express",
    load,
    env_id="eviseek/Express-v0",
    budget=NAVIGATION_BUDGET,
    description="EXPRESS-Bench's HM3D questions (needs a Habitat env server)",
)
