"""A bad value stops ``eviseek eval`` before the run folder exists (issue 36, finding 3): it exits
2 with one line and writes nothing, so the corrected command then starts the run afresh."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eviseek.errors import SettingError
from eviseek.eval.config import new_run_config
from eviseek.eval.runner import check_settings
from tests.cli.preloaded import PreloadedCli
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())


@pytest.fixture(scope="module")
def cli() -> Iterator[PreloadedCli]:
    with PreloadedCli() as preloaded:
        yield preloaded


def _eval(cli: PreloadedCli, data: Path, run: Path, *extra: str) -> tuple[int, str]:
    res = cli.run(
        "eval", "--plugin", PLUGIN, "--agents", "toy-passive", "--dataset", str(data), "--out", str(run),
        "--env-workers", "0", "--no-progress", *extra,
    )  # fmt: skip
    assert "Traceback" not in res.stderr, res.stderr
    return res.returncode, res.stderr


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (("--model", "scripted/echo", "--model-arg", "bogus=1"), "unknown setting(s) bogus"),
        (("--model", "nosuch/model"), "unknown model provider 'nosuch'"),
        (("--model", "scripted/echo", "--agents", "toy-passive:fast"), "takes no options"),
        (("--model", "scripted/echo", "--agents", "nosuch"), "unknown agent 'nosuch'"),
    ],
)
def test_a_bad_value_exits_2_and_writes_nothing_then_the_fix_runs(
    cli: PreloadedCli, tmp_path: Path, bad: tuple[str, ...], says: str
) -> None:
    data = tmp_path / "questions.jsonl"
    write_questions_jsonl(data, make_questions(2))
    run = tmp_path / "runs" / "x"
    code, err = _eval(cli, data, run, *bad)
    assert code == 2, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and says in errors[0], err
    assert not run.exists()
    code, err = _eval(cli, data, run, "--model", "scripted/echo")  # the corrected command
    assert code == 0, err
    assert (run / "run.json").exists()


def test_check_settings_reads_no_file_and_builds_no_model() -> None:
    config = new_run_config(
        agents=["passive"], model="reference", dataset="x.jsonl", model_args={"delay_s": 0}
    )
    check_settings(config)
    bad = config.model_copy(update={"model_args": {"delay_s": "soon"}})
    with pytest.raises(SettingError, match="delay_s"):
        check_settings(bad)
    with pytest.raises(SettingError, match="passive:nosuch"):
        check_settings(config.model_copy(update={"agents": ["passive:nosuch"]}))
