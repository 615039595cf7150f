"""The Habitat bridge against a stand-in with habitat-sim's names, directly and through an env server."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from eviseek.envs.express import ExpressEnv, load_express, pose_of
from eviseek.envs.remote import EnvServer, RemoteEnv, check_server
from eviseek.types import Action
from tests.envs.express.conftest import FIXTURE, scene_root

TOKEN = "test-token-express-bridge"


def test_pose_conversion() -> None:
    # Identity rotation: Habitat's forward is -z, which is eviseek's +y (yaw 90).
    p = pose_of(np.array([1.0, 0.2, -3.0]), (1.0, 0.0, 0.0, 0.0), 1.5, 0.0)
    assert (p.x, p.y, p.z, p.yaw) == (1.0, 3.0, 1.7, 90.0)
    q = pose_of(np.zeros(3), (0.7071068, 0.0, 0.7071068, 0.0), 1.5, -30.0)
    assert q.yaw == pytest.approx(180.0, abs=1e-3) or q.yaw == pytest.approx(-180.0, abs=1e-3)
    assert q.pitch == -30.0


def test_an_episode_on_the_standin(habitat: ModuleType, tmp_path: Path) -> None:
    qs = load_express(FIXTURE)
    env = ExpressEnv(scene_root=str(scene_root(tmp_path)), width=32, height=24)
    obs, info = env.reset(options={"question": qs[0]})
    assert obs.image.array().shape == (24, 32, 3) and obs.pose.yaw == 90.0 and info["steps"] == 0
    assert ("Simulator", str(scene_root(tmp_path) / "00000-StandinA" / "StandinA.basis.glb")) in habitat.CALLS
    assert any(c[0] == "load_nav_mesh" for c in habitat.CALLS)
    res = env.step(Action(name="move_forward"))
    assert res.feedback.success and res.observation.pose.y == pytest.approx(0.25)
    assert "distance_to_target" not in res.feedback.state  # never before the end: no steering by it
    env.step(Action(name="turn_left"))
    # The paper's navigation interface (Table 7): no tilt unless asked for.
    assert [s.name for s in env.legal_actions()] == ["move_forward", "turn_left", "turn_right", "stop"]
    assert not env.step(Action(name="look_down")).feedback.success
    assert "range_scan" not in res.observation.metadata and res.observation.depth is None  # an RGB agent
    bad = env.step(Action(name="jump"))
    assert not bad.feedback.success and "legal actions" in bad.feedback.reason
    done = env.step(Action(name="stop"))
    assert done.terminated and done.feedback.state["distance_to_target"] == pytest.approx(2.75, abs=1e-3)
    # The same scene is kept across questions; another scene rebuilds the simulator.
    n_sims = sum(1 for c in habitat.CALLS if c[0] == "Simulator")
    env.reset(options={"question": qs[1]})
    assert sum(1 for c in habitat.CALLS if c[0] == "Simulator") == n_sims
    env.reset(options={"question": qs[2]})
    assert sum(1 for c in habitat.CALLS if c[0] == "Simulator") == n_sims + 1
    env.close()


def test_walls_stop_the_agent(habitat: ModuleType, tmp_path: Path) -> None:
    q = load_express(FIXTURE)[2]  # starts at (3, 3) facing -z, the pillar is not in the way
    env = ExpressEnv(scene_root=str(scene_root(tmp_path)), width=16, height=16, max_steps=40)
    env.reset(options={"question": q})
    for _ in range(3):
        env.step(Action(name="turn_right"))  # now facing +x: the wall at x = 5 is 2 m away
    results = [env.step(Action(name="move_forward")) for _ in range(12)]
    assert sum(r.feedback.success for r in results) == 8
    assert all(r.feedback.state.get("collided") for r in results[8:])
    env.close()


def test_served_through_the_remote_env_server(habitat: ModuleType, tmp_path: Path) -> None:
    root = str(scene_root(tmp_path))
    q = load_express(FIXTURE)[0]
    with EnvServer(lambda: ExpressEnv(scene_root=root, width=32, height=24), token=TOKEN) as server:
        results = check_server(server.url, TOKEN, q)
        assert all(r.ok for r in results), [r for r in results if not r.ok]
        env = RemoteEnv(server.url, token=TOKEN, env_id="eviseek/Express-v0")
        try:
            obs, _ = env.reset(options={"question": q})
            assert obs.pose.yaw == 90.0
            res = env.step(Action(name="stop"))
            assert res.terminated and res.feedback.state["distance_to_target"] == pytest.approx(3.0)
        finally:
            env.close()


def test_without_habitat_the_error_says_where_to_run(tmp_path: Path) -> None:
    from eviseek.errors import EnvError
    from tests.envs.express.conftest import forget_standin

    forget_standin()
    with pytest.raises(EnvError, match="eviseek env serve --env eviseek/Express-v0"):
        ExpressEnv(scene_root=str(tmp_path))


def test_tilts_are_an_option(habitat: ModuleType, tmp_path: Path) -> None:
    q = load_express(FIXTURE)[0]
    env = ExpressEnv(scene_root=str(scene_root(tmp_path)), width=16, height=16, look=True)
    env.reset(options={"question": q})
    assert [s.name for s in env.legal_actions()][3:] == ["look_up", "look_down", "stop"]
    assert env.step(Action(name="look_down")).feedback.success
    env.step(Action(name="look_down"))
    tilt = env.step(Action(name="look_down"))
    assert not tilt.feedback.success and "tilt" in tilt.feedback.reason
    env.close()


def test_an_rgbd_agent_gets_depth_and_a_range_scan(habitat: ModuleType, tmp_path: Path) -> None:
    q = load_express(FIXTURE)[0]  # starts at the origin facing -z: 5 m of floor ahead
    env = ExpressEnv(scene_root=str(scene_root(tmp_path)), width=128, height=96)
    obs, _ = env.reset(options={"question": q, "sensors": ["rgb", "depth"]})
    assert obs.depth is not None and obs.depth.shape == (96, 128)
    scan = obs.metadata["range_scan"]
    assert scan["ranges"][len(scan["ranges"]) // 2] == pytest.approx(5.0, abs=0.1)
    res = env.step(Action(name="move_forward"))
    assert res.observation.metadata["range_scan"]["ranges"][20] == pytest.approx(4.75, abs=0.1)
    # Declaring RGB only rebuilds the simulator without the depth camera.
    obs, _ = env.reset(options={"question": q})
    assert obs.depth is None and "range_scan" not in obs.metadata
    env.close()


@pytest.mark.parametrize("scene_id", ["../00000-StandinA", "00000-StandinA/../../x", "/abs-olute", "nodash"])
def test_a_scene_id_that_is_not_one_folder_name_is_refused(
    habitat: ModuleType, tmp_path: Path, scene_id: str
) -> None:
    """Over an env server the client writes the scene id: ``../`` loaded scenes from anywhere."""
    from eviseek.errors import EnvArgumentError

    question = load_express(FIXTURE)[0]
    question.scene = {**question.scene, "scene_id": scene_id}
    env = ExpressEnv(scene_root=str(scene_root(tmp_path)), width=32, height=24)
    with pytest.raises(EnvArgumentError, match="is not an HM3D scene id"):
        env.reset(options={"question": question})
    assert not [c for c in habitat.CALLS if c[0] == "Simulator" and ".." in str(c[1])]
