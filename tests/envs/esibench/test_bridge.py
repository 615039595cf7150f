"""The ESI-Bench bridge's own logic, against a stand-in of ESI-Bench's pipeline that records calls."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
import tomllib

import eviseek.envs
from eviseek.envs.checker import check_env
from eviseek.envs.esibench import ESIBenchEnv, action_command, pose_of
from eviseek.errors import ConfigError, EnvError
from eviseek.eval.datasets import load_dataset
from eviseek.types import Action
from tests.envs.esibench.conftest import STANDIN
from tests.eval.esibench.conftest import FIXTURES


def question(sub: str = "Physical Contact"):
    return next(q for q in load_dataset(f"esibench:{FIXTURES}") if q.subcategory == sub)


def names(calls: list) -> list[str]:
    return [c[0] for c in calls if c[0] not in ("sim.step", "add_modality")]


def test_reset_replays_the_official_setup_and_steps_call_the_official_action(standin, tmp_path: Path) -> None:
    env = eviseek.envs.make("eviseek/ESIBench-v0", step_image_root=str(tmp_path / "steps"))
    q = question()
    obs, info = env.reset(options={"question": q})
    assert names(standin.CALLS) == [
        "load_task_module",
        "select_question",
        "task_preprocess",
        "task_build_env_config",
        "Environment",
        "task_postprocess_env",
        "task_build_system_prompt",
        "task_build_force_choice_prompt",
        "task_capture_image",
    ]
    assert standin.CALLS[1][1] == q.metadata["esibench"]["source"]
    assert ("task_build_env_config", ("Toy_house", "hall_0", "R1", False)) in standin.CALLS
    assert [c for c in standin.CALLS if c[0] == "sim.step"] == [
        ("sim.step", None)
    ] * 2  # the task's settle steps
    assert {c[1] for c in standin.CALLS if c[0] == "add_modality"} == {
        "seg_semantic",
        "seg_instance",
        "seg_instance_id",
    }
    assert obs.frame_id == 0 and obs.image.array().shape == (24, 32, 3) and obs.pose is not None
    assert info["objects"] == ["red mug", "tray"]
    assert (obs.pose.x, obs.pose.z) == (1.0, 1.5)

    standin.CALLS.clear()
    moved = env.step(Action(name="move_forward"))
    assert moved.feedback.operation == "camera" and moved.feedback.success and moved.observation.frame_id == 1
    assert moved.observation.pose.x == 1.25 and moved.observation.image.digest() != obs.image.digest()
    picked = env.step(Action(name="physical", args={"command": "pick up red mug"}))
    assert picked.feedback.operation == "pick_up" and picked.feedback.state["object"] == "red mug"
    env.step(Action(name="pick_up", args={"object": "tray"}))
    poured = env.step(Action(name="physical", args={"command": "pour red mug into tray"}))
    assert not poured.feedback.success and poured.feedback.reason == "nothing to pour"
    assert poured.observation.metadata["extra_image_paths"][0].endswith("pour.png")
    unknown = env.step(Action(name="physical", args={"command": "dance"}))
    assert not unknown.feedback.success and "did not handle" in unknown.feedback.reason
    assert [c[1] for c in standin.CALLS if c[0] == "execute_action"] == [
        "move_forward",
        "pick up red mug",
        "pick up tray",
        "pour red mug into tray",
        "dance",
    ]
    assert [c[1] for c in standin.CALLS if c[0] == "task_capture_image"] == [
        "step_002.png",
        "step_003.png",
        "step_004.png",
        "step_005.png",
        "step_006.png",
    ]

    standin.CALLS.clear()
    bad = env.step(Action(name="physical", args={}))
    assert not bad.feedback.success and "command=" in bad.feedback.reason and standin.CALLS == []
    stop = env.step(Action(name="stop"))
    assert stop.terminated and standin.CALLS == []  # stopping touches nothing

    env.reset(options={"question": question("Material Transparency")})
    assert ("task_cleanup_runtime", None) in standin.CALLS and ("og.clear", None) in standin.CALLS
    standin.CALLS.clear()
    env.close()
    assert names(standin.CALLS) == ["task_cleanup_runtime", "og.shutdown"]


def test_the_env_checker_passes_on_the_stand_in(standin, tmp_path: Path) -> None:
    check_env(ESIBenchEnv(step_image_root=str(tmp_path)), question())


def test_clear_errors(standin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = ESIBenchEnv(step_image_root=str(tmp_path))
    with pytest.raises(EnvError, match="esibench:PATH"):
        env.reset(options={"question": question().model_copy(update={"metadata": {}})})
    with pytest.raises(EnvError, match="reset"):
        env.sim.capture(1)
    monkeypatch.setenv("ESI_BENCH_ROOT", str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="not an ESI-Bench checkout"):
        ESIBenchEnv()
    monkeypatch.delenv("ESI_BENCH_ROOT")
    with pytest.raises(ConfigError, match="set ESI_BENCH_ROOT"):
        ESIBenchEnv()


def test_action_phrases_and_poses() -> None:
    assert action_command(Action(name="turn_left")) == "turn_left"
    assert (
        action_command(Action(name="place_on_top", args={"object": "cup", "target": "tray"}))
        == "place cup on top of tray"
    )
    assert action_command(Action(name="put_back", args={"object": "cup"})) == "put back cup"
    with pytest.raises(ValueError, match="target"):
        action_command(Action(name="place_on_top", args={"object": "cup"}))
    with pytest.raises(ValueError, match="unknown action"):
        action_command(Action(name="fly"))
    from scipy.spatial.transform import Rotation

    # ESI-Bench's look-at: columns right, up, -forward; here looking along world +x, level.
    look_x = Rotation.from_matrix([[0, 0, -1], [-1, 0, 0], [0, 1, 0]]).as_quat()
    level = pose_of([0, 0, 1], look_x)
    assert (round(level.yaw), round(level.pitch)) == (0, 0)
    down = pose_of([0, 0, 1], [0, 0, 0, 1])  # identity: looking straight down
    assert round(down.pitch) == -90


def test_the_stand_in_has_the_official_names_and_signatures() -> None:
    root = os.environ.get("ESI_BENCH_ROOT")
    if not root or not Path(root, "src/active_explore/pipeline.py").is_file():
        pytest.skip("set ESI_BENCH_ROOT to compare the stand-in with ESI-Bench's pipeline.py")
    import ast

    def signatures(path: Path) -> dict[str, list[str]]:
        tree = ast.parse(path.read_text())
        return {
            n.name: [a.arg for a in n.args.args + n.args.kwonlyargs]
            for n in tree.body
            if isinstance(n, ast.FunctionDef)
        }

    ours = signatures(STANDIN / "pipeline.py")
    theirs = signatures(Path(root, "src/active_explore/pipeline.py"))
    for name, params in ours.items():
        assert name in theirs, f"the stand-in's {name} is not in ESI-Bench's pipeline"
        assert params == theirs[name], f"{name}: stand-in {params} vs official {theirs[name]}"
    assert inspect.isfunction(action_command)


def test_installing_eviseek_pulls_no_heavy_extra() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"]).lower()
    for heavy in ("torch", "transformers", "trl", "ray", "pybullet", "verl", "datasets", "accelerate"):
        assert heavy not in base, (
            f"{heavy} is a base dependency: installing into ESI-Bench's env would pull it"
        )
