"""``eviseek eval`` and ``eviseek score`` as a user runs them, including a kill -9 mid-run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.eval.recover import all_saved_results
from eviseek.eval.scoring import summarize
from eviseek.eval.store import load_results
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())
AGENTS = ("toy-seeker", "toy-passive")


def _cmd(data: Path, run: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "eviseek", "eval",
        "--plugin", PLUGIN,
        "--agents", ",".join(AGENTS),
        "--model", "toy/oracle",
        "--model-arg", "delay_s=0.1",
        "--dataset", str(data),
        "--out", str(run),
        "--concurrency", "4",
        "--env-workers", "2",
        "--no-progress",
        *extra,
    ]  # fmt: skip


def _rows(run: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{run / 'results.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0  # not created yet


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_killed_run_resumes_with_every_episode_exactly_once(tmp_path: Path) -> None:
    data = write_questions_jsonl(tmp_path / "questions.jsonl", make_questions(30))
    run = tmp_path / "run"
    log = tmp_path / "episodes.log"
    env = {**os.environ, "TOY_EPISODE_LOG": str(log)}
    proc = subprocess.Popen(_cmd(data, run), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _rows(run) < 12 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    committed = {(r.agent, r.question_id) for r in load_results(run)}
    assert 12 <= len(committed) < 60
    # The environment workers notice their parent is gone and exit.
    assert workers, "the run had no environment worker processes"
    end = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)

    # An episode killed after its trajectory was saved but before its row was committed has
    # finished: the resume commits it from the trajectory instead of running it again.
    saved = {(r.agent, r.question_id) for r in all_saved_results(run)}
    finished = committed | saved
    done = subprocess.run(_cmd(data, run), env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(finished)} already finished" in done.stdout
    rows = load_results(run)
    keys = [(r.agent, r.question_id) for r in rows]
    every = {(a, q.id) for q in make_questions(30) for a in AGENTS}
    assert len(keys) == len(set(keys)) == 60 and set(keys) == every
    # The rerun started exactly the episodes without a row; no finished episode ran again.
    starts = [line.split() for line in log.read_text().splitlines()]
    rerun = [(a, q) for pid, a, q in starts if pid != str(proc.pid)]
    assert len(rerun) == len(set(rerun)) and set(rerun) == every - finished

    score = CliRunner().invoke(app, ["score", str(run), "--json"])
    assert score.exit_code == 0, score.output
    scored = json.loads(score.stdout)
    assert scored.pop("rules") == {"contract": len(rows) // len(AGENTS)}  # the rule set in force
    assert scored == json.loads(summarize(rows, AGENTS).model_dump_json())
    assert score.stderr == ""  # no changed verdicts, no missing trajectories

    # The table form puts families in rows and agents in columns, so a log stays readable.
    table = CliRunner().invoke(app, ["score", str(run)])
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert max(len(line) for line in lines) <= 140
    header = next(line for line in lines if "family" in line)
    assert all(agent in header for agent in AGENTS)
    assert any(line.strip("│ ").startswith("Overall") for line in lines)


def test_cli_refuses_a_resume_with_other_settings(tmp_path: Path) -> None:
    data = write_questions_jsonl(tmp_path / "questions.jsonl", make_questions(2))
    run = tmp_path / "run"
    runner = CliRunner()
    first = runner.invoke(app, _cmd(data, run, "--env-workers", "0")[3:])
    assert first.exit_code == 0, first.output
    assert "4 episode(s) run, 0 already finished, 0 failed" in first.stdout
    again = runner.invoke(app, _cmd(data, run, "--budget", "5", "--seed", "3")[3:])
    assert again.exit_code == 1
    assert "budget: the run directory has 30, this command asks for 5" in again.stderr
    assert "seed: the run directory has 0, this command asks for 3" in again.stderr
    assert again.exception is None or isinstance(again.exception, SystemExit)
    # Only --out: resume with the saved settings (nothing left to run).
    resumed = runner.invoke(app, ["eval", "--out", str(run), "--no-progress"])
    assert resumed.exit_code == 0, resumed.output
    assert "0 episode(s) run, 4 already finished" in resumed.stdout


def test_bare_out_resume_refuses_a_changed_result_setting(tmp_path: Path) -> None:
    # `eviseek eval --out RUN --budget 5` used to drop --budget silently and rerun the saved
    # budget; a setting that changes results must be refused by name, as with a full command.
    data = write_questions_jsonl(tmp_path / "questions.jsonl", make_questions(2))
    run = tmp_path / "run"
    runner = CliRunner()
    first = runner.invoke(app, _cmd(data, run, "--env-workers", "0")[3:])
    assert first.exit_code == 0, first.output
    base = ["eval", "--out", str(run), "--plugin", PLUGIN, "--no-progress"]
    changed = runner.invoke(app, [*base, "--budget", "5", "--seed", "3", "--limit", "1"])
    assert changed.exit_code == 1, changed.output
    assert "budget: the run directory has 30, this command asks for 5" in changed.stderr
    assert "seed: the run directory has 0, this command asks for 3" in changed.stderr
    assert "limit: the run directory has None, this command asks for 1" in changed.stderr
    args = runner.invoke(app, [*base, "--agent-arg", "x=1"])
    assert args.exit_code == 1, args.output
    assert "agent_config: the run directory has {}, this command asks for {'x': 1}" in args.stderr
    # The saved values given again are no change: the run resumes with nothing left to do.
    same = runner.invoke(app, [*base, "--budget", "30", "--seed", "0", "--model-arg", "delay_s=0.1"])
    assert same.exit_code == 0, same.output
    assert "0 episode(s) run, 4 already finished" in same.stdout
