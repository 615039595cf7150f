"""The benchmark registry: one module per benchmark, one registration; budgets come from it."""

from __future__ import annotations

from eviseek.eval.benchmark import _REGISTRY, benchmark_of, benchmarks, register_benchmark
from eviseek.eval.config import default_budget, new_run_config
from eviseek.eval.datasets import load_dataset
from eviseek.types import AnswerContract, Question


def test_builtin_benchmarks_declare_env_and_budget() -> None:
    known = benchmarks()
    assert {"tabletop", "house", "express", "esibench", "vstar", "synthetic"} <= known.keys()
    assert (known["tabletop"].env_id, known["tabletop"].budget) == ("eviseek/Tabletop-v0", 30)
    assert (known["house"].env_id, known["house"].budget) == ("eviseek/House-v0", 120)
    assert known["express"].budget == 120 and known["vstar"].env_id == "eviseek/ImageZoom-v0"
    assert benchmark_of(" House:dev") is known["house"] and benchmark_of("runs/x") is None


def test_a_plugin_benchmark_is_one_registration() -> None:
    def load(arg: str) -> list[Question]:
        return [
            Question(
                id=f"toy-{i}", text="Is it red?", contract=AnswerContract(kind="yes_no"), ground_truth="yes"
            )
            for i in range(int(arg))
        ]

    register_benchmark("toybench", load, env_id="eviseek/Tabletop-v0", budget=7)
    try:
        assert [q.id for q in load_dataset("toybench:2")] == ["toy-0", "toy-1"]
        assert default_budget("toybench:2") == 7
        assert new_run_config(agents=["passive"], model="scripted/x", dataset="toybench:2").budget == 7
    finally:
        del _REGISTRY["toybench"]


def test_scorers_are_registered_by_the_benchmark_that_names_them() -> None:
    from eviseek.answers import AnswerScore
    from eviseek.eval.benchmark import _SCORERS, register_scorer, scorer_named
    from eviseek.eval.benchmarks.autotool import score as autotool_score
    from eviseek.eval.scoring import score_trajectory
    from eviseek.types import EpisodeResult, Trajectory

    assert scorer_named("autotool") is autotool_score and scorer_named(None) is None
    register_scorer("always_right", lambda t, q, raw: AnswerScore(answer=raw, correct=True, score=1.0))
    try:
        q = Question(
            id="q", text="?", contract=AnswerContract(kind="yes_no"), ground_truth="yes",
            metadata={"scorer": "always_right"},
        )  # fmt: skip
        traj = Trajectory(episode_id="e", question_id="q", agent="a")
        traj.result = EpisodeResult(question_id="q", agent="a", raw_answer="no")
        assert score_trajectory(traj, q).correct is True
    finally:
        del _SCORERS["always_right"]
