"""A plugin adds a report section: a registered callable whose tables ``eviseek report`` draws
under its heading for the runs of benchmarks that name it (issue 36, "What to build" 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.eval import report_sections
from eviseek.eval.benchmark import _REGISTRY, register_benchmark
from eviseek.eval.metrics import SystemResults
from eviseek.eval.report import build_report
from eviseek.eval.report_sections import register_report_section
from eviseek.eval.rundir import RunData
from eviseek.eval.tables import Cell, Table

from .synthetic import make_questions, write_run


def _answered(runs: list[RunData], systems: list[SystemResults]) -> list[Table]:
    table = Table(
        "answered", "Answered questions", "Episodes that ended with an answer", ["system", "answered"]
    )
    for s in systems:
        answered = sum(r.answer is not None for r in s.results.values())
        table.add([Cell(s.label, numeric=False), Cell(str(answered))])
    return [table]


def test_a_plugin_section_is_drawn_for_its_benchmarks_runs(tmp_path: Path) -> None:
    register_report_section("answered-36", "Answered questions", _answered)  # type: ignore[arg-type]
    register_benchmark("sectionbench", lambda arg: [], report_sections=("answered-36",))
    try:
        questions = make_questions(4)
        for q in questions:
            q.benchmark = "sectionbench"
        run = write_run(
            tmp_path / "run", "scripted/x", ["passive"], questions, lambda a, i: (True, 1.0, None)
        )
        files = build_report([run], n_resamples=200, episodes=False)
        markdown = files.markdown.read_text(encoding="utf-8")
        assert "## Answered questions" in markdown and "| passive | 4 |" in markdown
        assert markdown.index("## Answered questions") < markdown.index("## Visual support")
        assert "<h2>Answered questions</h2>" in files.html.read_text(encoding="utf-8")
        summary = json.loads(files.summary.read_text(encoding="utf-8"))
        assert summary["sections"]["answered-36"][0]["rows"] == [["passive", "4"]]

        # A run of another benchmark has no such section, and its summary.json no new key.
        plain = write_run(
            tmp_path / "plain", "scripted/x", ["passive"], make_questions(4), lambda a, i: (True, 1.0, None)
        )
        files = build_report([plain], n_resamples=200, episodes=False)
        assert "Answered questions" not in files.markdown.read_text(encoding="utf-8")
        assert "sections" not in json.loads(files.summary.read_text(encoding="utf-8"))
    finally:
        del _REGISTRY["sectionbench"]
        del report_sections._SECTIONS["answered-36"]


def test_the_builtin_sections_cannot_be_registered_again() -> None:
    with pytest.raises(ConfigError, match="built in"):
        register_report_section("express", "EXPRESS", _answered)  # type: ignore[arg-type]
