"""The results store: one durable row per episode, intact after kill -9 in the middle of writes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.eval.store import DuplicateResultError, ResultsStore, episode_dir, load_results, safe_name
from eviseek.types import EpisodeResult


def _result(qid: str, agent: str = "a", correct: bool = True, error: str | None = None) -> EpisodeResult:
    return EpisodeResult(question_id=qid, agent=agent, correct=correct, score=float(correct), error=error)


def test_add_results_and_keys(tmp_path: Path) -> None:
    with ResultsStore(tmp_path) as store:
        store.add(_result("q1"))
        store.add(_result("q2", correct=False, error="TimeoutError: slow"))
        store.add(_result("q1", agent="b"))
        assert len(store) == 3
        assert store.done_keys() == {("a", "q1"), ("a", "q2"), ("b", "q1")}
        assert store.failed_keys() == {("a", "q2")}
        assert [r.question_id for r in store.results("a")] == ["q1", "q2"]
        mode = sqlite3.connect(tmp_path / "results.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
    assert [r.agent for r in load_results(tmp_path)] == ["a", "a", "b"]


def test_duplicate_is_refused_unless_replacing(tmp_path: Path) -> None:
    with ResultsStore(tmp_path) as store:
        store.add(_result("q1", correct=False, error="boom"))
        with pytest.raises(DuplicateResultError, match="must not run twice"):
            store.add(_result("q1"))
        store.add(_result("q1"), replace=True)
        (row,) = store.results()
        assert row.correct and row.error is None and store.failed_keys() == set()


def test_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no episode of this run has finished"):
        load_results(tmp_path)


def test_episode_dir_names_are_safe_and_distinct(tmp_path: Path) -> None:
    assert episode_dir(tmp_path, "eviseek", "q_001") == tmp_path / "episodes" / "eviseek" / "q_001"
    odd = {safe_name(x) for x in ("a/b", "a:b", "../x", "a b")}
    assert len(odd) == 4
    assert all("/" not in n and not n.startswith(".") for n in odd)


_WRITER = """
import sys
from eviseek.eval.store import ResultsStore
from eviseek.types import EpisodeResult
store = ResultsStore(sys.argv[1])
big = "x" * 20000  # a large row makes a kill during the write likely
i = 0
while True:
    store.add(EpisodeResult(question_id=f"q{i:06d}", agent="a", raw_answer=big, correct=i % 2 == 0))
    print(i, flush=True)
    i += 1
"""


def test_kill_9_during_writes_leaves_only_whole_rows(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    printed = -1
    deadline = time.monotonic() + 30
    while printed < 40 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        printed = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for line in proc.stdout.read().splitlines():  # lines printed before the kill, still in the pipe
        printed = int(line)
    assert printed >= 40, "the writer did not get going"
    with ResultsStore(tmp_path) as store:
        assert store.integrity_check() == "ok"
        rows = store.results()
    # Every commit that returned is there; at most one more committed before its print.
    assert printed + 1 <= len(rows) <= printed + 2
    assert [r.question_id for r in rows] == [f"q{i:06d}" for i in range(len(rows))]
    assert all(len(r.raw_answer or "") == 20000 for r in rows)


def test_read_only_open_reads_an_empty_file_and_names_a_damaged_one(tmp_path: Path) -> None:
    from eviseek.eval.store import StoreDamagedError

    (tmp_path / "results.sqlite").write_bytes(b"")
    with ResultsStore(tmp_path, read_only=True) as store:
        assert store.results() == [] and len(store) == 0
    assert (tmp_path / "results.sqlite").read_bytes() == b""  # reading wrote nothing
    (tmp_path / "results.sqlite").write_bytes(b"not a database at all" * 100)
    for read_only in (True, False):
        with pytest.raises(StoreDamagedError, match=r"--rebuild"):
            ResultsStore(tmp_path, read_only=read_only).results()
