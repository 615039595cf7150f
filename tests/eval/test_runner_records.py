"""What ``prepare_run_dir`` records of a run's benchmark, and that a run saved before those
records still resumes (an interrupted evaluation always resumes)."""

from __future__ import annotations

import json
from pathlib import Path

from eviseek.eval.config import load_config, new_run_config
from eviseek.eval.runner import prepare_run_dir
from eviseek.types import AnswerContract, Question
from eviseek.types.question_file import questions_digest


def _questions() -> list[Question]:
    return [
        Question(
            id=f"q{i}",
            text="?",
            contract=AnswerContract(kind="yes_no"),
            ground_truth="yes",
            benchmark="house",
        )
        for i in range(3)
    ]


def test_a_run_records_its_benchmark_and_an_older_run_of_the_same_questions_resumes(tmp_path: Path) -> None:
    config = new_run_config(agents=["blind"], model="scripted/x", dataset="house:dev", budget=5)
    prepare_run_dir(tmp_path, config, _questions())
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert saved["benchmark"] == "house"
    assert all(
        '"benchmark":"house"' in line for line in (tmp_path / "questions.jsonl").read_text().splitlines()
    )

    # As an eviseek before the records saved it: no benchmark anywhere, the digest of those lines.
    old = _questions()
    saved.pop("benchmark")
    saved["questions_sha256"] = questions_digest(old, legacy=True)
    (tmp_path / "run.json").write_text(json.dumps(saved), encoding="utf-8")
    resumed = prepare_run_dir(tmp_path, config, old)  # no "questions differ" refusal
    assert resumed.questions_sha256 == saved["questions_sha256"]
    assert load_config(tmp_path).benchmark == "house"


def test_questions_of_no_benchmark_are_written_as_before() -> None:
    plain = Question(id="q", text="?")
    assert "benchmark" not in plain.model_dump_json(exclude={"benchmark"})
    assert questions_digest([plain]) == questions_digest([plain], legacy=True)
