"""Trajectory.plan is a typed record per agent; saved plans of every form still load."""

from __future__ import annotations

from typing import Any

from eviseek.types import Trajectory
from eviseek.types.plans import (
    AutoToolPlan,
    CoverageCheck,
    EviSeekPlan,
    FrontierPlan,
    ModePlan,
    SeekerDecision,
    SingleModelPlan,
    UnreadPlan,
)


def _load(plan: Any) -> Trajectory:
    return Trajectory.model_validate({"episode_id": "e", "question_id": "q", "agent": "a", "plan": plan})


def test_saved_plans_load_as_their_agents_record() -> None:
    assert isinstance(_load({"demands": [], "subtasks": [], "mode": "active"}).plan, EviSeekPlan)
    assert isinstance(_load({"mode": "active", "stretches": []}).plan, FrontierPlan)
    assert isinstance(_load({"mode": "active", "ended_by": "budget"}).plan, SingleModelPlan)
    auto = _load({"mode": "tool_on", "declared": True, "shown_size": [640, 480], "original_size": None})
    assert isinstance(auto.plan, AutoToolPlan) and auto.plan.shown_size == (640, 480)
    passive = _load({"mode": "passive"}).plan
    assert isinstance(passive, ModePlan) and passive.mode == "passive"
    assert isinstance(_load({}).plan, ModePlan) and isinstance(
        Trajectory(episode_id="e", question_id="q", agent="a").plan, ModePlan
    )


def test_old_and_partial_plans_read_with_defaults_and_keep_unknown_keys() -> None:
    old = {"demands": [{"id": 1, "text": "the top"}], "subtasks": [{"id": 1, "demand": 1}], "note": "x"}
    plan = _load(old).plan
    assert isinstance(plan, EviSeekPlan)
    assert plan.subtasks[0].goal == "" and plan.subtasks[0].status == "pending" and plan.mode == "active"
    assert plan.model_extra == {"note": "x"}
    # A plugin's own keys survive a load and a save.
    plugin = _load({"mode": "active", "lap": 3, "seen": ["a"]})
    assert plugin.model_dump(mode="json")["plan"] == {"mode": "active", "lap": 3, "seen": ["a"]}


def test_only_filled_fields_are_written_in_the_order_agents_fill_them() -> None:
    plan = EviSeekPlan(demands=[], subtasks=[], mode="active")
    traj = Trajectory(episode_id="e", question_id="q", agent="eviseek", plan=plan)
    assert traj.plan is plan  # agents update the record in place
    assert traj.model_dump(mode="json")["plan"] == {"demands": [], "subtasks": [], "mode": "active"}
    plan.intents = ["FACE"]
    plan.decisions.append(SeekerDecision(index=1, subtask=1, intent="FACE", executed=0, aborted=None))
    plan.coverage.append(CoverageCheck(after_subtask=1, covered=[], decision="stop", note=""))
    plan.covered = []
    saved = traj.model_dump(mode="json")["plan"]
    assert list(saved) == ["demands", "subtasks", "mode", "intents", "decisions", "coverage", "covered"]
    assert saved["decisions"] == [
        {"index": 1, "subtask": 1, "intent": "FACE", "executed": 0, "aborted": None}
    ]
    assert saved["coverage"] == [{"after_subtask": 1, "covered": [], "decision": "stop", "note": ""}]
    # Arguments are kept as the reply gave them (a reply read as a Python literal holds tuples).
    plan.decisions.append(SeekerDecision(index=2, subtask=1, intent="SWEEP", args={"turns": (1, 2)}))
    assert traj.model_dump(mode="json")["plan"]["decisions"][1]["args"] == {"turns": [1, 2]}
    plan.decisions.pop()
    plan.decisions[0].kept_current = True
    assert traj.model_dump(mode="json")["plan"]["decisions"][0]["kept_current"] is True
    assert _load(saved).model_dump(mode="json")["plan"] == saved


def test_a_plan_that_fits_no_record_loads_as_unread_and_is_written_back_unchanged() -> None:
    bad = {"subtasks": [{"goal": "no id"}], "demands": "one", "mode": "active"}
    traj = _load(bad)
    assert isinstance(traj.plan, UnreadPlan) and traj.plan.mode == "active"
    assert "plan.demands: Input should be a valid list" in traj.plan.problems
    assert "plan.subtasks.0.id: Field required" in traj.plan.problems
    assert traj.model_dump(mode="json")["plan"] == bad
    assert isinstance(_load([1, 2]).plan, UnreadPlan)
