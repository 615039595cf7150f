"""``--backend ray`` on a local Ray instance: same results as the local runner, same store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import ray

from eviseek.eval.config import RunConfig
from eviseek.eval.runner import run_eval
from eviseek.eval.store import episode_dir, load_results
from eviseek.types import Trajectory
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())


def test_ray_backend_matches_the_local_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    special = {"q001": {"agent_crash": True}, "q003": {"scene": {"env_crash": True}}}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(8, special=special))
    log = tmp_path / "episodes.log"
    monkeypatch.setenv("TOY_EPISODE_LOG", str(log))  # before ray.init: the workers inherit it
    base = {
        "agents": ["toy-seeker", "toy-passive"],
        "model": "toy/oracle",
        "model_args": {"delay_s": 0.05},
        "dataset": str(data),
        "concurrency": 4,
        "timeout_s": 20.0,
        "plugins": [PLUGIN],
        "env_workers": 0,
    }
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        out = run_eval(RunConfig.model_validate({**base, "backend": "ray"}), tmp_path / "ray", progress=False)
    finally:
        ray.shutdown()
    assert (out.ran, out.failed) == (16, 3)
    local = run_eval(RunConfig.model_validate(base), tmp_path / "local", progress=False)

    def key(rows):  # type: ignore[no-untyped-def]
        return {
            (r.agent, r.question_id): (r.answer, r.correct, r.score, r.support, r.steps, r.calls, r.error)
            for r in rows
        }

    assert key(load_results(tmp_path / "ray")) == key(load_results(tmp_path / "local"))
    assert out.summary.model_dump(exclude={"agents": {"__all__": {"cost": {"wall_time_s"}}}}) == (
        local.summary.model_dump(exclude={"agents": {"__all__": {"cost": {"wall_time_s"}}}})
    )
    # The episodes ran in Ray worker processes (two actors), and their images came back here.
    pids = {line.split()[0] for line in log.read_text().splitlines()[:16]}
    assert str(os.getpid()) not in pids and len(pids) == 2
    traj = Trajectory.load(episode_dir(tmp_path / "ray", "toy-seeker", "q000"))
    assert traj.answer_images and traj.answer_images[0].array(
        episode_dir(tmp_path / "ray", "toy-seeker", "q000")
    ).shape == (8, 8, 3)


def test_ray_actors_drive_remote_environments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--backend ray`` with ``--env-url``: actors host no simulator, they drive the env server's."""
    from eviseek.envs.remote import EnvServer
    from tests.eval.toy_plugin import RevealEnv

    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(6))
    monkeypatch.setenv("EVISEEK_ENV_TOKEN", "ray-remote-token")  # before ray.init: actors inherit it
    with EnvServer(RevealEnv, token="ray-remote-token") as server:
        opened: list[int] = []
        original = server.open_session

        def counting_open():  # type: ignore[no-untyped-def]
            opened.append(1)
            return original()

        server.open_session = counting_open  # type: ignore[method-assign]
        base = {
            "agents": ["toy-seeker"],
            "model": "toy/oracle",
            "dataset": str(data),
            "concurrency": 4,
            "timeout_s": 30.0,
            "plugins": [PLUGIN],
            "env_url": server.url,
        }
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            out = run_eval(
                RunConfig.model_validate({**base, "backend": "ray"}), tmp_path / "ray", progress=False
            )
        finally:
            ray.shutdown()
        assert opened, "the actors never opened a session on the env server"
    assert (out.ran, out.failed) == (6, 0)
    local = run_eval(
        RunConfig.model_validate({**base, "env_url": None, "env_workers": 0}),
        tmp_path / "local",
        progress=False,
    )
    assert {
        (r.question_id, r.answer, r.correct, r.support, r.steps) for r in load_results(tmp_path / "ray")
    } == {(r.question_id, r.answer, r.correct, r.support, r.steps) for r in load_results(tmp_path / "local")}
    assert local.failed == 0


def test_actor_count_follows_the_scarcest_resource() -> None:
    from eviseek.eval.ray_backend import actor_count

    cluster = {"CPU": 16.0, "GPU": 2.0, "sim": 3.0}
    assert actor_count(cluster, {"CPU": 1.0}) == 16
    assert actor_count(cluster, {"CPU": 1.0, "GPU": 1.0}) == 2
    assert actor_count(cluster, {"CPU": 4.0, "sim": 1.0}) == 3
    assert actor_count(cluster, {"CPU": 1.0, "GPU": 0.5}) == 4


def test_a_resource_no_node_offers_is_refused_by_name(tmp_path: Path) -> None:
    from eviseek.errors import ConfigError

    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(2))
    config = RunConfig(
        agents=["toy-seeker"],
        model="toy/oracle",
        dataset=str(data),
        plugins=[PLUGIN],
        backend="ray",
        ray_actor_resources={"GPU": 1.0},
    )
    ray.init(num_cpus=1, num_gpus=0, include_dashboard=False, log_to_driver=False)
    try:
        with pytest.raises(ConfigError, match=r"no node of the Ray cluster offers .*GPU=1"):
            run_eval(config, tmp_path / "run", progress=False)
    finally:
        ray.shutdown()
