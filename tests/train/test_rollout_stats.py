"""Batch statistics of rollouts: mode shares per question kind, valid calls, accuracy."""

from __future__ import annotations

import pytest

from eviseek.autotool.parser import parse_completion
from eviseek.train.rollout_stats import rollout_stats

CALL = '<tool_call>{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 16, 16]}}</tool_call>'
ON_VALID = f"<tool_on><think>zoom</think>{CALL}"
ON_BAD = '<tool_on><think>zoom</think><tool_call>{"name": "image_zoom_in_tool"}</tool_call>'
OFF = "<tool_off><think>plain</think><answer>A</answer>"
NONE = "<answer>A</answer>"


def test_shares_are_split_by_question_kind() -> None:
    eps = [parse_completion(c) for c in (ON_VALID, ON_BAD, OFF, OFF, NONE, ON_VALID)]
    stats = rollout_stats(eps, [True, False, True, False, True, True], [1, 1, 0, 0, 0, -1])
    assert stats["accuracy"] == pytest.approx(4 / 6)
    assert stats["tool_on_share"] == pytest.approx(3 / 6)
    assert stats["tool_on_share_need_zoom"] == 1.0 and stats["tool_on_share_no_need"] == 0.0
    assert stats["accuracy_need_zoom"] == 0.5 and stats["accuracy_no_need"] == pytest.approx(2 / 3)
    assert stats["valid_call_rate"] == pytest.approx(2 / 3)
    assert stats["no_mode_share"] == pytest.approx(1 / 6)


def test_empty_denominators_are_left_out() -> None:
    stats = rollout_stats([parse_completion(OFF)], [True], [None])
    assert "valid_call_rate" not in stats and "tool_on_share_need_zoom" not in stats
    assert stats["tool_on_share"] == 0.0
