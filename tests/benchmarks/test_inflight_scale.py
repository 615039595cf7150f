"""benchmarks/inflight_scale.py still runs end to end (a tiny level: 4 in flight, short latency).

The figures it prints are measured on an idle machine by hand; this only keeps the script, its
model stand-in and its timeline working as the runner changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "inflight_scale.py"


def test_a_tiny_level_runs_and_reports_its_waits(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    proc = subprocess.run(
        [
            *(sys.executable, str(SCRIPT), "--levels", "4", "--latency", "0.2", "--waves", "2"),
            *("--env-workers", "1", "--timeline", "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (row,) = json.loads(out.read_text())
    assert row["episodes"] == 8 and row["concurrency"] == 4
    assert 0 < row["share"] <= 1.05
    # Three model calls per episode, each at least the latency asked for.
    assert row["timeline"]["model"][0] >= 0.2
    assert row["wall_s"] >= 2 * 3 * 0.2
    assert "in flight 4: waits" in proc.stdout
    # How busy the machine and the harness's processes were while the first wave started.
    start = row["timeline"]["first wave's start"]
    assert 0 < start < row["wall_s"]
    for window in ("CPUs busy then", "CPUs busy over the run"):
        busy = row["timeline"][window]
        assert set(busy) == {"machine", "driver", "env workers"}, busy
        assert 0 <= busy["machine"] <= 1 and busy["driver"] >= 0 and busy["env workers"] >= 0
