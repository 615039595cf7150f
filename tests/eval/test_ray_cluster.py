"""``eviseek eval --backend ray --ray-address`` across a real two-node cluster that loses a node.

The test starts a Ray head and a worker node with ``ray start`` (on this machine), runs the CLI
as a user would, and SIGKILLs every process of the worker node while episodes run on it. The
run must finish with every episode stored once, none failed, and the same results as a local
run: the episodes cut short on the lost node run again on the head. It runs in a loopback-only
network namespace (``netns``), and checks that both nodes report 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import eviseek
from eviseek.eval.config import RunConfig
from eviseek.eval.runner import run_eval
from eviseek.eval.store import episode_dir, load_results
from eviseek.types import Trajectory
from tests.eval import toy_plugin
from tests.eval.raycluster import RayCluster, descendants
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())
SRC = str(Path(eviseek.__file__).resolve().parents[1])
N_QUESTIONS = 12
AGENTS = ["toy-seeker", "toy-passive"]


def _starts(log: Path) -> list[tuple[int, str, str]]:
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        pid, agent, qid = line.split()
        out.append((int(pid), agent, qid))
    return out


def _key(rows):  # type: ignore[no-untyped-def]
    return {
        (r.agent, r.question_id): (r.answer, r.correct, r.score, r.support, r.steps, r.calls, r.error)
        for r in rows
    }


@pytest.mark.slow
@pytest.mark.netns
@pytest.mark.serial  # times the node's loss against running episodes: alone, not beside other tests
@pytest.mark.timeout(420)
def test_cli_ray_run_across_two_nodes_survives_losing_the_worker_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Slow simulator steps keep episodes in flight on both nodes when the worker node dies.
    slow = {f"q{i:03d}": {"scene": {"step_delay_s": 0.3}} for i in range(N_QUESTIONS)}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(N_QUESTIONS, special=slow))
    log = tmp_path / "episodes.log"
    run = tmp_path / "run"
    env = {
        **os.environ,
        "TOY_EPISODE_LOG": str(log),  # Ray workers inherit their node's environment
        "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    cmd = [
        sys.executable, "-m", "eviseek", "eval", "--backend", "ray",
        "--plugin", PLUGIN, "--agents", ",".join(AGENTS), "--model", "toy/oracle",
        "--model-arg", "delay_s=0.2", "--dataset", str(data), "--out", str(run),
        "--concurrency", "4", "--timeout", "60", "--no-progress",
    ]  # fmt: skip
    with RayCluster(env=env, head_cpus=1, worker_cpus=1) as cluster:
        assert cluster.worker is not None
        assert cluster.node_addresses() == ["127.0.0.1", "127.0.0.1"]  # nothing leaves loopback
        started = time.monotonic()
        driver = subprocess.Popen(
            [*cmd, "--ray-address", cluster.address],
            env={**env, "RAY_AUTH_MODE": "disabled"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            # Wait until both nodes run episodes, then take the worker node down mid-episode.
            worker_pids: set[int] = set()
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and driver.poll() is None:
                worker_pids |= set(descendants(cluster.worker.proc.pid))
                pids = [p for p, _, _ in _starts(log)]
                on_worker = [p for p in pids if p in worker_pids]
                if len(on_worker) >= 2 and len(pids) > len(on_worker):
                    break
                time.sleep(0.1)
            else:
                out = driver.stdout.read() if driver.poll() is not None and driver.stdout else ""
                pytest.fail(f"episodes never ran on both nodes before the deadline or the end: {out}")
            killed_at = len(_starts(log))
            cluster.worker.kill()
            output, _ = driver.communicate(timeout=240)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait(timeout=10)
        elapsed = time.monotonic() - started
    assert driver.returncode == 0, output
    assert killed_at < 2 * N_QUESTIONS, "the node was lost after the run had started every episode"
    assert f"{2 * N_QUESTIONS} episode(s) run, 0 already finished, 0 failed" in output, output

    rows = load_results(run)
    assert len(rows) == 2 * N_QUESTIONS == len({(r.agent, r.question_id) for r in rows})  # 0 lost, 0 dup
    assert all(r.error is None for r in rows)
    dirs = [p for p in (run / "episodes").glob("*/*") if p.is_dir()]
    assert len(dirs) == 2 * N_QUESTIONS

    # Episodes cut short on the worker node ran again on the head, and say so in their record.
    starts = _starts(log)
    on_lost = {(a, q) for p, a, q in starts if p in worker_pids}
    retried = {(a, q) for (a, q) in on_lost if sum(1 for _, a2, q2 in starts if (a2, q2) == (a, q)) > 1}
    assert retried, f"no episode was running on the lost node ({len(on_lost)} had started there)"
    for agent, qid in retried:
        traj = Trajectory.load(episode_dir(run, agent, qid))
        assert any(e.kind == "episode_retried" for e in traj.events), (agent, qid)

    # Same results as a local run of the same configuration.
    monkeypatch.delenv("TOY_EPISODE_LOG", raising=False)
    local = run_eval(
        RunConfig(
            agents=AGENTS,
            model="toy/oracle",
            model_args={"delay_s": 0.0},
            dataset=str(data),
            plugins=[PLUGIN],
            env_workers=0,
            concurrency=8,
        ),
        tmp_path / "local",
        progress=False,
    )
    assert local.failed == 0
    assert _key(rows) == _key(load_results(tmp_path / "local"))
    print(f"two-node run with a lost node: {elapsed:.1f}s, {len(retried)} episode(s) retried")
