"""Trajectory.plan is a typed record per agent; saved plans of every form still load."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from eviseek.types import Trajectory
from eviseek.types.plans import (
    AutoToolPlan,
    CoverageCheck,
    EviSeekPlan,
    FrontierPlan,
    ModePlan,
    PlanRecord,
    SeekerDecision,
    SingleModelPlan,
    UnreadPlan,
    register_plan,
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
    assert traj.model_dump(mode="json")["plan"] == {
        "kind": "eviseek",
        "demands": [],
        "subtasks": [],
        "mode": "active",
    }
    plan.intents = ["FACE"]
    plan.decisions.append(SeekerDecision(index=1, subtask=1, intent="FACE", executed=0, aborted=None))
    plan.coverage.append(CoverageCheck(after_subtask=1, covered=[], decision="stop", note=""))
    plan.covered = []
    saved = traj.model_dump(mode="json")["plan"]
    assert list(saved) == [
        "kind",
        "demands",
        "subtasks",
        "mode",
        "intents",
        "decisions",
        "coverage",
        "covered",
    ]
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


def test_new_plans_are_tagged_with_their_kind_and_the_tag_decides_the_record() -> None:
    for plan, kind in [
        (EviSeekPlan(mode="active"), "eviseek"),
        (FrontierPlan(ended_by="budget"), "frontier"),
        (SingleModelPlan(ended_by="stop"), "single_model"),
        (AutoToolPlan(mode="tool_on"), "autotool"),
        (ModePlan(mode="passive"), "mode"),
    ]:
        saved = Trajectory(episode_id="e", question_id="q", agent="a", plan=plan).model_dump(mode="json")
        assert next(iter(saved["plan"])) == "kind" and saved["plan"]["kind"] == kind
        again = _load(saved["plan"])
        assert type(again.plan) is type(plan) and again.model_dump(mode="json")["plan"] == saved["plan"]
    # The tag wins over the keys: a Single-model plan that also carries a "map" key of its own.
    tagged = _load({"kind": "single_model", "ended_by": "stop", "map": [1]})
    assert isinstance(tagged.plan, SingleModelPlan) and tagged.plan.model_extra == {"map": [1]}
    # A tag no record claims (a plugin that is not loaded) reads as a ModePlan and writes back as read.
    foreign = {"kind": "lap_counter", "mode": "active", "laps": 3}
    loaded = _load(foreign)
    assert isinstance(loaded.plan, ModePlan)
    assert json.dumps(loaded.model_dump(mode="json")["plan"]) == json.dumps(foreign)


def test_legacy_plans_without_a_tag_are_read_by_their_keys_and_written_back_byte_for_byte() -> None:
    for legacy, record in [
        ({"demands": [], "subtasks": [], "mode": "active", "intents": ["FACE"]}, EviSeekPlan),
        ({"mode": "active", "stretches": [], "ended_by": "explored", "map": {"free": 3}}, FrontierPlan),
        ({"mode": "active", "ended_by": "budget"}, SingleModelPlan),
        ({"mode": "tool_off", "declared": True, "shown_size": [64, 48]}, AutoToolPlan),
        ({"mode": "passive"}, ModePlan),
        ({}, ModePlan),
    ]:
        traj = _load(legacy)
        assert type(traj.plan) is record
        assert json.dumps(traj.model_dump(mode="json")["plan"]) == json.dumps(legacy)


class LapPlan(PlanRecord):
    """A plugin agent's own record (test)."""

    plan_kind: ClassVar[str | None] = "test_lap"
    laps: int = 0
    note: str = ""


def test_a_plugin_registers_its_own_plan_record() -> None:
    register_plan(LapPlan)
    register_plan(LapPlan)  # the same class again: a no-op
    plan = LapPlan(laps=2)
    traj = Trajectory(episode_id="e", question_id="q", agent="lap", plan=plan)  # type: ignore[arg-type]
    assert traj.plan is plan
    saved = traj.model_dump(mode="json")["plan"]
    assert saved == {"kind": "test_lap", "laps": 2}
    assert json.loads(traj.model_dump_json())["plan"] == saved
    again = Trajectory.model_validate_json(traj.model_dump_json())
    assert isinstance(again.plan, LapPlan) and again.plan.laps == 2
    assert again.model_dump(mode="json")["plan"] == saved
    # A damaged record of the plugin's kind loads as unread, like a built-in one.
    bad = _load({"kind": "test_lap", "laps": "many"})
    assert isinstance(bad.plan, UnreadPlan) and bad.model_dump(mode="json")["plan"]["laps"] == "many"

    class Other(PlanRecord):
        plan_kind: ClassVar[str | None] = "test_lap"

    class Builtin(PlanRecord):
        plan_kind: ClassVar[str | None] = "eviseek"

    for taken in (Other, Builtin):
        with pytest.raises(ValueError, match="already taken"):
            register_plan(taken)
    with pytest.raises(ValueError, match="names its plan_kind"):
        register_plan(PlanRecord)
