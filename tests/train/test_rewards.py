"""Reward values on literal completions, for every case of the AutoTool reward design."""

from __future__ import annotations

import pickle

import pytest

from eviseek.autotool.prompts import tool_error_text
from eviseek.models import ScriptedModel
from eviseek.train.amb import AMBConfig, AMBController
from eviseek.train.rewards import AccuracyReward, FormatReward, ToolReward, autotool_rewards

CALL = '<tool_call>{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [10, 20, 110, 220]}}</tool_call>'
BAD_CALL = '<tool_call>{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [10, 20]}}</tool_call>'

ON_CALL_RIGHT = f"<tool_on><think>zoom</think>{CALL}<think>I see it</think><answer>B</answer>"
ON_CALL_WRONG = f"<tool_on><think>zoom</think>{CALL}<think>hm</think><answer>A</answer>"
ON_BADCALL_RIGHT = f"<tool_on><think>zoom</think>{BAD_CALL}<think>anyway</think><answer>B</answer>"
ON_BADCALL_WRONG = f"<tool_on><think>zoom</think>{BAD_CALL}<think>anyway</think><answer>A</answer>"
ON_NOCALL_RIGHT = "<tool_on><think>no need after all</think><answer>B</answer>"
ON_NOCALL_WRONG = "<tool_on><think>no need after all</think><answer>A</answer>"
OFF_RIGHT = "<tool_off><think>plain</think><answer>B</answer>"
OFF_WRONG = "<tool_off><think>plain</think><answer>A</answer>"
OFF_CALL_RIGHT = f"<tool_off><think>oops</think>{CALL}<answer>B</answer>"
NO_MODE_RIGHT = "<think>plain</think><answer>B</answer>"
NO_ANSWER = f"<tool_on><think>zoom</think>{CALL}"


def _kw(n: int) -> dict:
    # Options in display order; the truth is the option text "blue" (letter B).
    return {
        "ground_truth": ["blue"] * n,
        "options": ['["red", "blue", "green"]'] * n,
        "answer_kind": ["option"] * n,
    }


CASES = [
    # (completion, accuracy, format, raw tool reward)
    (ON_CALL_RIGHT, 1.0, 0.0, 1.0),  # answer in the same turn as the call: format violation
    (ON_CALL_WRONG, 0.0, 0.0, -0.5),
    (ON_BADCALL_RIGHT, 1.0, 0.0, 0.0),  # no VALID call: no tool bonus
    (ON_BADCALL_WRONG, 0.0, 0.0, -0.5),  # a call was made and the answer is wrong
    (ON_NOCALL_RIGHT, 1.0, 1.0, 0.0),  # tool_on without any call: nothing (reward hacking guard)
    (ON_NOCALL_WRONG, 0.0, 1.0, 0.0),
    (OFF_RIGHT, 1.0, 1.0, 1.0),
    (OFF_WRONG, 0.0, 1.0, 0.0),
    (OFF_CALL_RIGHT, 1.0, 0.0, 0.0),  # tool_off but called the tool
    (NO_MODE_RIGHT, 1.0, 0.0, 0.0),
    (NO_ANSWER, 0.0, 0.0, -0.5),  # called the tool and never answered: a wrong answer
]


@pytest.mark.parametrize(("completion", "acc", "fmt", "tool"), CASES)
def test_each_reward_on_literal_completions(completion: str, acc: float, fmt: float, tool: float) -> None:
    kw = _kw(1)
    assert AccuracyReward()([completion], **kw) == [acc]
    assert FormatReward()([completion], **kw) == [fmt]
    assert ToolReward()([completion], **kw) == [tool]


def test_multi_turn_conversational_completions() -> None:
    right = [
        {"role": "assistant", "content": f"<tool_on><think>zoom</think>{CALL}"},
        {"role": "tool", "content": [{"type": "image"}]},
        {"role": "assistant", "content": "<think>I see it</think><answer>(B) blue</answer>"},
    ]
    failed_tool = [
        {"role": "assistant", "content": f"<tool_on><think>zoom</think>{CALL}"},
        {"role": "tool", "content": tool_error_text("box too small")},
        {"role": "assistant", "content": "<think>guess</think><answer>blue</answer>"},
    ]
    kw = _kw(2)
    assert AccuracyReward()([right, failed_tool], **kw) == [1.0, 1.0]
    assert FormatReward()([right, failed_tool], **kw) == [1.0, 1.0]
    # The failed zoom returned no image: it is not a valid call, so no tool bonus.
    assert ToolReward()([right, failed_tool], **kw) == [1.0, 0.0]


def test_penalty_is_configurable_and_weights_match_the_paper() -> None:
    kw = _kw(1)
    assert ToolReward(on_wrong=-0.2)([ON_CALL_WRONG], **kw) == [-0.2]
    funcs, weights = autotool_rewards()
    assert [f.__name__ for f in funcs] == ["accuracy", "format", "tool"]
    assert weights == [0.8, 0.2, 1.0]


def test_amb_scales_by_mode_and_logs_every_call() -> None:
    logged: list[tuple[str, float]] = []

    class State:
        global_step = 3

    tool = ToolReward(amb=AMBConfig(base=1.2, gain=2.0))
    completions = [OFF_RIGHT, OFF_RIGHT, OFF_RIGHT, ON_CALL_RIGHT]  # 25% tool-on
    out = tool(completions, **_kw(4), trainer_state=State(), log_metric=lambda k, v: logged.append((k, v)))
    # d = 0.25 - 0.5 = -0.25: lambda_on = 1.2 * 1.5 = 1.8, lambda_off = 1.2 * 0.5 = 0.6
    assert out == pytest.approx([0.6, 0.6, 0.6, 1.8])
    metrics = dict(logged)
    assert metrics["amb/ratio_on"] == 0.25
    assert metrics["amb/lambda_on"] == pytest.approx(1.8) and metrics["amb/lambda_off"] == pytest.approx(0.6)
    assert tool.amb is not None and tool.amb.history[-1].step == 3


def test_ground_truth_from_deepeyes_reward_model_column_and_letters() -> None:
    acc = AccuracyReward()
    kw = {"reward_model": [{"ground_truth": "B"}], "options": [["red", "blue"]]}
    assert acc([OFF_RIGHT], **kw) == [1.0]
    assert acc(["<tool_off><think>x</think><answer>3</answer>"], ground_truth=["3"]) == [1.0]
    assert acc(["<tool_off><think>x</think><answer>no</answer>"], ground_truth=["yes"]) == [0.0]
    long_answer = "<tool_off><think>x</think><answer>" + "blue " * 300 + "</answer>"
    assert acc([long_answer], **_kw(1)) == [0.0]


def test_grounding_answers_by_iou() -> None:
    acc = AccuracyReward()
    kw = {"ground_truth": ["[0, 0, 100, 100]"], "answer_kind": ["bbox"]}
    assert acc(['<tool_off><think>x</think><answer>{"bbox_2d": [5, 5, 100, 100]}</answer>'], **kw) == [1.0]
    assert acc(['<tool_off><think>x</think><answer>{"bbox_2d": [60, 60, 160, 160]}</answer>'], **kw) == [0.0]


def test_llm_judge_decides_what_rules_cannot() -> None:
    def judge_reply(messages, config):  # type: ignore[no-untyped-def]
        assert config.stage == "judge" and config.response_schema is not None
        candidate = config.metadata["candidate"]
        assert f"Candidate answer: {candidate}" in messages[-1].text()
        return '{"equivalent": true}' if "two" in candidate else '{"equivalent": false}'

    judge = ScriptedModel(judge_reply, name="scripted/judge")
    acc = AccuracyReward(judge=judge)
    completions = [
        "<tool_off><think>x</think><answer>a couple of two dogs</answer>",
        "<tool_off><think>x</think><answer>a cat</answer>",
        "<tool_off><think>x</think><answer>two dogs</answer>",
    ]
    out = acc(completions, ground_truth=["two dogs"] * 3, answer_kind=["text"] * 3)
    assert out == [1.0, 0.0, 1.0]
    assert len(judge.requests) == 2  # the exact match never reached the judge
    # A tool reward sharing this accuracy reward reuses its verdicts: no new judge call.
    tool = ToolReward(accuracy=acc)
    assert tool(completions[:1], ground_truth=["two dogs"], answer_kind=["text"]) == [1.0]
    assert len(judge.requests) == 2


def test_rewards_are_picklable_and_named() -> None:
    tool = ToolReward(amb=AMBController(base=1.0))
    for f in (AccuracyReward(judge="openai/some-judge"), FormatReward(), tool):
        g = pickle.loads(pickle.dumps(f))
        assert g.__name__ == f.__name__
    g = pickle.loads(pickle.dumps(tool))
    # An all-tool-off batch: lambda_off = 1.0 * clip(1 + 2 * (0 - 0.5), 0.25, 2) = 0.25.
    assert g([OFF_RIGHT], **_kw(1)) == [0.25]


def test_reward_settings_are_the_one_source_of_the_weights() -> None:
    from eviseek.train.rewards import (
        DEEPEYES_ACCURACY_WEIGHT,
        DEEPEYES_FORMAT_WEIGHT,
        RewardSettings,
        build_reward_functions,
        total_reward,
    )

    s = RewardSettings()
    assert (
        (s.accuracy_weight, s.format_weight)
        == (DEEPEYES_ACCURACY_WEIGHT, DEEPEYES_FORMAT_WEIGHT)
        == (0.8, 0.2)
    )
    funcs, weights = build_reward_functions(s)
    assert [f.__name__ for f in funcs] == ["accuracy", "format", "tool"] and weights == [0.8, 0.2, 1.0]
    text_funcs, text_weights = build_reward_functions(RewardSettings(tool_scheme="none"))
    assert [f.__name__ for f in text_funcs] == ["accuracy", "format"] and text_weights == [0.8, 0.2]
    assert total_reward(s, 1.0, 1.0, 1.2) == pytest.approx(2.2)
    assert total_reward(RewardSettings(tool_scheme="none"), 1.0, 0.0, 1.2) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="reward wrong answers"):
        RewardSettings(on_wrong=0.5)


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (ON_CALL_RIGHT, 1.2),
        (ON_CALL_WRONG, 0.0),
        (ON_BADCALL_RIGHT, 0.0),
        (OFF_RIGHT, 0.0),
        (OFF_CALL_RIGHT, 1.2),
    ],
)
def test_deepeyes_tool_reward_ignores_the_mode(completion: str, expected: float) -> None:
    from eviseek.train.rewards import DeepEyesToolReward

    assert DeepEyesToolReward()([completion], **_kw(1)) == [pytest.approx(expected)]
