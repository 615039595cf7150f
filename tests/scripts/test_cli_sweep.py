"""The hostile CLI sweep (``scripts/cli_sweep.py``): its case table covers every command with over
a hundred bad inputs, a part of it passes here (the cases of the issue that listed the tracebacks
and wrong exit codes), and the sweep itself fails on a traceback, a hang or a wrong code."""

from __future__ import annotations

from pathlib import Path

import cli_sweep
import pytest
import typer

from eviseek.cli.errors import EXIT_ERROR, EXIT_USAGE
from eviseek.cli.main import app

# Commands with no input a user could get wrong.
NO_INPUT = {"tabletop families", "models list"}

# The findings of the issue that asked for the sweep: each a traceback or a wrong exit code
# before; the run-based ones share one finished run.
PART = [
    "house/rooms-5",
    "house/seed-neg",
    "house/kind",
    "house/split",
    "house/render-txt",
    "tabletop/render-txt",
    "tabletop/render-action",
    "tabletop/render-width",
    "eval/questions-not-utf8",
    "tabletop/stats-not-utf8",
    "eval/plugin-raise",
    "eval/plugin-syntax",
    "eval/plugin-package",
    "eval/plugin-exit0",
    "eval/unknown-agent",
    "eval/autotool-on-tabletop",
    "eval/questions-huge",
    "env/serve-unknown",
    "replay/same-folder",
    "replay/agent",
    "report/empty-pairs",
    "report/huge-trajectory",
    "demo/server-down",
]


def _commands(group: typer.Typer, prefix: str = "") -> list[str]:
    out = [f"{prefix}{c.name}".strip() for c in group.registered_commands if c.name]
    for sub in group.registered_groups:
        assert sub.typer_instance is not None
        out += _commands(sub.typer_instance, f"{prefix}{sub.name} ")
    return out


def test_the_table_has_over_100_cases_and_reaches_every_command() -> None:
    cases = cli_sweep.CASES
    assert len(cases) >= 100
    assert len({c.name for c in cases}) == len(cases), "case names are unique"
    assert {c.code for c in cases} == {EXIT_USAGE, EXIT_ERROR}
    commands = _commands(app)
    assert len(commands) > 15
    for command in commands:
        if command in NO_INPUT:
            continue
        words = command.split()
        assert any(list(c.args[: len(words)]) == words for c in cases), f"no case for `eviseek {command}`"


def test_part_of_the_sweep_passes_and_leaves_the_run_unchanged(tmp_path: Path) -> None:
    chosen = [c for c in cli_sweep.CASES if c.name in PART]
    assert len(chosen) == len(PART)
    outcomes, unchanged = cli_sweep.sweep(chosen, tmp_path)
    assert unchanged
    failed = {o.name: (o.problem, o.error_line) for o in outcomes if o.problem}
    assert not failed


def test_the_sweep_fails_on_a_traceback_a_hang_and_a_wrong_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forked children inherit this process's modules, so a patched generator shows what the
    sweep reports when a command crashes or hangs."""
    import time

    import eviseek.envs.house as house

    def crash(*_: object, **__: object) -> None:
        raise RuntimeError("a bug")

    paths = cli_sweep.prepare(tmp_path)
    generate = cli_sweep.Case("crash", ("house", "generate", "-o", "{tmp}/h"), EXIT_USAGE)
    monkeypatch.setattr(house, "generate_questions", crash)
    crashed = cli_sweep.run_case(generate, paths, tmp_path)
    assert crashed.problem is not None and crashed.problem.startswith("traceback")

    monkeypatch.setattr(house, "generate_questions", lambda *a, **k: time.sleep(60))
    hung = cli_sweep.run_case(generate, paths, tmp_path, timeout_s=1.0)
    assert hung.problem is not None and hung.problem.startswith("hang")

    monkeypatch.undo()
    lenient = cli_sweep.Case("wrong", ("house", "generate", "-o", "{tmp}/h", "--kind", "nope"), EXIT_ERROR)
    wrong = cli_sweep.run_case(lenient, paths, tmp_path)
    assert wrong.problem == f"exit code {EXIT_USAGE}, expected {EXIT_ERROR}"
