"""Held-out evaluation helpers that need no model."""

from __future__ import annotations

import pytest

from eviseek.train.policy_eval import box_iou


def test_box_iou() -> None:
    assert box_iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert box_iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0  # touching edges share no area
    assert box_iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert box_iou([5, 5, 5, 5], [5, 5, 5, 5]) == 0.0  # empty boxes
