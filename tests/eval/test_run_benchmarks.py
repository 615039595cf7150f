"""A run knows its benchmark: ``score``, ``report`` and ``replay`` look it up by name and never
score a plugin benchmark's run by other rules (issue 36, finding 1).

The plugin benchmark here, ``tally``, runs the toy environment's questions and scores them by
inverting the answer contract, so its verdicts and the contract's always differ: a run scored by
the wrong rules cannot go unnoticed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from eviseek.eval.config import file_sha256
from eviseek.types.question_file import read_questions
from tests.cli.preloaded import PreloadedCli

ROOT = Path(__file__).resolve().parents[2]

TALLY = """
from eviseek.answers import AnswerScore, score_answer
from eviseek.eval.benchmark import register_benchmark
from tests.eval.toy_plugin import ENV_ID, make_questions


def load(arg):
    return make_questions(int(arg))


def inverted(trajectory, question, raw):
    read = score_answer(question, raw)
    return AnswerScore(answer=read.answer, correct=not read.correct, score=float(not read.correct))


register_benchmark("tally", load, env_id=ENV_ID, budget=10, scorer=inverted, scoring="inverted")
"""


@pytest.fixture(scope="module")
def cli() -> Iterator[PreloadedCli]:
    with PreloadedCli() as preloaded:
        yield preloaded


def _ok(cli: PreloadedCli, *args: str) -> str:
    res = cli.run(*args, cwd=ROOT)
    assert res.returncode == 0, f"{args}: {res.stdout[-1500:]}{res.stderr[-1500:]}"
    return res.stdout


def _refused(cli: PreloadedCli, *args: str) -> str:
    """The one ``error:`` line of a command that must exit 2."""
    res = cli.run(*args, cwd=ROOT)
    assert res.returncode == 2, f"{args}: rc {res.returncode}: {res.stdout[-1500:]}{res.stderr[-1500:]}"
    assert "Traceback" not in res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, res.stderr
    return errors[0]


def _eval(cli: PreloadedCli, plugin: Path, run: Path) -> None:
    _ok(
        cli, "eval", "--plugin", str(plugin), "--dataset", "tally:3", "--agents", "toy-seeker",
        "--model", "toy/oracle", "--out", str(run), "--env-workers", "0", "--no-progress",
    )  # fmt: skip


def test_a_plugin_benchmarks_run_is_never_scored_by_other_rules(cli: PreloadedCli, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    plugin = home / "tally.py"
    plugin.write_text(TALLY, encoding="utf-8")
    run = home / "run"
    _eval(cli, plugin, run)

    config = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert config["benchmark"] == "tally"
    assert config["budget"] == 10
    assert config["plugins"] == ["../tally.py"]  # relative to the run: it moves with the folder
    assert config["plugin_sha256"] == {"../tally.py": file_sha256(plugin)}
    assert {q.benchmark for q in read_questions(run / "questions.jsonl")} == {"tally"}
    live = json.loads(_ok(cli, "score", str(run), "--json"))
    assert live["rules"] == {"inverted": 3}

    # The plugin file moves away: every reader stops with one line naming the plugin to pass,
    # where before `score` rescored the run by the answer contract and exited 0.
    moved = tmp_path / "elsewhere" / "tally.py"
    moved.parent.mkdir()
    plugin.rename(moved)
    for args in (("score", str(run)), ("report", str(run), "--out", str(tmp_path / "rep"), "--no-episodes")):
        line = _refused(cli, *args)
        assert "'tally'" in line and "../tally.py" in line and "--plugin" in line, line
    assert not (tmp_path / "rep").exists()
    # ... and the plugin passed where it is now scores it by its own rules again.
    res = cli.run("score", str(run), "--json", "--plugin", str(moved), cwd=ROOT)
    assert res.returncode == 0 and "note:" not in res.stderr, res.stderr  # the same file, moved
    again = json.loads(res.stdout)
    assert again["rules"] == {"inverted": 3}
    assert again["agents"] == live["agents"]

    # The run folder and its plugin moved together (another machine): found with no flag.
    other = tmp_path / "machine"
    shutil.copytree(home, other)
    shutil.copy(moved, other / "tally.py")
    assert json.loads(_ok(cli, "score", str(other / "run"), "--json"))["rules"] == {"inverted": 3}
    _ok(cli, "report", str(other / "run"), "--out", str(tmp_path / "rep2"), "--no-episodes")
    summary = json.loads((tmp_path / "rep2" / "summary.json").read_text(encoding="utf-8"))
    assert summary["runs"][0]["rules"] == "inverted"

    # A plugin file that changed since the run is named in a note.
    (other / "tally.py").write_text(TALLY + "\n# edited\n", encoding="utf-8")
    res = cli.run("score", str(other / "run"), cwd=ROOT)
    assert res.returncode == 0 and "../tally.py differs from the file the run was made with" in res.stderr


def test_a_run_saved_before_the_records_is_recognised_once_and_says_so(
    cli: PreloadedCli, tmp_path: Path
) -> None:
    plugin = tmp_path / "tally.py"
    plugin.write_text(TALLY, encoding="utf-8")
    run = tmp_path / "run"
    _eval(cli, plugin, run)
    # Rewrite the run as an older eviseek saved it: no benchmark in run.json or the questions,
    # the plugin as an absolute path.
    config = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for key in ("benchmark", "plugin_sha256", "replaced"):
        config.pop(key)
    config["plugins"] = [str(plugin)]
    (run / "run.json").write_text(json.dumps(config), encoding="utf-8")
    lines = (run / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    old = [json.dumps({k: v for k, v in json.loads(line).items() if k != "benchmark"}) for line in lines]
    (run / "questions.jsonl").write_text("\n".join(old) + "\n", encoding="utf-8")

    res = cli.run("score", str(run), "--json", cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["rules"] == {"inverted": 3}  # its dataset spec names tally
    assert "saved before benchmark records" in res.stderr

    # Its plugin gone, the old run's spec still names tally: refused, not recognised as another.
    plugin.unlink()
    line = _refused(cli, "score", str(run))
    assert "'tally'" in line and "--plugin" in line


def test_every_reader_refuses_a_run_whose_benchmark_is_not_registered(tmp_path: Path) -> None:
    """``score``, ``report`` and ``replay`` (in process here) stop with one line, exit 2."""
    from typer.testing import CliRunner

    from eviseek.cli.main import app

    from .synthetic import make_questions, write_run

    questions = make_questions(2)
    for q in questions:
        q.benchmark = "ghostbench"
    run = write_run(tmp_path / "run", "scripted/x", ["eviseek"], questions, lambda a, i: (True, 1.0, None))
    for args in (
        ["score", str(run)],
        ["report", str(run), "--no-episodes", "--out", str(tmp_path / "rep")],
        ["replay", str(run), "--out", str(tmp_path / "replayed"), "--model", "scripted/echo"],
    ):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        assert "'ghostbench', which is not registered here" in res.output and "--plugin" in res.output
    assert not (tmp_path / "rep").exists() and not (tmp_path / "replayed").exists()
