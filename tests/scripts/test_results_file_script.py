"""``scripts/results_file.py``: a run directory in, the committed summary the charts read out.

The houses' step for the lead (``--preset house:test`` after ``eviseek judge``), on a synthetic
run whose question kinds are not the paper's: the file's slices are the run's kinds, whatever
they are, and a missing run or missing judge grades is one ``error:`` line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from eviseek.eval.results_file import read_results_file
from tests.eval.synthetic import make_questions, write_run

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "results_file.py"
KINDS = ["Object", "State", "Knowledge", "Counting"]


def _run(tmp_path: Path) -> Path:
    qs = [
        q.model_copy(
            update={"family": "Open EQA", "subcategory": KINDS[i % len(KINDS)], "benchmark": "house"}
        )
        for i, q in enumerate(make_questions(8))
    ]
    return write_run(
        tmp_path / "run", "reference", ["blind", "eviseek-nav"], qs, lambda a, i: (i % 2 == 0, None, None)
    )


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_a_judged_house_run_becomes_a_results_file_with_the_runs_kinds(tmp_path: Path) -> None:
    run = _run(tmp_path)
    questions = [json.loads(line) for line in (run / "questions.jsonl").read_text().splitlines()]
    grades = [
        {"agent": "eviseek-nav", "question_id": q["id"], "grounding": 1.0, "score": 5 if i % 2 == 0 else 1}
        for i, q in enumerate(questions)
    ]
    (run / "express.jsonl").write_text("".join(json.dumps(g) + "\n" for g in grades), encoding="utf-8")
    out = tmp_path / "house-test.json"
    proc = _script(str(run), "--preset", "house:test", "--commit", "abc1234", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    res = read_results_file(out)
    assert res.name == "house:test" and res.commit == "abc1234" and res.c_metric == "express"
    nav = res.agent("eviseek-nav")
    assert [s.name for s in nav.slices] == KINDS and nav.label == "EviSeek (nav.)"
    assert "eviseek judge" in res.command
    # The lines the pages' tables quote: Blind has no C (it never looks), EviSeek's from the grades.
    assert "  blind (Blind): accuracy 50.0, C —" in proc.stdout.splitlines()
    assert "  eviseek-nav (EviSeek (nav.)): accuracy 50.0, C 60.0" in proc.stdout.splitlines()


def test_a_missing_run_or_missing_grades_is_one_error_line(tmp_path: Path) -> None:
    missing = _script(str(tmp_path / "nowhere"), "--preset", "house:test", "--out", str(tmp_path / "x.json"))
    assert missing.returncode == 1 and missing.stderr.startswith("error: no run directory")
    ungraded = _script(str(_run(tmp_path)), "--preset", "house:test", "--out", str(tmp_path / "x.json"))
    assert ungraded.returncode == 1 and ungraded.stderr.startswith("error:")
    assert "eviseek judge" in ungraded.stderr and "Traceback" not in ungraded.stderr
    assert not (tmp_path / "x.json").exists()
