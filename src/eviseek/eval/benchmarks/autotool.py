"""AutoTool's image benchmarks (``vstar:PATH``, ``hrbench4k:PATH``, ``refcoco:PATH``,
``mathvista:PATH``, ``synthetic:N``...), on the zoom environment."""

from __future__ import annotations

from eviseek.answers import AnswerScore
from eviseek.eval.benchmark import Loader, register_benchmark, register_scorer
from eviseek.types import Question, Trajectory

NAMES = (
    *("vstar", "hrbench", "hrbench4k", "hrbench8k", "pope", "refcoco", "refcoco+", "refcocog", "grounding"),
    *("mathvista", "mathverse", "mathvision", "wemath", "dynamath", "logicvista", "synthetic"),
)
"""Listed here so that the registry stays import-light (the loaders live in
:mod:`eviseek.autotool.benchmark_specs`)."""


def loader(name: str) -> Loader:
    def load(arg: str) -> list[Question]:
        from eviseek.autotool.benchmark_specs import load_autotool_benchmark

        return load_autotool_benchmark(name, arg)

    return load


def score(trajectory: Trajectory, question: Question, raw: str | None) -> AnswerScore:
    """AutoTool's own rules: grounding boxes mapped from the shown frame, reasoning answers
    extracted from the reply (its loaders mark their questions ``metadata["scorer"] = "autotool"``)."""
    from eviseek.autotool.scoring import answer_text, score_episode_answer

    return score_episode_answer(question, answer_text(trajectory.plan, raw), trajectory.plan)


register_scorer("autotool", score)
for _name in NAMES:
    register_benchmark(_name, loader(_name), env_id="eviseek/ImageZoom-v0", description="AutoTool benchmark")
