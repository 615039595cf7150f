"""House questions end to end through the CLI without a key: eval, the EXPRESS judge, score, report."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.envs.house import build_question
from eviseek.envs.house.questions import EXPRESS_KINDS


def test_eval_judge_score_and_report_show_express_metrics(tmp_path: Path) -> None:
    questions = tmp_path / "house.jsonl"
    qs = [build_question("counting", 5, 0), build_question("regional_boundary", 5, 1)]
    questions.write_text("".join(q.model_dump_json() + "\n" for q in qs))
    run = tmp_path / "run"
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "eval",
            "--out",
            str(run),
            "--agents",
            "blind,passive",
            "--model",
            "reference/tabletop",
            "--dataset",
            str(questions),
            "--env-workers",
            "0",
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["judge", str(run), "--protocol", "express", "--model", "reference/tabletop"])
    assert res.exit_code == 0, res.output
    assert "graded 4 episode(s)" in res.output and (run / "express.jsonl").exists()
    res = runner.invoke(app, ["score", str(run)])
    assert res.exit_code == 0, res.output
    assert "EXPRESS-Bench metrics" in res.output and "E_path" in res.output
    express = res.output[res.output.index("EXPRESS-Bench metrics") :]
    blind_row = next(line for line in express.splitlines() if "│ blind" in line)
    assert blind_row.count("—") == 3  # C, E_path and d_T do not apply to a question-only system
    res = runner.invoke(app, ["report", str(run)])
    assert res.exit_code == 0, res.output
    md = (run / "report" / "report.md").read_text()
    assert "## EXPRESS-Bench" in md and "| passive |" in md
    res = runner.invoke(app, ["judge", str(run), "--protocol", "nope", "--model", "reference/tabletop"])
    assert res.exit_code == 2 and "unknown --protocol" in res.output


def test_express_kinds_with_express_benchs_prompt_and_bad_checkouts(tmp_path: Path) -> None:
    questions = tmp_path / "house.jsonl"
    qs = [build_question(kind, 6, 0) for kind in EXPRESS_KINDS]
    questions.write_text("".join(q.model_dump_json() + "\n" for q in qs))
    run = tmp_path / "run"
    runner = CliRunner()
    args = ["--agents", "passive", "--model", "reference/tabletop", "--dataset", str(questions)]
    res = runner.invoke(app, ["eval", "--out", str(run), *args, "--env-workers", "0"])
    assert res.exit_code == 0, res.output
    judge = ["judge", str(run), "--protocol", "express", "--model", "reference/tabletop"]
    # A missing checkout: a missing resource, exit 1, one line, nothing graded.
    res = runner.invoke(app, [*judge, "--express-root", str(tmp_path / "no-such-checkout")])
    assert res.exit_code == 1 and _one_error_line(res.output).startswith("error: --express-root")
    assert not (run / "express.jsonl").exists()
    # A checkout without the prompt file: the same.
    (tmp_path / "empty").mkdir()
    res = runner.invoke(app, [*judge, "--express-root", str(tmp_path / "empty")])
    assert res.exit_code == 1 and "prompt/evaluation.txt" in _one_error_line(res.output)
    # A prompt file that does not parse: a bad value, exit 2.
    bad = tmp_path / "bad"
    (bad / "prompt").mkdir(parents=True)
    (bad / "prompt" / "evaluation.txt").write_text("Grade it.\n")
    res = runner.invoke(app, [*judge, "--express-root", str(bad)])
    assert res.exit_code == 2 and "does not read as" in _one_error_line(res.output)
    res = runner.invoke(app, ["judge", str(run), "--model", "reference/tabletop", "--express-root", str(bad)])
    assert res.exit_code == 2 and "--protocol express only" in _one_error_line(res.output)
    # A checkout in EXPRESS-Bench's layout: its prompt is used and named.
    good = tmp_path / "EXPRESS-Bench"
    (good / "prompt").mkdir(parents=True)
    (good / "prompt" / "evaluation.txt").write_text("[system]:\nYou grade answers.\n[user]:\nGive g, s.\n")
    res = runner.invoke(app, [*judge, "--express-root", str(good)])
    assert res.exit_code == 0, res.output
    assert (
        f"graded {len(EXPRESS_KINDS)} episode(s)" in res.output
        and "judge prompt: EXPRESS-Bench's" in res.output
    )
    grades = [json.loads(line) for line in (run / "express.jsonl").read_text().splitlines()]
    assert {g["prompt"][:35] for g in grades} == {"express-bench:prompt/evaluation.txt"}
    res = runner.invoke(app, ["score", str(run)])
    assert res.exit_code == 0 and "EXPRESS-Bench metrics" in res.output


def _one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]
