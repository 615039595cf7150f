"""What ``eval``, ``score`` and ``report`` do when things go wrong from outside: a server that is
down, failed episodes, a lost, emptied or damaged ``results.sqlite``, a ``--out`` that names a
file. One line per failure, a truthful exit code, and nothing finished is ever run again."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eviseek.cli.main import app
from eviseek.eval.store import load_results
from eviseek.testing import OpenAITestServer, ServerReply
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())
AGENTS = "toy-seeker,toy-passive"
KEY = "sk-fail-7Hq2secret"
ROOT = Path(__file__).resolve().parents[2]


def _eval(data: Path, run: Path, *extra: str, model: str = "toy/oracle") -> list[str]:
    return [
        "eval", "--plugin", PLUGIN, "--agents", AGENTS, "--model", model, "--dataset", str(data),
        "--out", str(run), "--concurrency", "4", "--env-workers", "0", "--no-progress", *extra,
    ]  # fmt: skip


def _one_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture
def finished_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A finished toy run of 2 agents x 3 questions; returns (dataset, run, episode log)."""
    data = write_questions_jsonl(tmp_path / "questions.jsonl", make_questions(3))
    run = tmp_path / "run"
    log = tmp_path / "starts.log"
    monkeypatch.setenv("TOY_EPISODE_LOG", str(log))
    res = CliRunner().invoke(app, _eval(data, run))
    assert res.exit_code == 0, res.output
    assert len(log.read_text().splitlines()) == 6
    return data, run, log


def _trajectory_stamps(run: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in sorted((run / "episodes").rglob("trajectory.json"))}


# -- item 1: the model is checked first; failed episodes give a non-zero exit code -----------


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_unreachable_server_stops_before_the_first_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(2))
    log = tmp_path / "starts.log"
    monkeypatch.setenv("TOY_EPISODE_LOG", str(log))
    # A real process: what a user sees on the terminal, retry warnings included.
    args = _eval(data, tmp_path / "run", "--base-url", _dead_url(), model="openai/m")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TOY_EPISODE_LOG": str(log)}
    res = subprocess.run(
        [sys.executable, "-m", "eviseek", *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 1, res.stderr
    line = _one_line(res.stderr)
    assert line.startswith("error: model check before the first episode failed") and "unreachable" in line
    assert not log.exists()  # no episode started, none recorded as failed


def test_a_refused_key_stops_before_the_first_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(2))
    monkeypatch.setenv("MY_KEY", KEY)
    with OpenAITestServer([ServerReply.error(401, f"Incorrect API key provided: {KEY}")]) as srv:
        flags = ["--base-url", srv.base_url, "--api-key-env", "MY_KEY"]
        res = CliRunner().invoke(app, _eval(data, tmp_path / "run", *flags, model="openai/m"))
    assert res.exit_code == 1, res.output
    line = _one_line(res.stderr)
    assert "HTTP 401" in line and KEY not in res.output
    assert len(srv.requests) == 1


def test_a_run_with_failed_episodes_exits_non_zero_and_says_where_the_reasons_are(tmp_path: Path) -> None:
    special = {"q001": {"agent_crash": True}}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(3, special=special))
    run = tmp_path / "run"
    res = CliRunner().invoke(app, _eval(data, run))
    assert res.exit_code == 3, res.output
    line = _one_line(res.stderr)
    assert line.startswith("error: 2 of 6 episode(s) failed")
    assert "results.sqlite" in line and "agent bug on q001" in line and "--retry-failed" in line
    # Resuming changes nothing: the run still holds failed episodes, so it still says so.
    again = CliRunner().invoke(app, ["eval", "--out", str(run), "--plugin", PLUGIN, "--no-progress"])
    assert again.exit_code == 3, again.output


# -- item 2: a lost or emptied store is rebuilt from the trajectories, never re-run ------------


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_lost_store_is_rebuilt_from_trajectories_not_rerun(
    finished_run: tuple[Path, Path, Path], damage: str
) -> None:
    data, run, log = finished_run
    before = load_results(run)
    stamps = _trajectory_stamps(run)
    store = run / "results.sqlite"
    if damage == "deleted":
        store.unlink()
    else:
        store.write_bytes(b"")
    res = CliRunner().invoke(app, _eval(data, run))
    assert res.exit_code == 0, res.output
    assert "6 finished episode(s) had no row in results.sqlite" in res.stderr
    assert "0 episode(s) run, 6 already finished" in res.stdout
    assert len(log.read_text().splitlines()) == 6  # no episode started again
    assert _trajectory_stamps(run) == stamps  # no trajectory rewritten
    key = lambda r: (r.agent, r.question_id)  # noqa: E731
    assert sorted(load_results(run), key=key) == sorted(before, key=key)


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
def test_score_and_report_read_the_trajectories_when_the_store_is_lost(
    finished_run: tuple[Path, Path, Path], damage: str, tmp_path: Path
) -> None:
    _, run, _ = finished_run
    live = json.loads(CliRunner().invoke(app, ["score", str(run), "--json"]).stdout)
    store = run / "results.sqlite"
    if damage == "deleted":
        store.unlink()
    else:
        store.write_bytes(b"")
    score = CliRunner().invoke(app, ["score", str(run), "--json"])
    assert score.exit_code == 0, score.output
    assert json.loads(score.stdout) == live
    assert "read from their saved trajectories" in score.stderr and "--rebuild" in score.stderr
    report = CliRunner().invoke(
        app, ["report", str(run), "--out", str(tmp_path / "rep"), "--resamples", "100", "--no-episodes"]
    )
    assert report.exit_code == 0, report.output
    assert "over 3 questions" in report.stdout
    # --rebuild writes the store back; afterwards no note is needed.
    rebuilt = CliRunner().invoke(app, ["score", str(run), "--rebuild", "--json"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "rebuilt" in rebuilt.stderr and len(load_results(run)) == 6
    assert json.loads(rebuilt.stdout) == live


# -- item 4: a damaged store: one line naming the file and the recovery command -------------


def test_damaged_store_gives_one_line_and_rebuild_recovers_it(
    finished_run: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    data, run, log = finished_run
    live = json.loads(CliRunner().invoke(app, ["score", str(run), "--json"]).stdout)
    store = run / "results.sqlite"
    store.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)  # a header, then garbage
    recovery = f"eviseek score {run} --rebuild"
    for args in (
        _eval(data, run),
        ["score", str(run)],
        ["report", str(run), "--out", str(tmp_path / "rep"), "--resamples", "100", "--no-episodes"],
    ):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, (args, res.output)
        line = _one_line(res.stderr)
        assert str(store) in line and recovery in line, line
        assert res.exception is None or isinstance(res.exception, SystemExit)
    assert len(log.read_text().splitlines()) == 6
    rebuilt = CliRunner().invoke(app, ["score", str(run), "--rebuild", "--json"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert json.loads(rebuilt.stdout) == live
    kept = [p.name for p in run.iterdir() if p.name.startswith("results.sqlite.damaged-")]
    assert kept, "the damaged file must be kept aside, not deleted"
    again = CliRunner().invoke(app, _eval(data, run))
    assert again.exit_code == 0 and "6 already finished" in again.stdout
    assert len(log.read_text().splitlines()) == 6


# -- item 6: --out naming a file -------------------------------------------------------------


def test_out_naming_an_existing_file_is_one_line(
    finished_run: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    data, run, _ = finished_run
    afile = tmp_path / "a-file.txt"
    afile.write_text("not a folder")
    for args in (_eval(data, afile), ["report", str(run), "--out", str(afile), "--no-episodes"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, (args, res.output)
        line = _one_line(res.stderr)
        assert line == f"error: --out {afile} is a file; give a folder (a new one is created)"
    assert afile.read_text() == "not a folder"


# -- item 5: read-only storage ---------------------------------------------------------------


def _on_read_only_storage(folder: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``eviseek ARGS`` with ``folder`` on read-only storage.

    As root, file modes do not stop writes, so ``folder`` is bind-mounted read-only in a private
    mount namespace; otherwise taking the write bits away is enough.
    """
    cmd = [sys.executable, "-m", "eviseek", *args]
    if os.geteuid() == 0:
        mount = 'mount --bind -o ro "$0" "$0" && exec "$@"'
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", mount, str(folder), *cmd]
    else:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def _read_only_works(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    cmd = [sys.executable, "-c", f"open({str(probe / 'x')!r}, 'w')"]
    if os.geteuid() == 0:
        mount = 'mount --bind -o ro "$0" "$0" && exec "$@"'
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", mount, str(probe), *cmd]
    else:
        probe.chmod(0o555)
    if subprocess.run(cmd, capture_output=True).returncode == 0:
        why = "cannot make read-only storage here (root without a private mount namespace)"
        if os.environ.get("EVISEEK_FULL_TEST"):
            pytest.fail(why)
        pytest.skip(why)
    probe.chmod(0o755)


def test_a_finished_run_on_read_only_storage_can_be_scored_and_reported(
    finished_run: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _read_only_works(tmp_path)
    _, run, _ = finished_run
    live = json.loads(CliRunner().invoke(app, ["score", str(run), "--json"]).stdout)
    # A store closed uncleanly keeps its last changes in the write-ahead log: those must be read
    # too. Here the log deletes one row, which `score` then reads from its trajectory and says so.
    con = sqlite3.connect(run / "results.sqlite", isolation_level=None)
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("DELETE FROM results WHERE rowid = (SELECT MIN(rowid) FROM results)")
    frozen = tmp_path / "frozen"
    shutil.copytree(run, frozen)  # the copy holds a -wal file with the last two changes
    con.close()
    assert (frozen / "results.sqlite-wal").stat().st_size > 0

    score = _on_read_only_storage(frozen, ["score", str(frozen), "--json"])
    assert score.returncode == 0, score.stderr
    assert json.loads(score.stdout) == live
    assert "note: 1 finished episode(s) were read from their saved trajectories" in score.stderr
    out = tmp_path / "report-elsewhere"
    report = _on_read_only_storage(
        frozen, ["report", str(frozen), "--out", str(out), "--resamples", "100", "--no-episodes"]
    )
    assert report.returncode == 0, report.stderr
    assert (out / "index.html").is_file()
    for args in (
        ["eval", "--out", str(frozen), "--plugin", PLUGIN, "--no-progress"],
        ["view", str(frozen)],
        ["report", str(frozen), "--resamples", "100", "--no-episodes"],
    ):
        res = _on_read_only_storage(frozen, args)
        assert res.returncode == 1, (args, res.stderr)
        line = _one_line(res.stderr)
        # eval's errors are the CLI boundary's ("cannot finish `eviseek eval`: ..."), view's and
        # report's their own ("cannot write ..."); each names the read-only storage.
        assert line.startswith(("error: cannot write", "error: cannot finish")), line
        assert "Read-only file system" in line, line


# -- item 10: a report of failed episodes says so at the top, and why --------------------------


def test_report_of_a_run_whose_episodes_all_failed_warns_at_the_top_with_the_reason(
    tmp_path: Path,
) -> None:
    special = {f"q{i:03d}": {"agent_crash": True} for i in range(2)}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(2, special=special))
    run = tmp_path / "run"
    assert CliRunner().invoke(app, _eval(data, run)).exit_code == 3
    out = tmp_path / "rep"
    args = ["report", str(run), "--out", str(out), "--resamples", "100", "--no-episodes"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    note = next(line for line in res.stdout.splitlines() if "failed" in line)
    assert "every episode failed" in note and "RuntimeError: agent bug on q00" in note
    html = (out / "index.html").read_text(encoding="utf-8")
    first = html.index('data-testid="warning"')
    assert first < html.index('id="runs"')  # above everything else
    assert "every episode failed" in html[first : first + 600]
    assert "every episode failed" in (out / "report.md").read_text(encoding="utf-8").split("| Run |")[0]
