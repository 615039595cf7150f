"""Bounds on a scene from outside (an env server's client writes it), checked before building."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pybullet_data
import pytest

from eviseek.envs.tabletop import TabletopEnv
from eviseek.envs.tabletop.families._common import make_object
from eviseek.envs.tabletop.limits import MAX_OBJECTS, asset_path, checked_scene
from eviseek.errors import EnvArgumentError, EnvError

from .conftest import hand_question, occlusion_scene


def _scene(**change: Any) -> dict[str, Any]:
    return {**occlusion_scene().model_dump(mode="json"), **change}


def _many_objects(n: int) -> dict[str, Any]:
    objects = [
        make_object("cube", "red", (0.001 * i, 0.0), 0.02, name=f"cube_{i}").model_dump(mode="json")
        for i in range(n)
    ]
    return _scene(objects=objects)


def test_a_2_mb_scene_is_refused_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    scene = _many_objects(6500)
    assert len(json.dumps(scene)) > 2 * 10**6
    built: list[int] = []
    monkeypatch.setattr("eviseek.envs.tabletop.sim.world.TabletopSim.build", lambda *a: built.append(1))
    env = TabletopEnv(width=32, height=24)
    question = hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
    question.scene = scene
    started = time.monotonic()
    with pytest.raises(EnvArgumentError, match=f"may have {MAX_OBJECTS} objects, this one has 6500"):
        env.reset(options={"question": question})
    assert time.monotonic() - started < 0.5 and built == []
    env.close()


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"reference_cameras": [{"x": 0.0}] * 17}, "16 reference_cameras"),
        ({"changes": [{"object": "red_cube"}] * 300}, "256 changes"),
        ({"extra": {"pad": "x" * 300_000}}, "characters"),
        ({"table": {"size": [50.0, 1.0]}}, "table is larger"),
        ({"camera": {"x": 1e6}}, "camera pose"),
        ({"objects": "nope"}, "not a valid tabletop scene"),
    ],
)
def test_each_bound_is_checked(change: dict[str, Any], why: str) -> None:
    with pytest.raises(EnvArgumentError, match=why):
        checked_scene(_scene(**change))


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("size", [30.0, 0.1, 0.1], "a side of 30 m"),
        ("position", [1e4, 0.0, 0.0], "more than 5 m"),
        ("position", [float("nan"), 0.0, 0.0], "finite"),
    ],
)
def test_objects_are_bounded(field: str, value: list[float], why: str) -> None:
    scene = _scene()
    scene["objects"][0][field] = value
    with pytest.raises(EnvArgumentError, match=why):
        checked_scene(scene)


def test_every_generated_scene_is_within_the_bounds() -> None:
    from eviseek.envs.tabletop.generate import load_split

    for question in load_split("dev"):
        checked_scene(question.scene)


@pytest.mark.parametrize(
    "name",
    ["../../../../etc/hostname", "/etc/hostname", "duck_vhacd.obj", "no_such.urdf", "a\\b.urdf", ""],
)
def test_an_asset_outside_pybullet_data_is_refused(name: str) -> None:
    with pytest.raises(EnvArgumentError, match="not a URDF of pybullet_data"):
        asset_path(name)


def test_a_symlink_out_of_pybullet_data_is_refused(tmp_path: Path) -> None:
    root = Path(pybullet_data.getDataPath())
    outside = tmp_path / "evil.urdf"
    outside.write_text("<robot name='x'/>")
    link = root / f"eviseek_test_link_{time.monotonic_ns()}.urdf"
    try:
        link.symlink_to(outside)
    except OSError:
        pytest.skip("pybullet_data is not writable here")
    try:
        with pytest.raises(EnvArgumentError):
            asset_path(link.name)
    finally:
        link.unlink()


def test_a_real_asset_still_loads() -> None:
    assert asset_path("duck_vhacd.urdf").endswith("duck_vhacd.urdf")
    scene = _scene()
    duck = {**scene["objects"][1], "name": "red_duck", "shape": "asset", "asset": "duck_vhacd.urdf"}
    duck["position"] = [0.3, 0.2, 0.03]
    scene["objects"].append(duck)
    question = hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
    question.scene = scene
    env = TabletopEnv(width=32, height=24)
    try:
        obs, _ = env.reset(options={"question": question})
        assert obs.image.width == 32
        question.scene["objects"][-1]["asset"] = "../../../../../../etc/hostname.urdf"
        with pytest.raises(EnvError, match="not a URDF"):
            env.reset(options={"question": question})
    finally:
        env.close()
