"""``--backend ray`` on a local Ray instance: same results as the local runner, same store.

Every test here that uses Ray is marked ``netns``: it runs in a loopback-only network
namespace (tests/netns.py), where Ray finds no address but 127.0.0.1. The file's netns tests
run in one child pytest (tests/conftest.py) and share one Ray instance (:func:`local_ray`):
starting Ray costs more than most of these runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from eviseek.eval.config import RunConfig
from eviseek.eval.runner import run_eval
from eviseek.eval.store import episode_dir, load_results
from eviseek.types import Trajectory
from tests import netns
from tests.eval import toy_plugin
from tests.eval.toy_plugin import make_questions, write_questions_jsonl

PLUGIN = str(Path(toy_plugin.__file__).resolve())
RAY_CPUS = 3
TOKEN = "ray-remote-token"


@pytest.fixture(scope="module")
def local_ray(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One local Ray instance for the file: three CPUs, one unit of ``toy_sim_slot``, no GPU.

    What the actors must inherit from their node is set before ``ray.init``: the toy plugin's
    episode log (the path is returned; each test empties it first), the env server's token,
    and the resource :data:`~tests.eval.toy_plugin.PLACED_ENV_ID` asks for where the plugin is
    imported.
    """
    log = tmp_path_factory.mktemp("ray") / "episodes.log"
    if not netns.in_loopback_namespace():
        # The parent pytest: the tests' bodies run in the namespace child, which starts its own.
        # A test that asks for this fixture without the marker would run here, without Ray.
        unmarked = [
            i.nodeid
            for i in request.session.items
            if i.path == request.path and "local_ray" in getattr(i, "fixturenames", ())
            if i.get_closest_marker("netns") is None
        ]
        assert not unmarked, f"tests using local_ray must be marked netns: {unmarked}"
        yield log
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOY_EPISODE_LOG", str(log))
        mp.setenv("EVISEEK_ENV_TOKEN", TOKEN)
        mp.setenv("TOY_PLACED_RESOURCE", "toy_sim_slot")
        ray.init(
            num_cpus=RAY_CPUS,
            num_gpus=0,
            resources={"toy_sim_slot": 1},
            include_dashboard=False,
            log_to_driver=False,
        )
        try:
            yield log
        finally:
            ray.shutdown()


def _episode_pids(log: Path) -> list[str]:
    """The pid of each episode start the toy plugin logged, in order; empties the log."""
    pids = [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return pids


@pytest.mark.netns
def test_ray_backend_matches_the_local_runner(tmp_path: Path, local_ray: Path) -> None:
    special = {"q001": {"agent_crash": True}, "q003": {"scene": {"env_crash": True}}}
    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(8, special=special))
    _episode_pids(local_ray)
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
    out = run_eval(RunConfig.model_validate({**base, "backend": "ray"}), tmp_path / "ray", progress=False)
    assert (out.ran, out.failed) == (16, 3)
    pids = set(_episode_pids(local_ray))
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
    # The episodes ran in Ray worker processes (one actor per CPU), and their images came back here.
    assert str(os.getpid()) not in pids and len(pids) == RAY_CPUS
    traj = Trajectory.load(episode_dir(tmp_path / "ray", "toy-seeker", "q000"))
    assert traj.answer_images and traj.answer_images[0].array(
        episode_dir(tmp_path / "ray", "toy-seeker", "q000")
    ).shape == (8, 8, 3)


@pytest.mark.netns
def test_ray_actors_drive_remote_environments(tmp_path: Path, local_ray: Path) -> None:
    """``--backend ray`` with ``--env-url``: actors host no simulator, they drive the env server's
    (with the token the actors inherited from their node: :func:`local_ray`)."""
    from eviseek.envs.remote import EnvServer
    from tests.eval.toy_plugin import RevealEnv

    data = write_questions_jsonl(tmp_path / "q.jsonl", make_questions(6))
    with EnvServer(RevealEnv, token=TOKEN) as server:
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
        out = run_eval(RunConfig.model_validate({**base, "backend": "ray"}), tmp_path / "ray", progress=False)
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


@pytest.mark.netns
def test_a_resource_no_node_offers_is_refused_by_name(tmp_path: Path, local_ray: Path) -> None:
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
    assert ray.cluster_resources().get("GPU", 0.0) == 0.0
    with pytest.raises(ConfigError, match=r"no node of the Ray cluster offers .*GPU=1"):
        run_eval(config, tmp_path / "run", progress=False)


def test_actor_resources_merge_declarations_and_the_flag() -> None:
    from eviseek.eval.ray_backend import actor_resources

    # Nothing declared (a remote simulator, or no registered env): one CPU.
    assert actor_resources({}, {}) == ({"CPU": 1.0}, {"CPU": "default"})
    assert actor_resources({}, {}, default_cpus=0.5)[0] == {"CPU": 0.5}
    # The most of each resource over the run's environments: one actor hosts them all.
    declared = {
        "eviseek/Tabletop-v0": {"CPU": 1.0},
        "eviseek/ESIBench-v0": {"CPU": 1.0, "GPU": 1.0},
        "my/Sim-v0": {"CPU": 2.0, "sim": 1.0},
    }
    need, source = actor_resources(declared, {})
    assert need == {"CPU": 2.0, "GPU": 1.0, "sim": 1.0}
    assert source == {"CPU": "my/Sim-v0", "GPU": "eviseek/ESIBench-v0", "sim": "my/Sim-v0"}
    # The flag wins over a declaration, adds what none declared, and 0 drops a resource.
    need, source = actor_resources(declared, {"GPU": 0.0, "CPU": 4.0, "rack": 1.0})
    assert need == {"CPU": 4.0, "sim": 1.0, "rack": 1.0}
    assert source == {"CPU": "--ray-resource", "sim": "my/Sim-v0", "rack": "--ray-resource"}
    assert actor_resources({"eviseek/ESIBench-v0": {"CPU": 1.0, "GPU": 1.0}}, {"GPU": 0.5})[0] == {
        "CPU": 1.0,
        "GPU": 0.5,
    }


def test_declarations_are_ignored_when_an_env_server_hosts_the_simulators() -> None:
    from eviseek.eval.ray_backend import RayExecutor

    base = {"agents": ["passive"], "model": "scripted/x", "dataset": "tabletop:dev", "backend": "ray"}
    ids = ["eviseek/ESIBench-v0", "eviseek/Tabletop-v0", "not/Registered-v0"]
    here = RayExecutor(RunConfig.model_validate(base), env_ids=ids)
    assert here._declared() == {
        "eviseek/ESIBench-v0": {"CPU": 1.0, "GPU": 1.0},
        "eviseek/Tabletop-v0": {"CPU": 1.0},
    }
    remote = RayExecutor(RunConfig.model_validate({**base, "env_url": "http://127.0.0.1:1"}), env_ids=ids)
    assert remote._declared() == {}


@pytest.mark.slow
@pytest.mark.netns
def test_actors_are_placed_by_what_the_environment_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_ray: Path
) -> None:
    """A custom resource stands in for a GPU: the cluster offers one unit, the environment
    declares one unit per actor, so Ray can place one actor although three CPUs are free;
    ``--ray-resource`` overrides the declaration; a declared resource no node offers is refused."""
    from eviseek.envs import registry
    from eviseek.errors import ConfigError
    from tests.eval.toy_plugin import PLACED_ENV_ID, register_placed

    monkeypatch.setattr(registry, "_ENVS", dict(registry._ENVS))  # this test's registrations stay here
    register_placed("toy_sim_slot")
    questions = [q.model_copy(update={"env_id": PLACED_ENV_ID}) for q in make_questions(6)]
    data = write_questions_jsonl(tmp_path / "q.jsonl", questions)
    # local_ray set TOY_PLACED_RESOURCE=toy_sim_slot before ray.init: the plugin registers the
    # id in the actors too.
    _episode_pids(local_ray)
    base = {
        "agents": ["toy-seeker"],
        "model": "toy/oracle",
        "model_args": {"delay_s": 0.2},
        "dataset": str(data),
        "concurrency": 6,
        "timeout_s": 30.0,
        "plugins": [PLUGIN],
        "backend": "ray",
    }

    def actor_pids() -> set[str]:
        return set(_episode_pids(local_ray))

    assert ray.cluster_resources()["CPU"] == RAY_CPUS == 3 and ray.cluster_resources()["toy_sim_slot"] == 1
    out = run_eval(RunConfig.model_validate(base), tmp_path / "declared", progress=False)
    assert (out.ran, out.failed) == (6, 0), [r.error for r in load_results(tmp_path / "declared")]
    assert len(actor_pids()) == 1  # one actor: the one unit of toy_sim_slot
    # The flag wins: toy_sim_slot=0 lets three actors (one per CPU) run the episodes.
    flagged = {**base, "ray_actor_resources": {"toy_sim_slot": 0.0}}
    out = run_eval(RunConfig.model_validate(flagged), tmp_path / "flagged", progress=False)
    assert (out.ran, out.failed) == (6, 0)
    assert len(actor_pids()) == 3
    # A declared resource no node offers: refused before any actor starts, naming it and who asked.
    register_placed("toy_gpu_rack")
    with pytest.raises(ConfigError, match=r"toy_gpu_rack=1 \(declared by toy/Placed-v0\)"):
        run_eval(RunConfig.model_validate(base), tmp_path / "refused", progress=False)
