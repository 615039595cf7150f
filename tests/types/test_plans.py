"""The plan records read what agents store in Trajectory.plan, old saved forms included."""

from __future__ import annotations

from eviseek.types import Trajectory
from eviseek.types.plans import (
    AutoToolPlanRecord,
    EviSeekPlanRecord,
    FrontierPlanRecord,
    SingleModelPlanRecord,
)


def test_old_and_partial_plans_read_with_defaults_and_keep_unknown_keys() -> None:
    old = {"demands": [{"id": 1, "text": "the top"}], "subtasks": [{"id": 1, "demand": 1}], "note": "x"}
    traj = Trajectory.model_validate({"episode_id": "e", "question_id": "q", "agent": "eviseek", "plan": old})
    record = EviSeekPlanRecord.model_validate(traj.plan)
    assert (
        record.subtasks[0].goal == "" and record.subtasks[0].status == "pending" and record.mode == "active"
    )
    assert record.model_extra == {"note": "x"}
    assert SingleModelPlanRecord.model_validate({"ended_by": "answer"}).ended_by == "answer"
    assert FrontierPlanRecord.model_validate({"stretches": [{"goal": 3}]}).map == {}
    auto = AutoToolPlanRecord.model_validate(
        {"mode": "tool_on", "shown_size": [640, 480], "original_size": None}
    )
    assert auto.shown_size == (640, 480) and auto.original_size is None
