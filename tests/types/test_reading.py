"""Readers check a file's size before reading it: a damaged or hostile file is one error line,
never gigabytes of memory (the report once took 2.2 GB on a 1 GiB trajectory before failing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eviseek.errors import ConfigError, SettingError
from eviseek.types.reading import MiB, read_text_capped
from tests.viewer.synthetic import write_synthetic_run


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)  # no disk used: the size alone is what is checked
    return path


def test_a_file_over_the_limit_is_refused_by_its_size(tmp_path: Path) -> None:
    big = _sparse(tmp_path / "trajectory.json", 10 * MiB)
    with pytest.raises(ConfigError, match=r"is 10\.0 MiB, more than the 1 MiB a trajectory may hold"):
        read_text_capped(big, MiB, "a trajectory")
    (tmp_path / "ok.json").write_text('{"a": "é"}', encoding="utf-8")
    assert read_text_capped(tmp_path / "ok.json", MiB, "a trajectory") == '{"a": "é"}'
    (tmp_path / "latin1.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(SettingError, match="not UTF-8 text"):
        read_text_capped(tmp_path / "latin1.json", MiB, "a question file", SettingError)


def test_report_on_a_1_gib_trajectory_is_one_line_in_little_memory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_synthetic_run(run)  # no results.sqlite: the report reads the trajectories
    trajectory = next(run.glob("episodes/*/*/trajectory.json"))
    _sparse(trajectory, 1 << 30)
    peak = tmp_path / "maxrss"
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['eviseek', 'report', {str(run)!r}, '--no-episodes', '--resamples', '10']\n"
        "try:\n"
        "    runpy.run_module('eviseek', run_name='__main__', alter_sys=True)\n"
        "finally:\n"
        # VmHWM, not ru_maxrss: ru_maxrss survives exec, so it would report the forking pytest
        # worker's size (1.7 GB in one CI run); VmHWM belongs to this program's own memory map.
        f"    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        f"    open({str(peak)!r}, 'w').write(hwm)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env={**os.environ}
    )
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "1,024.0 MiB" in lines[0], lines
    assert int(peak.read_text()) < 400_000  # KiB: far below the file's size (it was 2.2 GB)
