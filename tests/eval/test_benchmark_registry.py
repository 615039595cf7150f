"""The benchmark registry: one module per benchmark, one registration; budgets come from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.answers import AnswerScore
from eviseek.errors import ConfigError
from eviseek.eval.benchmark import (
    _REGISTRY,
    UnregisteredBenchmark,
    benchmark_for,
    benchmark_of,
    benchmarks,
    record_benchmarks,
    register_benchmark,
)
from eviseek.eval.config import default_budget, new_run_config
from eviseek.eval.datasets import load_dataset
from eviseek.eval.scoring import rules_count, score_trajectory
from eviseek.types import AnswerContract, EpisodeResult, Question, Trajectory
from eviseek.types.question_file import read_questions, write_questions


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


def _yes_no(qid: str, **metadata: object) -> Question:
    return Question(
        id=qid, text="?", contract=AnswerContract(kind="yes_no"), ground_truth="yes", metadata=dict(metadata)
    )


def _traj(raw: str) -> Trajectory:
    traj = Trajectory(episode_id="e", question_id="q", agent="a")
    traj.result = EpisodeResult(question_id="q", agent="a", raw_answer=raw)
    return traj


def test_the_scorer_comes_from_the_benchmark_the_dataset_names() -> None:
    register_benchmark(
        "alwaysright",
        lambda arg: [_yes_no("q")],
        scorer=lambda t, q, raw: AnswerScore(answer=raw, correct=True, score=1.0),
    )
    try:
        q = _yes_no("q")
        assert score_trajectory(_traj("no"), q, dataset="alwaysright:1").correct is True
        assert score_trajectory(_traj("no"), q).correct is False  # no benchmark: the contract
        assert benchmarks()["alwaysright"].scoring == "alwaysright"
        assert rules_count([q], "alwaysright:1") == {"alwaysright": 1}
    finally:
        del _REGISTRY["alwaysright"]


def test_saved_questions_are_recognised_by_the_keys_their_loaders_wrote() -> None:
    """A question file or run directory names no benchmark; older runs carry the loaders' keys."""
    from eviseek.eval.benchmarks.autotool import score as autotool_score

    autotool = _yes_no("q", scorer="autotool", autotool_kind="vstar")
    found = benchmark_for(autotool)
    assert found is not None and found.scorer is autotool_score and found.report_sections == ("autotool",)
    esi = _yes_no("q", rules="esibench")  # what runs saved before the rule sets had names
    found = benchmark_for(esi)
    assert found is not None and found.name == "esibench"
    assert found.rules_of(esi) == "esibench:official"
    assert benchmark_for(_yes_no("q")) is None
    assert benchmark_for(_yes_no("q"), "house:dev") is benchmarks()["house"]
    tabletop = _yes_no("q")
    tabletop.env_id = "eviseek/Tabletop-v0"
    assert benchmark_for(tabletop) is benchmarks()["tabletop"]
    assert rules_count([autotool, esi, tabletop]) == {"autotool": 1, "esibench:official": 1, "contract": 1}


def test_esibench_rules_are_applied_by_its_benchmark_not_by_the_answer_contract() -> None:
    from eviseek.answers import score_answer

    q = Question(
        id="q",
        text="How many?",
        contract=AnswerContract(kind="integer"),
        ground_truth="9",
        metadata={"rules": "esibench:official", "esibench": {"rule": {"task": "counting", "truth": 2}}},
    )  # fmt: skip  (a contract truth unlike the rule's, so the two verdicts differ)
    by_benchmark = score_trajectory(_traj("There are 2."), q)
    by_contract = score_answer(q, "There are 2.")  # the metadata does not choose the rules
    by_rules = score_answer(q, "There are 2.", rules="esibench:official")
    assert by_rules.correct is True and by_contract.correct is False
    assert (by_benchmark.correct, by_benchmark.score) == (True, by_rules.score)


def test_a_registration_refuses_an_unknown_report_section() -> None:
    with pytest.raises(ValueError, match="unknown report section"):
        register_benchmark("badbench", lambda arg: [], report_sections=("leaderboard",))
    assert "badbench" not in _REGISTRY


def test_reasonseg_is_a_dataset_spec() -> None:
    """Every AutoTool dataset kind is registered (the registry once listed the names by hand and
    missed ``reasonseg``)."""
    from eviseek.autotool.datasets import KINDS

    assert set(KINDS) <= benchmarks().keys()
    assert benchmarks()["reasonseg"].env_id == "eviseek/ImageZoom-v0"


# --------------------------------------------------------------------------------------------
# Issue 36, finding 2: a saved question keeps its benchmark, and with it its budget and rules.


def test_a_generated_house_file_runs_at_the_house_budget(tmp_path: Path) -> None:
    """``eviseek house generate`` then ``eval --dataset DIR/questions.jsonl``: 120 steps, not 30."""
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    res = CliRunner().invoke(app, ["house", "generate", "--out", str(tmp_path), "-n", "1", "-k", "counting"])
    assert res.exit_code == 0, res.output
    questions = read_questions(tmp_path / "questions.jsonl")
    assert {q.benchmark for q in questions} == {"house"}
    for spec in (str(tmp_path / "questions.jsonl"), str(tmp_path)):
        assert default_budget(spec) == 120
        assert new_run_config(agents=["blind"], model="scripted/x", dataset=spec).budget == 120


def test_a_plugin_benchmarks_question_file_runs_at_its_declared_budget(tmp_path: Path) -> None:
    register_benchmark("tenbench", lambda arg: [_yes_no(f"t{i}") for i in range(int(arg))], budget=10)
    try:
        write_questions(tmp_path, load_dataset("tenbench:2"))
        assert {q.benchmark for q in read_questions(tmp_path / "questions.jsonl")} == {"tenbench"}
        assert default_budget(str(tmp_path / "questions.jsonl")) == 10
        assert [q.benchmark for q in load_dataset(str(tmp_path))] == ["tenbench", "tenbench"]
    finally:
        del _REGISTRY["tenbench"]
    # Its plugin not loaded, the file is refused with the flag to pass, not run as another's.
    with pytest.raises(UnregisteredBenchmark, match=r"'tenbench' is not registered.*--plugin"):
        load_dataset(str(tmp_path))


def test_a_recorded_benchmark_wins_over_what_its_content_looks_like() -> None:
    q = _yes_no("q")
    q.env_id = "eviseek/Tabletop-v0"  # the tabletop's owns accepts it ...
    assert benchmark_for(q) is benchmarks()["tabletop"]
    q.benchmark = "house"  # ... but it records the house: looked up by name, nothing guessed
    assert benchmark_for(q) is benchmarks()["house"]
    assert benchmark_for(q, "tabletop:dev") is benchmarks()["house"]


def test_questions_saved_before_the_records_are_assigned_once_with_a_note() -> None:
    old = _yes_no("q", rules="esibench")
    plain = _yes_no("p")
    note = record_benchmarks([old, plain])
    assert (old.benchmark, plain.benchmark) == ("esibench", None)
    assert note is not None and "1 question(s) as esibench by their content" in note
    assert record_benchmarks([old]) is None  # recorded now: nothing is recognised again


def test_a_plugin_cannot_silently_replace_a_builtin_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    import eviseek._registration as registration
    from eviseek.eval import benchmark as module

    monkeypatch.setattr(registration, "_REPLACED", [])
    house, origin = _REGISTRY["house"], module._ORIGINS.of("house")
    try:
        with pytest.raises(ConfigError, match=r"benchmark 'house' is already registered by eviseek\.eval"):
            register_benchmark("house", lambda arg: [], budget=30)
        assert benchmarks()["house"] is house
        register_benchmark("house", lambda arg: [], budget=30, replace=True)
        assert benchmarks()["house"].budget == 30
        here = f"{__name__} ({Path(__file__).resolve()})"
        assert registration.replacements() == [
            f"benchmark house: eviseek.eval.benchmarks.house replaced by {here}"
        ]
        register_benchmark("house", lambda arg: [], budget=31)  # the same module again: its own entry
    finally:
        _REGISTRY["house"] = house
        assert origin is not None
        module._ORIGINS._origins["house"] = origin
