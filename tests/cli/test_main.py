"""The CLI starts without heavy imports."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "trl", "pybullet", "ray", "datasets", "gymnasium")


def test_import_and_help_load_no_heavy_dependency() -> None:
    code = (
        "import sys, eviseek, eviseek.cli.main as m\n"
        "from typer.testing import CliRunner\n"
        "r = CliRunner().invoke(m.app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        f"print(','.join(x for x in {HEAVY!r} if x in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy modules imported at start-up: {out.stdout}"


def test_models_check_with_scripted_echo() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "eviseek", "models", "check", "--model", "scripted/echo"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "1 image(s)" in out.stdout and "latency:" in out.stdout


def test_models_check_bad_id_is_one_line_error() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "eviseek", "models", "check", "--model", "nope/x"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2  # a bad --model value, as the exit-code table says
    assert out.stderr.strip().startswith("error: unknown model provider")
    assert len(out.stderr.strip().splitlines()) == 1


def test_help_shows_no_type_next_to_plain_flags() -> None:
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    for command in (["eval"], ["report"], ["score"], ["view"]):
        out = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert out.exit_code == 0, out.output
        assert "<bool>" not in out.output, command
    help_text = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"}).output
    budget = next(line for line in help_text.splitlines() if "--budget" in line)
    assert "x>=1" in budget and "at least 1" in budget  # the range shown is the one enforced


def test_budget_zero_is_refused_as_the_help_says(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    args = ["eval", "--agents", "passive", "--model", "scripted/echo", "--dataset", str(tmp_path)]
    out = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--budget", "0"])
    assert out.exit_code == 2
    assert "Invalid value for '--budget'" in out.output and "greater than or equal to 1" in out.output
    assert "Config" not in out.output  # no internal class name


def test_eval_help_quotes_the_run_config_defaults() -> None:
    import inspect

    from eviseek.cli.eval import eval_command
    from eviseek.eval.config import RunConfig

    defaults = RunConfig(agents=["passive"], model="reference", dataset="tabletop:dev")
    helps = {name: p.default.help for name, p in inspect.signature(eval_command).parameters.items()}
    assert helps["concurrency"].endswith(f"(default {defaults.concurrency})")
    assert helps["timeout"].endswith(f"(default {defaults.timeout_s:g})")
    assert helps["seed"].endswith(f"(default {defaults.seed})")
    assert f"(default {defaults.budget};" in helps["budget"]


def _run_entry_point(*args: str) -> subprocess.CompletedProcess[str]:
    import os
    from pathlib import Path

    import eviseek

    # The child imports this checkout's package, as the test process does.
    env = {**os.environ, "PYTHONPATH": str(Path(eviseek.__file__).parents[1]), "COLUMNS": "200"}
    code = "import sys; from eviseek.cli.main import main; sys.argv = ['eviseek', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_usage_errors_are_one_line_with_exit_code_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    budget = _run_entry_point("eval", "--out", str(tmp_path / "run"), "--budget", "0")
    assert budget.returncode == 2
    assert budget.stderr.strip().splitlines() == [
        "eviseek eval: Invalid value for '--budget': Input should be greater than or equal to 1 "
        "(see 'eviseek eval --help')"
    ]
    unknown = _run_entry_point("no-such-command")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "No such command 'no-such-command'" in unknown.stderr


def test_version_alone_prints_the_version_and_no_command_prints_help() -> None:
    from eviseek import __version__

    version = _run_entry_point("--version")
    assert (version.returncode, version.stdout.strip(), version.stderr) == (0, __version__, "")
    bare = _run_entry_point()
    assert bare.returncode == 2 and "Commands" in bare.stdout


def test_one_exit_code_table_in_the_code_and_the_docs() -> None:
    from pathlib import Path

    from eviseek.cli.errors import EXIT_CODES

    # The table is generated into the CLI reference (scripts/cli_reference.py), which
    # tests/docs/test_cli_reference.py keeps equal to the code.
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    table = page.split("## Exit codes", 1)[1].split("\n\n", 2)[2].split("\n\n", 1)[0]
    rows = {int(line.split("|")[1]) for line in table.splitlines()[2:]}
    assert rows == set(EXIT_CODES)


def test_every_command_runs_inside_the_boundary_and_train_config_errors_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    def commands(group):  # type: ignore[no-untyped-def]
        for info in group.registered_commands:
            yield info.callback
        for sub in group.registered_groups:
            yield from commands(sub.typer_instance)

    assert all(getattr(c, "__wrapped__", None) is not None for c in commands(app))
    # An error the command does not catch itself: one line, exit 1 (demo had no OSError branch).
    missing = CliRunner().invoke(app, ["esibench", "stats", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and missing.output.startswith("error: ")
    # A config file that is not there is a missing resource (1); one that is wrong a bad value (2).
    gone = CliRunner().invoke(app, ["train", "autotool", "--config", str(tmp_path / "none.yaml"), "--check"])
    assert gone.exit_code == 1 and gone.output.startswith("error: ")
    (tmp_path / "bad.yaml").write_text("grpo: [1,\n")
    bad = CliRunner().invoke(app, ["train", "autotool", "--config", str(tmp_path / "bad.yaml"), "--check"])
    assert bad.exit_code == 2 and bad.output.startswith("error: ") and len(bad.output.splitlines()) == 1
