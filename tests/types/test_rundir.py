"""RunDir: the one owner of a run directory's layout, its lock and the atomic writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.errors import ConfigError
from eviseek.eval.store import episode_dir
from eviseek.types.rundir import RunDir, atomic_file, write_atomic


def test_layout_names_every_file_of_a_run(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    assert run.run_file == tmp_path / "run.json" and run.store_file == tmp_path / "results.sqlite"
    assert run.questions_file == tmp_path / "questions.jsonl" and run.lock_file == tmp_path / ".lock"
    assert run.support_file.name == "support.jsonl" and run.express_file.name == "express.jsonl"
    ep = run.episode_dir("eviseek", "a/b")
    assert ep.parent == tmp_path / "episodes" / "eviseek" and ep.name.startswith("a_b-")
    assert ep == episode_dir(tmp_path, "eviseek", "a/b")  # the store's name for the same folder
    assert run.trajectory_file("eviseek", "q1") == tmp_path / "episodes/eviseek/q1/trajectory.json"
    assert run.judge_dir(run.episode_dir("eviseek", "q1")) == tmp_path / "judge/eviseek/q1"


def test_read_config_has_one_error_type(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    assert not run.exists()
    with pytest.raises(ConfigError, match=r"run\.json is missing"):
        run.read_config()
    write_atomic(run.run_file, "{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        run.read_config()
    write_atomic(run.run_file, "[1]")
    with pytest.raises(ConfigError, match="JSON object"):
        run.read_config()
    run.write_config('{"model": "m"}')
    assert run.exists() and run.read_config() == {"model": "m"}


def test_atomic_writer_keeps_the_old_file_when_the_write_fails(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "f.txt"
    write_atomic(path, "old")
    with pytest.raises(RuntimeError), atomic_file(path) as fh:
        fh.write("half")
        raise RuntimeError("stopped mid-write")
    assert path.read_text() == "old" and [p.name for p in path.parent.iterdir()] == ["f.txt"]
    write_atomic(path, b"\x00new")
    assert path.read_bytes() == b"\x00new"


def test_lock_refuses_a_second_holder(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    second = RunDir(run.path)
    with run.lock(), pytest.raises(ConfigError, match="another eviseek eval is writing"), second.lock():
        pass
    with run.lock():  # released
        pass
