"""The whole learning run on one seed that no config was tuned on (seed 5), goals checked.

A seed takes about 30 minutes on two idle cores, more than CI's whole budget, so this runs only
when ``EVISEEK_LEARNING_SEED`` is set (to the seed to check; ``5`` is the one reserved for it):

    EVISEEK_LEARNING_SEED=5 .venv/bin/python -m pytest -q tests/scripts/test_learning_seed.py

Seeds 0 (the committed report), 1 (an outside rerun), and 2-4 (the across-seeds table in
docs/autotool_learning_in_depth.md) have been looked at; 5 has not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from autotool_learning.report import check_goals, load_results

ROOT = Path(__file__).resolve().parents[2]
SEED = os.environ.get("EVISEEK_LEARNING_SEED")


@pytest.mark.slow
@pytest.mark.skipif(not SEED, reason="a whole learning-run seed (~30 min): set EVISEEK_LEARNING_SEED=5")
def test_one_untuned_seed_meets_the_learning_goals(tmp_path: Path) -> None:
    out = tmp_path / f"s{SEED}"
    cmd = [sys.executable, str(ROOT / "scripts/autotool_learning_run.py"), "--seed", str(SEED)]
    cmd += ["--variants", "autotool", "--heldout", "48", "--jobs", "1", "--out", str(out)]
    cmd += ["--report", str(tmp_path / "report.md")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3 * 3600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    warmup, warm, results = load_results(out)
    assert warmup is not None and warmup.crop_check_passed, warmup
    goals = check_goals(warm, results)
    summary = json.dumps([g.model_dump() for g in goals], indent=1)
    # tool-on >= 0.8 on need-zoom, <= 0.3 on no-need, accuracy >= the warm-up's best fixed way.
    assert all(g.met for g in goals[:3]), summary
