"""The worked example of docs/architecture.md ("A benchmark") runs end to end as a plugin:
loaded by ``eviseek eval --plugin``, played by the reference model, scored by its own scorer
live and by ``eviseek score``, and reported in its taxonomy's order by ``eviseek report``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from eviseek.types.question_file import read_questions

ROOT = Path(__file__).resolve().parents[2]


def _example() -> str:
    """The first Python block of the section "### A benchmark"."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("### A benchmark", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, flags=re.S)
    assert found is not None, "docs/architecture.md: the benchmark section has no Python example"
    return found.group(1)


def _cli(*args: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "eviseek", *args], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert res.returncode == 0, f"{args}: {res.stdout[-2000:]}{res.stderr[-2000:]}"
    return res.stdout


@pytest.mark.timeout(600)
def test_the_documented_plugin_benchmark_runs_scores_and_reports(tmp_path: Path) -> None:
    pytest.importorskip("pybullet")
    plugin = tmp_path / "counts_bench.py"
    plugin.write_text(_example(), encoding="utf-8")
    run = tmp_path / "run"
    _cli(
        "eval", "--plugin", str(plugin), "--dataset", "counts:2", "--agents", "passive",
        "--model", "reference", "--out", str(run), "--no-progress",
    )  # fmt: skip
    config = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert config["budget"] == 12  # the registration's budget
    questions = {q.id: q for q in read_questions(run / "questions.jsonl")}
    assert len(questions) == 2 and all(q.contract.kind == "integer" for q in questions.values())

    scored = json.loads(_cli("score", str(run), "--json"))
    assert scored["rules"] == {"within-one": 2}
    agent = scored["agents"][0]
    rows = [
        json.loads(p.read_text(encoding="utf-8"))["result"]
        for p in sorted((run / "episodes").rglob("trajectory.json"))
    ]
    assert len(rows) == 2
    for row in rows:
        truth = int(str(questions[row["question_id"]].ground_truth))
        close = row["answer"] is not None and abs(int(row["answer"]) - truth) <= 1
        assert row["correct"] is close, row  # the plugin's verdict, live
    assert agent["overall"]["correct"] == sum(r["correct"] for r in rows)  # and again by score

    _cli("report", str(run), "--out", str(tmp_path / "report"), "--no-episodes")
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    assert summary["runs"][0]["rules"] == "within-one"
    families = [r["family"] for r in summary["accuracy"] if r["level"] == "family"]
    assert families == ["Enumerative Perception"]

    # Read back from its question file, the run is still the plugin's benchmark (each question
    # records it), with the plugin's budget and rules.
    again = tmp_path / "again"
    _cli(
        "eval", "--plugin", str(plugin), "--dataset", str(run / "questions.jsonl"), "--agents", "passive",
        "--model", "reference", "--out", str(again), "--no-progress",
    )  # fmt: skip
    redo = json.loads((again / "run.json").read_text(encoding="utf-8"))
    assert (redo["benchmark"], redo["budget"]) == ("counts", 12)
    assert json.loads(_cli("score", str(again), "--json"))["rules"] == {"within-one": 2}


def test_the_documented_scorer_accepts_a_count_one_off(tmp_path: Path) -> None:
    from eviseek.eval.benchmark import _REGISTRY, benchmark_for
    from eviseek.eval.envpool import import_plugins
    from eviseek.types import AnswerContract, Question, Trajectory

    plugin = tmp_path / "counts_doc_example.py"
    plugin.write_text(_example(), encoding="utf-8")
    import_plugins([str(plugin)])
    try:
        q = Question(
            id="q", text="How many?", contract=AnswerContract(kind="integer"), ground_truth="4",
            benchmark="counts",
        )  # fmt: skip
        bench = benchmark_for(q)  # looked up by the name it records, with no dataset spec
        assert bench is not None and bench.name == "counts" and bench.scorer is not None
        traj = Trajectory(episode_id="e", question_id="q", agent="a")
        assert [bench.scorer(traj, q, raw).correct for raw in ("3", "5", "6", None)] == [
            True,
            True,
            False,
            False,
        ]
    finally:
        del _REGISTRY["counts"]
        sys.modules.pop("eviseek_plugin_counts_doc_example", None)
