"""House questions end to end through the CLI without a key: eval, the EXPRESS judge, score, report."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.envs.house import build_question


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
