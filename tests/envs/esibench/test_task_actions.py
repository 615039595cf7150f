"""The bridge for each of ESI-Bench's 19 task modules, against the recording stand-in: the task's
own actions offered by name (with arguments and the scene's object names) and written back as the
task's phrases, its text reaching the agents, its forced-choice prompt, and the slide frames."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eviseek.agents.single_model import SingleModelAgent
from eviseek.envs.base import as_async
from eviseek.envs.esibench import ESIBenchEnv
from eviseek.eval.datasets import load_dataset
from eviseek.models.scripted import ScriptedModel
from eviseek.types import Action, ChatMessage, GenerateConfig, Question
from eviseek.types.taxonomy import TASK_MODULES
from tests.eval.esibench.conftest import FIXTURES

CAMERA = {
    "move_forward",
    "move_backward",
    "move_left",
    "move_right",
    "move_up",
    "move_down",
    "turn_left",
    "turn_right",
    "turn_up",
    "turn_down",
    "stop",
}
# What the stand-in's prompt for each task offers beyond the camera (see standin/pipeline.py).
EXPECTED = {
    "slope": {"put_on_slope": ([], "put_on_slope")},
    "transparent": {"pickup": ([], "pickup"), "pour": ([], "pour")},
    "pour": {
        "fill_water_in": (["object"], "fill water in red mug"),
        "pour_into": (["object", "target"], "pour red mug into tray"),
    },
    "stacking": {
        "pick_up": (["object"], "pick up red mug"),
        "place_on_top_of": (["object", "target"], "place red mug on top of tray"),
        "place_on_the_floor": (["object"], "place red mug on the floor"),
    },
    "storage": {
        "pick_up": (["object"], "pick up red mug"),
        "put_inside": (["object", "container"], "put red mug inside tray"),
    },
    "counting": {
        "pick_up": (["object"], "pick up red mug"),
        "place_on_top_of": (["object", "target"], "place red mug on top of tray"),
        "put_back": (["object"], "put back red mug"),
    },
    "size": {
        "pick_up_obj_near_red_mug": ([], "pick_up_obj_near_red mug"),
        "pick_up_obj_near_tray": ([], "pick_up_obj_near_tray"),
    },
    "action": {
        "pick_up": (["object"], "pick up red mug"),
        "place_on_top_of": (["object", "target"], "place red mug on top of tray"),
        "put_back": (["object"], "put back red mug"),
    },
}


def question_for(task: str) -> Question:
    """A fixture record served by ``task`` (the stand-in builds every task's scene alike)."""
    q = next(
        q for q in load_dataset(f"esibench:{FIXTURES}?tasktext=off") if q.subcategory == "Physical Contact"
    )
    esi = {**q.metadata["esibench"], "task": task}
    return q.model_copy(update={"metadata": {**q.metadata, "esibench": esi}}, deep=True)


def test_the_stand_in_serves_the_19_task_modules() -> None:
    from tests.envs.esibench.standin.pipeline import TASK_NAMES

    assert sorted(TASK_NAMES) == sorted(TASK_MODULES) and len(TASK_MODULES) == 19


@pytest.mark.parametrize("task", TASK_MODULES)
def test_each_task_offers_its_own_actions_by_name(standin, tmp_path: Path, task: str) -> None:
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    q = question_for(task)
    _, info = env.reset(options={"question": q})
    legal = {s.name: s for s in env.legal_actions()}
    own = {n: s for n, s in legal.items() if n not in CAMERA}
    expected = EXPECTED.get(task, {})
    assert set(own) == set(expected), task
    assert "physical" not in legal  # no free-text action any more
    for name, (params, phrase) in expected.items():
        spec = own[name]
        assert spec.kind == "manipulation" and spec.params == params
        assert all(spec.choices[p] == ["red mug", "tray"] for p in params)
        args = dict(zip(params, ["red mug", "tray"], strict=False))
        standin.CALLS.clear()
        result = env.step(Action(name=name, args=args))
        assert [c[1] for c in standin.CALLS if c[0] == "execute_action"] == [phrase]
        assert result.feedback.operation != "" and result.observation.frame_id >= 1
    if params := [p for p, _ in expected.values() if p]:
        missing = env.step(Action(name=next(n for n, (p, _) in expected.items() if p), args={}))
        assert not missing.feedback.success and "needs the argument" in missing.feedback.reason
    # The task text reached the question at reset (it was loaded without a checkout).
    text = q.metadata["esibench"]["task_text"]
    assert info["task_text"] == text and text["task"] == task
    assert f"STANDIN ADVICE for {task}" in q.guidance and "JSON" not in q.guidance
    assert text["forced_choice_prompt"] == f"STANDIN FORCED CHOICE for {task}: give one final answer as JSON."
    env.close()


def test_the_slide_comes_back_as_action_frames(standin, tmp_path: Path) -> None:
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    env.reset(options={"question": question_for("slope")})
    moved = env.step(Action(name="move_forward"))
    slid = env.step(Action(name="put_on_slope"))
    frames = slid.observation.action_frames
    assert len(frames) == 3 and [f.frame_id for f in frames] == [2, 3, 4]
    assert slid.observation.frame_id == 5 and moved.observation.frame_id == 1
    assert frames[0].image.array()[0, 0, 0] == 40 and frames[2].image.array()[0, 0, 0] == 120
    after = env.step(Action(name="turn_left"))
    assert after.observation.frame_id == 6 and not after.observation.action_frames
    env.close()


def _single_model(task: str, replies: list[str], tmp: Path, **cfg):
    seen: list[tuple[list[ChatMessage], GenerateConfig]] = []
    script = iter(replies)

    def reply(messages, config):
        seen.append((list(messages), config))
        return next(script)

    agent = SingleModelAgent(**{"budget": 3, **cfg})
    env = ESIBenchEnv(step_image_root=str(tmp / "steps"))
    traj = asyncio.run(agent.run(as_async(env), question_for(task), ScriptedModel(reply)))
    env.close()
    return traj, seen


@pytest.mark.parametrize("task", TASK_MODULES)
def test_single_model_gets_the_task_text_and_its_forced_choice(standin, tmp_path: Path, task: str) -> None:
    look = json.dumps({"action": "turn_left", "answer": "banana", "confidence": 0.1, "reasoning": "?"})
    forced = json.dumps({"answer": "yes", "confidence": 0.6, "reasoning": "best guess"})
    traj, seen = _single_model(task, [look] * 3 + [forced], tmp_path)  # 3 calls (budget 3), then forced
    first = "\n".join(m.text() for m in seen[0][0])
    assert f"STANDIN ADVICE for {task}" in first
    for name in EXPECTED.get(task, {}):
        assert name in first, (task, name)
    last = "\n".join(m.text() for m in seen[-1][0])
    assert f"STANDIN FORCED CHOICE for {task}" in last and seen[-1][1].temperature == 0.0
    assert traj.result is not None and traj.result.raw_answer == "yes"


def test_single_model_answers_on_the_slide_frames(standin, tmp_path: Path) -> None:
    put = json.dumps(
        {"action": "put_on_slope", "answer": "unsure", "confidence": 0.1, "reasoning": "test it"}
    )
    seen_it = json.dumps({"action": "stop", "answer": "no", "confidence": 0.9, "reasoning": "it slid"})
    traj, seen = _single_model("slope", [put, seen_it], tmp_path, budget=5)
    assert traj.steps[0].action.name == "put_on_slope" and len(traj.steps[0].action_frames) == 3
    # The call after the put sees the three slide frames as well as the view after them.
    assert len(seen[1][0][-1].images()) >= 4
    assert traj.result is not None and traj.result.raw_answer == "no"


async def test_eviseek_runs_the_tasks_own_physical_test_and_answers_on_its_frames(
    standin, tmp_path: Path
) -> None:
    from eviseek.agents import make_agent
    from tests.agents.scripts import StageScript

    script = StageScript(
        demands=[{"demands": [{"text": "how the object moves once released on the ramp"}]}],
        plan=[{"subtasks": [{"goal": "release it on the slope and watch", "demand": 1}]}],
        seek=[{"intent": "put_on_slope", "args": {}}, {"intent": "DONE"}],
        curate=lambda cfg: {"frames": []},
        answer=[{"answer": "no", "reasoning": "it slid down"}],
    )
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    q = question_for("slope")
    traj = await make_agent("eviseek:paper").run(as_async(env), q, script.model())
    env.close()
    # The intent library offered the task's action as a physical test and compiled it onto it.
    assert [s.action.name for s in traj.steps] == ["put_on_slope"]
    assert [c[1] for c in standin.CALLS if c[0] == "execute_action"] == ["put_on_slope"]
    demands_prompt = script.calls("demands")[0][1][-1].text()
    assert "put_on_slope" in demands_prompt and "STANDIN ADVICE for slope" in demands_prompt
    # The answer call was made on the slide's frames (and the view after them), as on the tabletop.
    assert traj.plan.answered_from == "action_frames" and len(traj.answer_images) == 4
    assert "STANDIN ADVICE for slope" in script.calls("answer")[0][1][-1].text()
    assert traj.result is not None and traj.result.raw_answer == "no"


def test_the_viewer_shows_the_task_text(standin, tmp_path: Path) -> None:
    from eviseek.viewer import ImageSourcer, build_episode_view

    look = json.dumps({"action": "stop", "answer": "yes", "confidence": 0.9, "reasoning": "seen"})
    traj, _ = _single_model("pour", [look], tmp_path)
    q = question_for("pour")
    env = ESIBenchEnv(step_image_root=str(tmp_path / "s2"))
    env.reset(options={"question": q})
    env.close()
    view = build_episode_view(traj, ImageSourcer(tmp_path, tmp_path / "page.html"), question=q)
    assert view.question.task_actions == ["fill water in <object>", "pour <object> into <object>"]
    assert view.question.forced_choice_prompt.startswith("STANDIN FORCED CHOICE for pour")
    assert view.question.task_text_source.startswith("tasks/pour.py:build_system_prompt")


@pytest.mark.parametrize("task", TASK_MODULES)
async def test_eviseek_is_offered_every_own_action_of_the_task(standin, tmp_path: Path, task: str) -> None:
    from eviseek.agents import make_agent
    from tests.agents.scripts import StageScript

    script = StageScript(
        demands=[{"demands": [{"text": "what the objects do"}]}],
        plan=[{"subtasks": [{"goal": "look", "demand": 1}]}],
        seek=[{"intent": "DONE"}],
        curate=lambda cfg: {"frames": []},
        answer=[{"answer": "yes", "reasoning": "seen"}],
    )
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    await make_agent("eviseek:paper").run(as_async(env), question_for(task), script.model())
    env.close()
    seek = script.calls("seek")[0][1][-1].text()
    for name in EXPECTED.get(task, {}):
        assert name in seek, (task, name)
