"""ESI-Bench from a checkout of it (``esibench:PATH``), scored with its own rules."""

from __future__ import annotations

from eviseek.eval.benchmark import TABLETOP_BUDGET, register_benchmark
from eviseek.types import Question


def load(spec: str) -> list[Question]:
    from eviseek.eval.esibench import load_esibench

    return load_esibench(spec)


register_benchmark(
    "esibench",
    load,
    budget=TABLETOP_BUDGET,
    description="ESI-Bench's questions from its checkout (OmniGibson bridge or offline)",
)
