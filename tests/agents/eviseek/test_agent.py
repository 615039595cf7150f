"""EviSeek on the grid world: plan convention, intents, keeper, progression, ablations, controllers."""

from __future__ import annotations

from typing import Any

import pytest

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.types import GenerateConfig, Question, Trajectory
from eviseek.types.plans import EviSeekPlan
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript

DEMANDS = {"demands": [{"text": "an overhead view of the cube and the box"}, {"text": "the cube's side"}]}
PLAN = {
    "subtasks": [
        {"goal": "see both objects from above", "demand": 1},
        {"goal": "see the cube up close", "demand": 2},
    ]
}


def seek_by_subtask(plan: dict[int, list[dict[str, Any]]]):  # type: ignore[no-untyped-def]
    """Seek replies per subtask id, in order; DONE once a subtask's list is used up."""
    used: dict[int, int] = {}

    def reply(cfg: GenerateConfig) -> dict[str, Any]:
        sid = cfg.metadata["subtask"]["id"]
        i = used.get(sid, 0)
        used[sid] = i + 1
        items = plan.get(sid, [])
        return items[i] if i < len(items) else {"intent": "DONE"}

    return reply


def standard_script(**over: Any) -> StageScript:
    stages: dict[str, Any] = {
        "demands": [DEMANDS],
        "plan": [PLAN],
        "seek": seek_by_subtask(
            {
                1: [{"intent": "RISE_TOPDOWN", "args": {"degrees": 45}, "reasoning": "look down"}],
                2: [{"intent": "APPROACH", "target": "red cube", "args": {"steps": 2}}],
            }
        ),
        "keep": lambda cfg: {"keep": True, "note": f"kept after {cfg.metadata['intent']}"},
        "track": lambda cfg: {"visible": True},
        "answer": [{"answer": "yes", "reasoning": "the overhead view shows it"}],
    }
    stages.update(over)
    return StageScript(**stages)


async def run(
    question: Question,
    script: StageScript,
    spec: str = "eviseek",
    env: GridWorld | None = None,
    **config: Any,
) -> Trajectory:
    return await make_agent(spec, **config).run(as_async(env or GridWorld()), question, script.model())


async def test_episode_follows_the_plan_convention(question: Question) -> None:
    script = standard_script()
    traj = await run(question, script)
    plan = traj.plan
    assert isinstance(plan, EviSeekPlan) and plan.mode == "active"
    assert [d.model_dump() for d in plan.demands] == [
        {"id": 1, "text": DEMANDS["demands"][0]["text"]},
        {"id": 2, "text": "the cube's side"},
    ]
    assert [(s.id, s.demand, s.status) for s in plan.subtasks] == [(1, 1, "done"), (2, 2, "done")]
    assert plan.subtasks[0].steps == [1, 2, 3, 4, 5, 6] and plan.subtasks[1].steps == [7, 8]
    # The saved plan holds its kind tag, then the keys the agent filled, in the order it filled them.
    saved = traj.model_dump(mode="json")["plan"]
    assert list(saved) == ["kind", "demands", "subtasks", "mode", "initial_frame_id", "intents", "decisions"]
    assert not plan.model_extra and saved["decisions"][0] == {
        "index": 1,
        "subtask": 1,
        "intent": plan.decisions[0].intent,
        "args": plan.decisions[0].args,
        "target": "",
        "reasoning": plan.decisions[0].reasoning,
        "fallback": False,
        "executed": 6,
        "aborted": None,
        "notes": plan.decisions[0].notes,
    }
    assert [s.action.name for s in traj.steps] == ["move_up"] * 3 + ["turn_down"] * 3 + ["move_forward"] * 2
    assert all(s.subtask is not None and s.intent is not None and s.pose is not None for s in traj.steps)
    # The pose is the agent's own estimate: relative to the start, not the simulator's pose.
    assert traj.steps[5].pose.describe() == "x=+0.00m y=+0.00m z=+0.75m yaw=+0deg pitch=-45deg"  # type: ignore[union-attr]
    assert traj.steps[5].true_pose.y == -1.0  # type: ignore[union-attr]
    # Stages in order, each with its schema.
    assert [c.stage for c in traj.calls] == [
        "demands",
        "plan",
        "seek",
        "keep",
        "seek",
        "seek",
        "keep",
        "seek",
        "answer",
    ]
    assert all(c.config.response_schema for c in traj.calls)
    assert all((c.config.temperature, c.config.top_p) == (0.2, 0.9) for c in traj.calls)
    # Board: the last frame of each intent, with full provenance.
    adds = [e.item for e in traj.board if e.kind == "add"]
    assert [(i.frame_id, i.intent, i.subtask, i.demand) for i in adds] == [
        (6, "RISE_TOPDOWN", 1, 1),
        (8, "APPROACH", 2, 2),
    ]
    assert [e.kind for e in traj.board].count("bind") == 2
    # The answering call carries exactly the board frames and the demands, without statuses.
    _answer_cfg, answer_msgs = script.calls("answer")[0]
    assert answer_msgs[-1].images() == traj.answer_images and traj.answer_frame_ids == [6, 8]
    text = answer_msgs[-1].text()
    assert "1. an overhead view of the cube and the box" in text and "kept after RISE_TOPDOWN" in text
    assert "done" not in text and "see both objects from above" not in text
    result = traj.result
    assert result is not None and result.answer == "yes" and result.mode == "active"
    assert (result.steps, result.calls, result.images_in_answer) == (8, 9, 2)
    assert result.input_tokens == sum(c.usage.input_tokens or 0 for c in traj.calls)


async def test_seeker_sees_goal_memory_trail_pose_and_intents(question: Question) -> None:
    script = standard_script()
    await run(question, script)
    cfg, msgs = script.calls("seek")[1]  # second decision of subtask 1, after RISE_TOPDOWN
    text = msgs[-1].text()
    assert "Active subtask 1 of 2: see both objects from above" in text
    assert "It serves evidence demand 1" in text
    assert "RISE_TOPDOWN {'degrees': 45}: 6 action(s); kept: kept after RISE_TOPDOWN" in text
    assert "step 6: turn_down -> d(+0.00E,+0.00N,z0.75) yaw+0 pitch-45" in text
    assert "Pose estimate now (relative to the start; E/N are your own axes): d(+0.00E,+0.00N,z0.75)" in text
    assert "- ORBIT:" in text and "- put_on:" in text
    assert len(msgs[-1].images()) == 1
    assert cfg.metadata["remaining_steps"] == 24 and cfg.metadata["frame_id"] == 6
    # Working memory is per subtask: the first decision of subtask 2 starts empty.
    first_of_two = script.calls("seek")[2][1][-1].text()
    assert "Tried for this subtask" not in first_of_two


async def test_budget_runs_out_in_the_middle_of_an_intent(question: Question) -> None:
    traj = await run(question, standard_script(), budget=4)
    assert [s.action.name for s in traj.steps] == ["move_up"] * 3 + ["turn_down"]
    kinds = [e.kind for e in traj.events]
    assert "intent_clamped" in kinds and "subtask_timed_out" in kinds
    statuses = [s.status for s in traj.plan.subtasks]
    assert statuses == ["timed_out", "pending"]
    assert traj.result is not None and traj.result.steps == 4 and traj.result.answer == "yes"
    assert traj.answer_frame_ids == [4]  # the clamped intent's last view was still kept


async def test_lost_target_aborts_approach(question: Question) -> None:
    script = standard_script(
        seek=seek_by_subtask(
            {1: [], 2: [{"intent": "APPROACH", "target": "red cube", "args": {"steps": 4}}]}
        ),
        track=[{"visible": False}],
    )
    traj = await run(question, script)
    assert [s.action.name for s in traj.steps] == ["move_forward", "move_forward"]
    assert traj.plan.decisions[1].aborted == "target lost"
    assert any(e.kind == "intent_aborted" for e in traj.events)
    ((track_cfg, _track_msgs),) = script.calls("track")
    assert track_cfg.stage == "keep" and track_cfg.metadata["target"] == "red cube"


async def test_sweep_is_geometry_complete_and_never_tracks(question: Question) -> None:
    script = standard_script(
        seek=seek_by_subtask({1: [{"intent": "SWEEP", "target": "cube", "args": {"turns": 4}}]})
    )
    traj = await run(question, script)
    assert [s.action.name for s in traj.steps] == ["turn_left"] * 4
    assert script.calls("track") == []


async def test_invalid_intents_cost_no_step_and_are_shown_back(question: Question) -> None:
    script = standard_script(
        seek=seek_by_subtask(
            {1: [{"intent": "TELEPORT"}, {"intent": "put_on", "args": {"object": "moon", "target": "x"}}]}
        )
    )
    traj = await run(question, script)
    assert traj.steps == []
    assert [e.kind for e in traj.events].count("invalid_intent") == 2
    third = script.calls("seek")[2][1][-1].text()
    assert "TELEPORT was rejected: unknown intent 'TELEPORT'" in third and "is not legal" in third


async def test_blocked_and_timed_out_subtasks_move_on(question: Question) -> None:
    script = standard_script(
        seek=seek_by_subtask(
            {1: [{"intent": "BLOCKED"}], 2: [{"intent": "FACE", "args": {"direction": "left"}}] * 9}
        )
    )
    traj = await run(question, script, max_decisions_per_subtask=3)
    assert [s.status for s in traj.plan.subtasks] == ["blocked", "timed_out"]
    assert len(traj.steps) == 6 and traj.result is not None and traj.result.answer == "yes"


async def test_manipulation_intent_records_its_outcome_on_the_board(question: Question) -> None:
    script = standard_script(
        seek=seek_by_subtask(
            {1: [{"intent": "put_on", "args": {"object": "red cube", "target": "blue_box"}}]}
        )
    )
    traj = await run(question, script)
    assert traj.steps[0].action.args == {"object": "red_cube", "target": "blue_box"}
    text = script.calls("answer")[0][1][-1].text()
    assert "Outcome: put_on: ok; current_stack=['blue_box', 'red_cube']" in text


async def test_unreadable_keeper_keeps_the_last_view_and_says_so(question: Question) -> None:
    traj = await run(question, standard_script(keep=["no idea", "{'keep': False}"]))
    adds = [e.item for e in traj.board if e.kind == "add"]
    assert [i.frame_id for i in adds] == [6]
    assert "could not be read" in adds[0].note
    assert [e.kind for e in traj.events][:2] == ["parse_failure", "reply_repaired"]


async def test_keeper_can_pick_intermediate_views(question: Question) -> None:
    script = standard_script(keep=[{"keep": True, "frames": [1, 9], "note": "first"}, {"keep": False}])
    traj = await run(question, script)
    (cfg, msgs) = script.calls("keep")[0]
    # Six new views, four shown: evenly spaced, the last always, plus the view before.
    assert cfg.metadata["candidate_frame_ids"] == [1, 3, 4, 6] and len(msgs[-1].images()) == 5
    assert traj.answer_frame_ids == [1]
    assert any(e.kind == "keep_repaired" for e in traj.events)


async def test_plan_fallbacks_are_logged(question: Question) -> None:
    script = standard_script(
        demands=["I cannot say."], plan=['{"subtasks": [{"goal": "look", "demand": 7}]}']
    )
    traj = await run(question, script)
    assert len(traj.plan.demands) == 1 and traj.plan.subtasks[0].demand == 1
    kinds = [e.kind for e in traj.events]
    assert "parse_failure" in kinds and "plan_repaired" in kinds


# --- ablations ----------------------------------------------------------------------------------


async def test_no_demands_plans_from_the_question_and_hides_demands(question: Question) -> None:
    script = standard_script(demands=[])
    traj = await run(question, script, "eviseek:no_demands")
    assert traj.agent == "eviseek:no_demands"
    assert traj.plan.demands == [] and all(s.demand is None for s in traj.plan.subtasks)
    assert "demands" not in [c.stage for c in traj.calls]
    plan_text = script.calls("plan")[0][1][-1].text()
    assert "Evidence demands" not in plan_text
    seek_text = script.calls("seek")[0][1][-1].text()
    assert "evidence demand" not in seek_text
    answer_text = script.calls("answer")[0][1][-1].text()
    assert "Evidence the question depends on" not in answer_text and "demand" not in answer_text


async def test_no_board_answers_with_single_model_memory(question: Question) -> None:
    script = standard_script()
    traj = await run(question, script, "eviseek:no_board")
    text = script.calls("answer")[0][1][-1].text()
    assert "What the agent did:" in text and "Step 8: move_forward" in text
    assert traj.answer_frame_ids == [3, 4, 5, 6, 7, 8]  # current view and five before it


async def test_no_selective_retention_samples_frames_uniformly(question: Question) -> None:
    traj = await run(question, standard_script(), "eviseek:no_selective_retention", frame_capacity=3)
    assert traj.answer_frame_ids == [0, 4, 8]


async def test_no_intents_executes_one_atomic_action_per_decision(question: Question) -> None:
    script = standard_script(
        seek=seek_by_subtask(
            {1: [{"intent": "move_up"}, {"intent": "turn_down"}], 2: [{"intent": "RISE_TOPDOWN"}]}
        )
    )
    traj = await run(question, script, "eviseek:no_intents")
    assert [s.action.name for s in traj.steps] == ["move_up", "turn_down"]
    assert [s.decision for s in traj.steps] == [1, 2]
    assert "SWEEP" not in traj.plan.intents and "move_up" in traj.plan.intents
    assert any(e.kind == "invalid_intent" for e in traj.events)  # RISE_TOPDOWN is not on offer


# --- controllers ---------------------------------------------------------------------------------


async def test_adaptive_triage_answers_passively_when_the_view_suffices(question: Question) -> None:
    script = StageScript(triage=[{"sufficient": True, "answer": "no"}])
    traj = await run(question, script, "eviseek:adaptive")
    assert traj.result is not None and traj.result.mode == "passive" and traj.plan.mode == "passive"
    assert traj.result.answer == "no" and traj.result.steps == 0 and traj.result.calls == 1
    assert traj.answer_frame_ids == [0]


async def test_adaptive_triage_explores_when_unsure(question: Question) -> None:
    traj = await run(question, standard_script(triage=["garbage"]), "eviseek:adaptive")
    assert traj.result is not None and traj.result.mode == "active" and traj.result.steps == 8


async def test_coverage_check_can_replan_then_stop(question: Question) -> None:
    script = standard_script(
        coverage=[
            {
                "covered": [1],
                "decision": "replan",
                "subtasks": [{"goal": "look at the cube from its left", "demand": 2}],
            },
            {"covered": [1, 2], "decision": "stop"},
        ],
        seek=seek_by_subtask(
            {1: [{"intent": "RISE_TOPDOWN"}], 3: [{"intent": "ORBIT", "args": {"steps": 1}}]}
        ),
    )
    traj = await run(question, script, "eviseek:coverage")
    assert [(s.id, s.goal, s.status) for s in traj.plan.subtasks] == [
        (1, "see both objects from above", "done"),
        (3, "look at the cube from its left", "done"),
    ]
    assert [c.decision for c in traj.plan.coverage] == ["replan", "stop"]
    assert [s.action.name for s in traj.steps][-2:] == ["move_right", "turn_left"]
    assert {"replan", "early_stop"} <= {e.kind for e in traj.events}
    # Only the images kept for the subtask just closed travel with the coverage call.
    assert len(script.calls("coverage")[1][1][-1].images()) == 1


def test_conflicting_memory_switches_are_refused() -> None:
    from eviseek.errors import ConfigError

    with pytest.raises(ConfigError, match="at most one"):
        make_agent("eviseek:no_board+no_selective_retention")


async def test_navigation_only_env_is_not_offered_orbit_rise_or_retreat(question: Question) -> None:
    env = GridWorld(navigation_only=True)
    script = standard_script(
        seek=seek_by_subtask({1: [{"intent": "RISE_TOPDOWN"}, {"intent": "FACE", "args": {"degrees": 90}}]})
    )
    traj = await run(question, script, env=env)
    assert traj.plan.intents == ["FACE", "APPROACH", "GOTO", "SWEEP"]
    cfg, msgs = script.calls("seek")[0]
    offered = [s["name"] for s in cfg.metadata["intents"]]
    assert not {"ORBIT", "RISE_TOPDOWN", "RETREAT_WIDE"} & set(offered)
    text = msgs[-1].text()
    assert "ORBIT" not in text and "RISE_TOPDOWN" not in text and "RETREAT_WIDE" not in text
    assert "30 degrees per turn" in text
    # Asked anyway, RISE_TOPDOWN is a logged model mistake; FACE 90 takes three 30-degree turns.
    assert any(e.kind == "invalid_intent" and "RISE_TOPDOWN" in e.message for e in traj.events)
    assert [s.action.name for s in traj.steps] == ["turn_left"] * 3
    assert traj.steps[-1].pose.yaw == 90  # type: ignore[union-attr]
