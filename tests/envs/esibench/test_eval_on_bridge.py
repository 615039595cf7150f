"""``eviseek eval --dataset esibench:PATH`` end to end: env workers host the bridge (on the stand-in
runner, since OmniGibson cannot run here), a real OpenAI-protocol server answers, and the run is
scored with ESI-Bench's rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eviseek.eval.rundir import load_run
from eviseek.testing.openai_server import OpenAITestServer
from tests.envs.esibench.conftest import standin_checkout
from tests.eval.esibench.conftest import FIXTURES

pytestmark = pytest.mark.slow


def test_passive_and_single_model_run_through_eval(tmp_path: Path) -> None:
    reply = json.dumps({"action": "stop", "answer": "no", "confidence": 0.9, "reasoning": "seen"})
    run = tmp_path / "run"
    env = {
        **os.environ,
        "ESI_BENCH_ROOT": str(standin_checkout(tmp_path)),
        "ESI_BENCH_STEPS": str(tmp_path / "steps"),
        "TEST_KEY": "sk-test",
        "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src"),
    }
    with OpenAITestServer([reply] * 64) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "eviseek",
                "eval",
                "--dataset",
                f"esibench:{FIXTURES}",
                "--agents",
                "passive,single_model",
                "--model",
                "openai/test-model",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "TEST_KEY",
                "--out",
                str(run),
                "--env-workers",
                "1",
                "--concurrency",
                "2",
                "--limit",
                "4",
                "--no-progress",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    data = load_run(run)
    assert set(data.results) == {"passive", "single_model"}, data.results.keys()
    for agent in ("passive", "single_model"):
        results = data.results[agent]
        assert len(results) == 4 and all(r.error is None for r in results.values()), results
    # ESI-Bench's rules scored them: "no" is right only where the truth is no (Physical Contact is
    # not among the first four; Counting scores "no" as a wrong count with no soft score).
    assert {r.correct for r in data.results["single_model"].values()} == {False}
    assert (tmp_path / "steps").is_dir()  # the bridge's step images were written where asked

    official = tmp_path / "official"
    with OpenAITestServer([reply] * 8) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "eviseek",
                "eval",
                "--dataset",
                f"esibench:{FIXTURES}",
                "--agents",
                "single_model",
                "--agent-arg",
                "esibench_hooks=true",
                "--model",
                "openai/test-model",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "TEST_KEY",
                "--out",
                str(official),
                "--env-workers",
                "1",
                "--limit",
                "2",
                "--no-progress",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        check, *prompts = [json.dumps(r) for r in server.chat_requests]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Reply with the word OK." in check  # eval checks an openai/ model before the first episode
    assert len(prompts) == 2 and all("STANDIN TASK PROMPT" in p for p in prompts)
    assert "sk-test" not in (official / "run.json").read_text()
