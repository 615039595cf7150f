"""The AutoTool episode loop with the scripted model: modes, crops, errors, forcing, turn limit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from eviseek.agents.autotool import AutoToolAgent
from eviseek.envs import as_async
from eviseek.envs.image.env import ImageZoomEnv
from eviseek.models import ScriptedModel
from eviseek.types import AnswerContract, ChatMessage, GenerateConfig, Image, Trajectory


def _question():  # type: ignore[no-untyped-def]
    from eviseek.types import Question

    arr = np.full((2000, 3000, 3), 90, dtype=np.uint8)
    arr[1200:1260, 2400:2460] = (0, 0, 255)  # a small blue square
    return Question(
        id="q1",
        text="What colour is the small square?\n(A) red\n(B) blue",
        contract=AnswerContract(kind="option", options=["red", "blue"]),
        ground_truth="blue",
        initial_image=Image.from_array(arr),
    )


def _call(box: Sequence[float], label: str = "square") -> str:
    body = {"name": "image_zoom_in_tool", "arguments": {"bbox_2d": list(box), "label": label}}
    return f"<tool_call>{json.dumps(body)}</tool_call>"


def _run(agent: AutoToolAgent, model: ScriptedModel, max_pixels: int | None = 600_000) -> Trajectory:
    env = as_async(ImageZoomEnv(max_pixels=max_pixels))
    return asyncio.run(agent.run(env, _question(), model))


def test_tool_on_episode_returns_the_crop_as_a_new_image_turn() -> None:
    # Shown frame: 3000x2000 capped to 600k px -> 948x632 (scale 0.316).
    s = 948 / 3000
    box = [2390 * s, 1190 * s, 2470 * s, 1270 * s]
    model = ScriptedModel(
        [
            f"<tool_on><think>the square is small</think>{_call(box)}",
            "<think>it is blue</think><answer>B</answer>",
        ]
    )
    traj = _run(AutoToolAgent(), model)
    r = traj.result
    assert r is not None and r.mode == "tool_on" and r.answer == "B" and r.steps == 1 and r.calls == 2
    assert traj.plan.shown_size == (948, 632) and traj.plan.declared
    # The second request carries the crop, cut from the original at full resolution.
    messages, cfg = model.requests[1]
    assert cfg.stage == "autotool" and cfg.response_schema is not None
    last = messages[-1]
    assert last.role == "user" and "<tool_response>" in last.text()
    crop = last.images()[0].array()
    assert crop.shape[0] >= 80 and crop.shape[1] >= 80
    assert ((crop == (0, 0, 255)).all(axis=-1)).sum() == 60 * 60  # the whole square, unblurred
    assert traj.steps[0].image is not None and traj.steps[0].frame_id == 1
    assert traj.answer_frame_ids == [0, 1] and len(traj.answer_images) == 2
    assert traj.events == []


def test_tool_off_episode_answers_directly() -> None:
    model = ScriptedModel(["<tool_off><think>easy</think><answer>blue</answer>"])
    traj = _run(AutoToolAgent(), model)
    assert traj.result is not None and traj.result.mode == "tool_off" and traj.result.steps == 0
    assert traj.result.answer == "blue" and traj.result.calls == 1
    first_user = model.requests[0][0][1]
    assert first_user.images()[0].width == 948
    assert "948x632" in first_user.text()


def test_invalid_calls_go_back_to_the_model_and_the_episode_continues() -> None:
    model = ScriptedModel(
        [
            "<tool_on><think>zoom</think><tool_call>{not json</tool_call>",
            f"<think>again</think>{_call([10, 10, 11, 11])}",  # too small after mapping
            f"<think>once more</think>{_call([700, 360, 790, 420])}",
            "<think>got it</think><answer>B</answer>",
        ]
    )
    traj = _run(AutoToolAgent(max_turns=5), model)
    assert traj.result is not None and traj.result.answer == "B"
    errors = [e for e in traj.events if e.kind == "tool_error"]
    assert len(errors) == 2 and "not valid JSON" in errors[0].message and "too small" in errors[1].message
    second = model.requests[1][0][-1].text()
    assert "Zoom failed:" in second and "not valid JSON" in second
    assert [s.feedback.success for s in traj.steps] == [False, True]


def test_tool_call_in_tool_off_mode_is_refused() -> None:
    model = ScriptedModel(
        [f"<tool_off><think>hm</think>{_call([0, 0, 100, 100])}", "<think>fine</think><answer>A</answer>"]
    )
    traj = _run(AutoToolAgent(), model)
    assert traj.result is not None and traj.result.mode == "tool_off" and traj.result.steps == 0
    assert "tool_off" in model.requests[1][0][-1].text()
    assert any(e.message == "turn 0: tool_call_in_tool_off" for e in traj.events)


@pytest.mark.parametrize("how", ["token", "instruction"])
def test_forced_mode(how: str) -> None:
    model = ScriptedModel(["<think>told to answer</think><answer>B</answer>"])
    traj = _run(AutoToolAgent(force_mode="tool_off", force_how=how), model)  # type: ignore[arg-type]
    text = model.requests[0][0][1].text()
    if how == "token":
        assert text.rstrip().endswith("<tool_off>")
    else:
        assert "answer directly without calling any tool" in text
    assert traj.result is not None and traj.result.mode == "tool_off" and not traj.plan.declared
    assert not [e for e in traj.events if "missing_mode" in e.message]


def test_turn_limit_asks_for_an_answer_and_stops() -> None:
    replies = [f"<tool_on><think>z</think>{_call([100, 100, 300, 300])}"] + [
        f"<think>z</think>{_call([100, 100, 300, 300])}"
    ] * 5
    model = ScriptedModel(replies)
    traj = _run(AutoToolAgent(max_turns=3), model)
    assert traj.result is not None and traj.result.calls == 3 and traj.result.answer is None
    # Not answering is a wrong answer (logged), not a failed episode.
    assert traj.result.error is None
    assert [e.kind for e in traj.events if e.kind == "no_answer"] == ["no_answer"]
    assert "used all zoom steps" in model.requests[2][0][-1].text()
    assert traj.result.steps == 2  # the last turn's call is not executed


def test_missing_mode_is_inferred_and_logged() -> None:
    model = ScriptedModel(["<think>x</think><answer>blue</answer>"])
    traj = _run(AutoToolAgent(), model)
    assert traj.result is not None and traj.result.mode == "tool_off"
    assert any(e.kind == "missing_mode" for e in traj.events)


def test_no_action_turn_gets_a_nudge() -> None:
    model = ScriptedModel(["<tool_on><think>thinking...</think>", "<think>ok</think><answer>B</answer>"])
    traj = _run(AutoToolAgent(), model)
    assert "neither a <tool_call> nor an <answer>" in model.requests[1][0][-1].text()
    assert traj.result is not None and traj.result.answer == "B"


def test_trajectory_saves_and_loads(tmp_path: Path) -> None:
    s = 948 / 3000
    model = ScriptedModel(
        [
            f"<tool_on><think>z</think>{_call([2390 * s, 1190 * s, 2470 * s, 1270 * s])}",
            "<think>b</think><answer>B</answer>",
        ]
    )
    traj = _run(AutoToolAgent(), model)
    traj.save(tmp_path)
    back = Trajectory.load(tmp_path)
    assert back.result == traj.result and len(back.steps) == 1
    assert back.steps[0].image is not None and back.steps[0].image.path is not None
    assert (tmp_path / back.steps[0].image.path).exists()


def test_generate_settings_are_merged_with_the_stage() -> None:
    seen: list[GenerateConfig] = []

    def reply(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
        seen.append(config)
        return "<tool_off><think>x</think><answer>B</answer>"

    agent = AutoToolAgent(generate=GenerateConfig(temperature=0.7, max_tokens=99))
    _run(agent, ScriptedModel(reply))
    assert seen[0].temperature == 0.7 and seen[0].max_tokens == 99 and seen[0].stage == "autotool"
    assert seen[0].metadata["options"] == ["red", "blue"]


def test_bad_agent_settings_raise() -> None:
    with pytest.raises(ValueError):
        AutoToolAgent(max_turns=0)
    with pytest.raises(ValueError):
        AutoToolAgent(force_mode="sometimes")  # type: ignore[arg-type]


def test_grounding_questions_get_the_plain_system_prompt_and_the_grounding_request() -> None:
    from eviseek.autotool.prompts import GROUNDING_SYSTEM
    from eviseek.types import Question

    arr = np.full((400, 600, 3), 90, dtype=np.uint8)
    q = Question(
        id="g1",
        text='Find "the blue cup" in the image and give its bounding box.',
        contract=AnswerContract(kind="bbox"),
        ground_truth="[10, 20, 110, 220]",
        initial_image=Image.from_array(arr),
        metadata={"expression": "the blue cup"},
    )
    model = ScriptedModel(['<think>left</think><answer>{"bbox_2d": [10, 20, 110, 220]}</answer>'])
    env = as_async(ImageZoomEnv(max_pixels=None))
    traj = asyncio.run(AutoToolAgent().run(env, q, model))
    system, user = model.requests[0][0][:2]
    assert system.text() == GROUNDING_SYSTEM
    assert '"the blue cup"' in user.text() and "<tool_on>" not in user.text() and "bbox_2d" in user.text()
    assert traj.result is not None and traj.result.answer is not None and "bbox_2d" in traj.result.answer


def test_reasoning_question_is_asked_with_its_official_prompt_and_scored_by_its_rules() -> None:
    from eviseek.autotool.official import official_prompt
    from eviseek.autotool.scoring import answer_text, score_episode_answer

    q = _question()
    q.contract = AnswerContract(kind="option", options=["1", "2", "3"])
    q.ground_truth = "C"
    q.metadata = {"benchmark": "mathvision", "prompt_style": "official", "question_raw": "How many?"}
    model = ScriptedModel(["<tool_off><think>three</think> so the count is \\boxed{C}"])
    env = as_async(ImageZoomEnv(max_pixels=600_000))
    traj = asyncio.run(AutoToolAgent().run(env, q, model))
    # The benchmark's own prompt is the user turn (the protocol's system prompt stays), and a reply
    # in the benchmark's format ends the episode without an <answer> block.
    messages, _ = model.requests[0]
    assert messages[1].text() == official_prompt(q) and messages[0].role == "system"
    assert traj.result is not None and traj.result.calls == 1
    verdict = score_episode_answer(q, answer_text(traj.plan, traj.result.raw_answer), traj.plan)
    assert verdict.correct and verdict.answer == "C"
