"""The environment: reset, stepping, budget, bad actions, privileged data."""

from __future__ import annotations

import numpy as np
import pytest

import eviseek.envs
from eviseek.envs.tabletop import PrivilegedAccessError, SceneSpec, TabletopEnv
from eviseek.errors import EnvError
from eviseek.types import Action

from .conftest import hand_question, occlusion_scene


def test_make_builds_the_env_and_reset_without_a_question_draws_one(env: TabletopEnv) -> None:
    made = eviseek.envs.make("eviseek/Tabletop-v0", width=96, height=72)
    try:
        obs, info = made.reset(seed=4)
        assert obs.image.array().shape == (72, 96, 3) and obs.frame_id == 0
        assert info["question_id"].startswith("tabletop-") and info["steps_left"] == 30
    finally:
        made.close()


def test_frames_poses_and_buffers(env: TabletopEnv) -> None:
    q = hand_question(
        occlusion_scene(), "partial_occlusion", {"target": "red_cube", "occluder": "gray_board"}
    )
    obs, _ = env.reset(options={"question": q})
    assert obs.pose == SceneSpec.model_validate(q.scene).camera
    assert obs.depth is not None and obs.segmentation is not None
    assert obs.depth.shape == obs.segmentation.shape == (240, 320)
    # The board is 0.6 m ahead at the image centre: metric depth says so.
    assert obs.depth[120, 160] == pytest.approx(0.59, abs=0.02)
    res = env.step(Action(name="move_forward"))
    assert res.observation.frame_id == 1 and res.feedback.success
    assert res.observation.pose is not None and res.observation.pose.x == pytest.approx(-0.35)
    assert "segmentation" not in res.observation.model_dump()  # privileged buffers never serialise


def test_budget_truncates_at_the_limit_and_the_episode_then_stays_over() -> None:
    env = TabletopEnv(max_steps=3, width=64, height=48)
    try:
        env.reset(
            options={
                "question": hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
            }
        )
        flags = [env.step(Action(name="turn_left")).truncated for _ in range(3)]
        assert flags == [False, False, True]
        after = env.step(Action(name="turn_left"))
        assert after.truncated and not after.feedback.success and "over" in after.feedback.reason
        assert after.observation.frame_id == 3  # no new frame once the episode is over
    finally:
        env.close()


def test_stop_terminates(env: TabletopEnv) -> None:
    env.reset(
        options={"question": hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})}
    )
    res = env.step(Action(name="stop"))
    assert res.terminated and not res.truncated and res.feedback.success


def test_bad_actions_and_names_come_back_as_failed_feedback(env: TabletopEnv) -> None:
    from eviseek.envs.tabletop import generate_questions

    (q,) = generate_questions(1, 3, subcategories=["dimensional_size"], render_images=False)
    env.reset(options={"question": q})
    res = env.step(Action(name="fly_away"))
    assert (
        not res.feedback.success
        and "legal actions" in res.feedback.reason
        and "move_forward" in res.feedback.reason
    )
    res = env.step(Action(name="pick_up", args={"object": "golden_unicorn"}))
    assert not res.feedback.success
    for name in q.metadata["objects"]:
        assert name in res.feedback.reason  # names the legal choices
    res = env.step(Action(name="pick_up"))
    assert not res.feedback.success and "object" in res.feedback.reason
    # A family without manipulation rejects it as an unknown action.
    env.reset(
        options={"question": hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})}
    )
    assert not env.step(Action(name="pick_up", args={"object": "red_cube"})).feedback.success
    assert env.steps_taken == 1  # bad actions still cost a step


def test_legal_actions_list_camera_stop_and_the_family_manipulations(env: TabletopEnv) -> None:
    from eviseek.envs.tabletop import generate_questions

    (q,) = generate_questions(1, 3, subcategories=["dimensional_size"], render_images=False)
    env.reset(options={"question": q})
    specs = {s.name: s for s in env.legal_actions()}
    assert {"move_forward", "turn_down", "stop", "pick_up", "put_back"} <= set(specs)
    assert specs["pick_up"].choices["object"] == q.metadata["objects"]


def test_step_before_reset_is_a_usage_error() -> None:
    env = TabletopEnv()
    with pytest.raises(EnvError, match="reset"):
        env.step(Action(name="move_up"))


def test_unprivileged_env_hides_masks_and_refuses_the_oracle() -> None:
    env = TabletopEnv(privileged=False, width=64, height=48)
    try:
        obs, _ = env.reset(
            options={
                "question": hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
            }
        )
        assert obs.segmentation is None and obs.depth is None
        with pytest.raises(PrivilegedAccessError):
            env.visual_support([0])
        with pytest.raises(PrivilegedAccessError):
            _ = env.oracle.ground_truth
    finally:
        env.close()


def test_oracle_can_be_replaced_so_tests_can_make_privileged_access_fail(env: TabletopEnv) -> None:
    env.reset(
        options={"question": hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})}
    )

    class Refuse:
        def visual_support(self, frame_ids: list[int]) -> float:
            raise RuntimeError("privileged access during the episode")

    env.oracle = Refuse()  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match="privileged"):
        env.visual_support([0])


def test_non_tabletop_question_is_rejected_clearly(env: TabletopEnv) -> None:
    from eviseek.types import Question

    with pytest.raises(EnvError, match="not a tabletop question"):
        env.reset(options={"question": Question(id="x", text="?", subcategory="Nope")})


def test_same_question_renders_the_same_pixels_after_reuse(env: TabletopEnv) -> None:
    q = hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
    a, _ = env.reset(options={"question": q})
    env.step(Action(name="move_left"))
    b, _ = env.reset(options={"question": q})
    assert np.array_equal(a.image.array(), b.image.array())


def test_egl_renderer_option_renders_the_same_objects() -> None:
    try:
        env = TabletopEnv(renderer="egl", width=64, height=48)
        obs, _ = env.reset(
            options={
                "question": hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
            }
        )
    except EnvError as exc:  # pragma: no cover - machines without a GL stack
        pytest.skip(f"EGL not available here: {exc}")
    try:
        assert obs.image.array().shape == (48, 64, 3)
        uids = env.oracle.object_uids()
        assert obs.segmentation is not None and uids["gray_board"] in obs.segmentation
    finally:
        env.close()


def test_bad_renderer_and_budget_are_clear_errors() -> None:
    with pytest.raises(EnvError, match="tiny"):
        TabletopEnv(renderer="vulkan")
    with pytest.raises(EnvError, match="max_steps"):
        TabletopEnv(max_steps=0)


def test_the_pose_estimate_stays_within_the_cameras_real_bounds(env: TabletopEnv) -> None:
    # Issue 15 item 6: rising and tilting past the workspace bounds, the dead-reckoned estimate
    # (started at zero) ends where the camera really is relative to its start, not beyond.
    from eviseek.agents.eviseek.pose import PoseTracker

    q = hand_question(occlusion_scene(), "partial_occlusion", {"target": "red_cube"})
    obs, _ = env.reset(options={"question": q})
    start = obs.pose
    assert start is not None
    tracker = PoseTracker(env.legal_actions(), obs.metadata["pose_bounds"])
    last = obs
    for name in ["move_up"] * 7 + ["turn_down"] * 7:  # 1.75 m up, 105 degrees down: both clamp
        res = env.step(Action(name=name))
        tracker.apply(Action(name=name), res.feedback)
        last = res.observation
    assert res.feedback.state.get("clamped")
    assert last.pose is not None
    assert tracker.pose.z == pytest.approx(last.pose.z - start.z, abs=1e-6)
    assert tracker.pose.pitch == pytest.approx(last.pose.pitch - start.pitch, abs=1e-6)
    # Without declared bounds, the clamp the feedback reports stops the estimate too.
    env.reset(options={"question": q})
    blind = PoseTracker(env.legal_actions())
    for name in ["move_up"] * 7:
        blind.apply(Action(name=name), env.step(Action(name=name)).feedback)
    assert blind.pose.z <= 1.6 - start.z + 1e-6 and blind.bounds()["z"][1] == blind.pose.z


def test_a_mirror_under_a_renderer_that_cannot_draw_it_is_a_clear_error() -> None:
    """Mirrors are composited under TinyRenderer only; EGL would show a plain board where the
    question needs a reflection, so rendering a mirror scene there raises instead."""
    from eviseek.envs.tabletop import generate_questions
    from eviseek.envs.tabletop.scene import SceneSpec
    from eviseek.envs.tabletop.sim import TabletopSim

    (q,) = generate_questions(1, 5, subcategories=["reflection_authoring"], render_images=False)
    spec = SceneSpec.from_question(q.scene)
    sim = TabletopSim(spec, width=32, height=24)
    try:
        assert sim.render(spec.camera).reflection is not None  # TinyRenderer draws it
        sim.renderer = "egl"  # what an EGL client holds; the check does not need a GL stack
        with pytest.raises(EnvError, match="does not draw mirrors"):
            sim.render(spec.camera)
    finally:
        sim.close()
    try:
        env = TabletopEnv(renderer="egl", width=32, height=24)
    except EnvError as exc:  # pragma: no cover - machines without a GL stack
        pytest.skip(f"EGL not available here: {exc}")
    try:
        with pytest.raises(EnvError, match="does not draw mirrors"):
            env.reset(options={"question": q})
    finally:
        env.close()
