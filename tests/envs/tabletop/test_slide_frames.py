"""Inclined Plane's slide frames: the put action's outcome carries frames of the physics
simulation, both agents' answer calls see them, and the reference policy answers from their
pixels alone.

The truth each check compares with is derived from the stored scene spec (static friction holds
when the cube's friction times the ramp's exceeds the tangent of the ramp's angle), not from the
family's code or its feedback.
"""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from eviseek.agents import make_agent
from eviseek.answers import score_answer
from eviseek.envs import as_async
from eviseek.envs.tabletop import TabletopEnv, generate_questions
from eviseek.envs.tabletop.scene import SceneSpec
from eviseek.models.reference import ReferenceModel
from eviseek.models.reference.motion import solve_slide_frames
from eviseek.models.reference.task import read_task
from eviseek.models.reference.vision import analyse
from eviseek.types import Action, Question
from eviseek.types.plans import EviSeekPlan, SingleModelPlan


@cache
def slope_questions() -> tuple[Question, ...]:
    return tuple(generate_questions(4, 31, subcategories=["inclined_plane"], render_images=True))


def stays(q: Question) -> bool:
    s = SceneSpec.model_validate(q.scene)
    ramp = s.object(q.metadata["ramp"])
    return s.object(q.metadata["object"]).friction * ramp.friction > ramp.size[2] / ramp.size[0]


def test_the_put_carries_the_slide_frames_and_only_the_last_is_its_outcome() -> None:
    env = TabletopEnv(width=160, height=120)
    try:
        for q in slope_questions():
            obs, _ = env.reset(options={"question": q})
            assert obs.action_frames == []
            res = env.step(Action(name="put_on_slope", args={"object": q.metadata["object"]}))
            frames = res.observation.action_frames
            ids = [f.frame_id for f in frames]
            assert len(frames) == 6 and ids == list(range(1, res.observation.frame_id))
            assert [o.frame_id for o in res.observation.motion()] == [*ids, res.observation.frame_id]
            # The pixels change while the cube slides and stay put while it holds.
            first, last = frames[0].image.array(), res.observation.image.array()
            changed = int(np.any(first != last, axis=2).sum())
            assert (changed < 30) == stays(q), (q.id, changed)
            # The release frame alone is no evidence of the outcome; the next one shows it unfolding.
            assert env.visual_support([ids[0]]) == 0.0
            assert env.visual_support([ids[1]]) == 1.0
            assert env.visual_support([*ids, res.observation.frame_id]) == 1.0
            assert env.steps_taken == 1  # one step, however many frames
            assert env.step(Action(name="turn_left")).observation.action_frames == []
    finally:
        env.close()


def test_the_reference_policy_reads_the_slide_from_pixels_alone() -> None:
    env = TabletopEnv(width=320, height=240, privileged=False)
    try:
        for q in slope_questions():
            env.reset(options={"question": q})
            res = env.step(Action(name="put_on_slope", args={"object": q.metadata["object"]}))
            task = read_task(q.text, {"options": ["yes", "no"], "answer_kind": "yes_no"})
            verdict = solve_slide_frames(task, [analyse(o.image) for o in res.observation.motion()])
            assert verdict is not None and verdict.answer == ("yes" if stays(q) else "no"), (q.id, verdict)
    finally:
        env.close()


@pytest.mark.parametrize("agent_name", ["single-model", "eviseek"])
def test_the_answer_call_after_the_put_sees_the_frames(agent_name: str) -> None:
    env = TabletopEnv(width=320, height=240, privileged=True)
    agent = make_agent(agent_name)
    try:
        for q in slope_questions()[:2]:
            traj = asyncio.run(agent.run(as_async(env), q, ReferenceModel()))
            put = [s for s in traj.steps if s.action.name == "put_on_slope"]
            assert len(put) == 1 and len(put[0].action_frames) == 6
            motion_ids = [*put[0].action_frame_ids, put[0].frame_id]
            assert traj.answer_frame_ids[-7:] == motion_ids
            assert traj.result is not None and traj.result.answer == ("yes" if stays(q) else "no")
            assert score_answer(q, traj.result.answer).correct
            assert env.visual_support(list(traj.answer_frame_ids)) == 1.0
            if agent_name == "single-model":
                assert isinstance(traj.plan, SingleModelPlan)
                assert traj.plan.ended_by in ("action_frames", "stop")
            # The call that answered saw every frame of the slide.
            answering = [c for c in traj.calls if (c.config.metadata or {}).get("motion_frames") == 7]
            assert answering, [c.stage for c in traj.calls]
    finally:
        env.close()


def test_the_slide_frames_cross_the_remote_env_wire_with_their_pixels() -> None:
    from eviseek.envs.remote import RemoteEnv, serve_registered

    token = "test-token-slide-0123456789"
    q = slope_questions()[0]
    act = Action(name="put_on_slope", args={"object": q.metadata["object"]})
    local = TabletopEnv(width=96, height=72)
    try:
        local.reset(options={"question": q})
        want = local.step(act).observation
    finally:
        local.close()
    with serve_registered("eviseek/Tabletop-v0", {"width": 96, "height": 72}, token=token) as server:
        for images in ("png", "raw"):
            remote = RemoteEnv(server.url, token=token, images=images)
            try:
                remote.reset(options={"question": q})
                got = remote.step(act).observation
            finally:
                remote.close()
            assert [f.frame_id for f in got.action_frames] == [f.frame_id for f in want.action_frames]
            assert [f.image.digest() for f in got.motion()] == [f.image.digest() for f in want.motion()]


def test_board_replay_of_a_slide_answer_asks_the_frames_again(tmp_path: Path) -> None:
    """An episode answered on an action's frames is replayed through that same call, from the
    saved trajectory's frames (the answer memory does not apply to it)."""
    from eviseek.agents import replay_answer
    from eviseek.types import Trajectory

    env = TabletopEnv(width=320, height=240, privileged=False)
    q = slope_questions()[1]
    try:
        traj = asyncio.run(make_agent("eviseek").run(as_async(env), q, ReferenceModel()))
    finally:
        env.close()
    assert isinstance(traj.plan, EviSeekPlan) and traj.plan.answered_from == "action_frames"
    traj.save(tmp_path / "ep")
    again = asyncio.run(replay_answer(tmp_path / "ep", q, ReferenceModel(), "recent"))
    assert again.answer_frame_ids == traj.answer_frame_ids
    assert again.result is not None and again.result.answer == traj.result.answer == (
        "yes" if stays(q) else "no"
    )
    assert Trajectory.load(tmp_path / "ep").steps[-1].action_frames  # the frames were saved with it


def test_cli_render_runs_fill_and_writes_the_slide_frames(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from eviseek.cli.main import app
    from eviseek.types.question_file import write_questions

    liquid = [
        q
        for q in generate_questions(2, 21, subcategories=["liquid_volume"])
        if q.metadata["form"] == "capacity"
    ]
    slope = slope_questions()[0]
    write_questions(tmp_path / "qs", [*liquid, slope])
    runner = CliRunner()
    a, b = liquid[0].metadata["containers"]
    png = tmp_path / "fill.png"
    acts = f"fill(object={a}),pour(object={a}, target={b})"
    res = runner.invoke(
        app, ["tabletop", "render", str(tmp_path / "qs"), "--id", liquid[0].id, "-a", acts, "-o", str(png)]
    )
    assert res.exit_code == 0, res.output
    assert f"fill(object={a}) -> fill: ok" in res.output and "overflowed=" in res.output
    assert png.exists() and not list(tmp_path.glob("fill-frame*.png"))  # a pour renders no frames
    png = tmp_path / "slide.png"
    act = f"put_on_slope(object={slope.metadata['object']})"
    res = runner.invoke(
        app, ["tabletop", "render", str(tmp_path / "qs"), "--id", slope.id, "-a", act, "-o", str(png)]
    )
    assert res.exit_code == 0, res.output
    frames = sorted(tmp_path.glob("slide-frame*.png"))
    assert len(frames) == 6 and "frame 6 of 7" in res.output
    assert all(f.read_bytes()[:4] == b"\x89PNG" for f in frames)
