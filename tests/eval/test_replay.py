"""eviseek replay: answer-only replays of recorded EviSeek episodes into a resumable run directory,
and the report's Table 3 shape (accuracy change against the board replay)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.errors import ConfigError
from eviseek.eval.replay import parse_variants
from eviseek.eval.report import build_report
from eviseek.eval.store import ResultsStore
from eviseek.testing import OpenAITestServer, request_images, request_texts
from eviseek.types import AnswerContract, Question
from eviseek.types.question_file import write_questions
from tests.agents.eviseek.test_agent import run, standard_script

N = 4


def _questions() -> list[Question]:
    return [
        Question(
            id=f"grid-{i}",
            text="Is the red cube to the left of the blue box?",
            contract=AnswerContract(kind="option", options=["yes", "no"]),
            ground_truth="yes",
        )
        for i in range(N)
    ]


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A run directory with four real EviSeek episodes (scripted model, grid world)."""
    run_dir = tmp_path / "run"
    questions = _questions()
    run_dir.mkdir()
    write_questions(run_dir, questions)
    (run_dir / "run.json").write_text(
        json.dumps({"agents": ["eviseek"], "model": "scripted", "dataset": "x"})
    )
    for q in questions:
        traj = asyncio.run(run(q, standard_script()))
        traj.save(run_dir / "episodes" / "eviseek" / q.id)
    return run_dir


def _answer(body: dict) -> str:  # type: ignore[type-arg]
    # Board replays send the board's two kept frames and answer right; the other memories send
    # more frames and, in this script, answer wrong.
    return json.dumps({"answer": "yes" if len(request_images(body)) == 2 else "no"})


def test_replay_cli_resumes_and_the_report_shows_table_3(recorded: Path, tmp_path: Path) -> None:
    out = tmp_path / "replay"
    with OpenAITestServer(_answer) as srv:
        args = ["replay", str(recorded), "--out", str(out), "--model", "openai/m", "--base-url", srv.base_url]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert f"replayed {3 * N} answer(s)" in res.output
        asked = len(srv.chat_requests)
        assert asked == 3 * N  # one answering call per replay: nothing is explored again
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0 and "replayed 0 answer(s)" in again.output
        assert len(srv.chat_requests) == asked  # finished replays are never asked again
        # no_board sees Single-model's memory: the whole text history.
        histories = [b for b in srv.chat_requests if "Step 1:" in " ".join(request_texts(b))]
        assert histories
    with ResultsStore(out, create=False) as store:
        stored = store.results()
    assert len(stored) == 3 * N and all(r.correct is not None for r in stored)  # scored when stored
    files = build_report([out], n_resamples=500, episodes=False)
    pairs = [(t.a, t.b) for t in files.data.comparisons]
    assert pairs == [
        ("eviseek-replay-no_board", "eviseek-replay-board"),
        ("eviseek-replay-no_selective_retention", "eviseek-replay-board"),
    ]
    overall = next(r for r in files.data.accuracy if r.level == "overall")
    assert overall.acc["eviseek-replay-board"] == 100.0
    assert (
        overall.acc["eviseek-replay-no_board"] == overall.acc["eviseek-replay-no_selective_retention"] == 0.0
    )
    for t in files.data.comparisons:
        assert t.delta == overall.acc[t.a] - 100.0 and t.p is not None and t.low <= t.delta <= t.high


def test_replay_refuses_bad_input(recorded: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown no_demands"):
        parse_variants("board,no_demands")
    assert parse_variants("no_board,board") == ["board", "no_board"]
    same = CliRunner().invoke(app, ["replay", str(recorded), "--out", str(recorded), "--model", "reference"])
    assert same.exit_code == 2 and "new folder" in same.output
    other = CliRunner().invoke(
        app, ["replay", str(recorded), "--out", str(tmp_path / "o"), "--model", "reference", "--agent", "x"]
    )
    assert other.exit_code == 2 and "no recorded 'x' episodes" in other.output


def test_a_question_without_an_online_episode_counts_as_incorrect_in_the_replay(
    recorded: Path, tmp_path: Path
) -> None:
    import shutil

    # The online episode of grid-3 failed and left nothing: the replay keeps it in the denominator.
    shutil.rmtree(recorded / "episodes" / "eviseek" / "grid-3")
    out = tmp_path / "replay"
    with OpenAITestServer(_answer) as srv:
        args = ["replay", str(recorded), "--out", str(out), "--variants", "board"]
        args += ["--model", "openai/m", "--base-url", srv.base_url]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert len(srv.chat_requests) == N - 1  # nothing to ask for the missing episode
    with ResultsStore(out, create=False) as store:
        stored = {r.question_id: r for r in store.results()}
    assert (
        len(stored) == N
        and not stored["grid-3"].correct
        and "no recorded online" in str(stored["grid-3"].error)
    )
    overall = next(
        r for r in build_report([out], n_resamples=100, episodes=False).data.accuracy if r.level == "overall"
    )
    assert overall.acc["eviseek-replay-board"] == 75.0 and overall.n["eviseek-replay-board"] == N


def test_replay_answers_with_the_runs_own_model_unless_told(recorded: Path, tmp_path: Path) -> None:
    with OpenAITestServer(_answer) as srv:
        config = json.loads((recorded / "run.json").read_text())
        config.update(model="openai/recorded-model", base_url=srv.base_url)
        (recorded / "run.json").write_text(json.dumps(config))
        res = CliRunner().invoke(
            app, ["replay", str(recorded), "--out", str(tmp_path / "r"), "--variants", "board"]
        )
        assert res.exit_code == 0, res.output
        assert "the run's own model, openai/recorded-model" in res.output
        assert {b["model"] for b in srv.chat_requests} == {"recorded-model"}
    config.update(model="unknown")
    (recorded / "run.json").write_text(json.dumps(config))
    bad = CliRunner().invoke(app, ["replay", str(recorded), "--out", str(tmp_path / "r2")])
    assert bad.exit_code == 1 and "--model" in bad.output
