"""A model provider that only a ``--plugin`` registers works from a fresh ``eviseek eval`` process.

The in-process CLI tests import the toy plugin themselves, so its provider is known before the
command runs; only a new process shows whether ``eval`` imports the plugins before it checks the
model (it once checked first and refused ``toy/...`` as an unknown provider).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.eval import toy_plugin

PLUGIN = str(Path(toy_plugin.__file__).resolve())
ROOT = Path(__file__).resolve().parents[2]


def test_eval_knows_a_provider_registered_by_a_plugin(tmp_path: Path) -> None:
    data = toy_plugin.write_questions_jsonl(tmp_path / "q.jsonl", toy_plugin.make_questions(2))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    args = ["eval", "--plugin", PLUGIN, "--dataset", str(data), "--agents", "toy-seeker"]
    args += ["--model", "toy/oracle", "--out", str(tmp_path / "run"), "--no-progress", "--env-workers", "0"]
    proc = subprocess.run(
        [sys.executable, "-m", "eviseek", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 episode(s) run" in proc.stdout
