"""The frontier baseline on the grid world: look around, check, walk to frontiers, answer."""

from __future__ import annotations

from typing import Any

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.types import GenerateConfig, Question, Trajectory
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript


async def run(question: Question, script: StageScript, env: GridWorld, **cfg: Any) -> Trajectory:
    return await make_agent("frontier", **cfg).run(as_async(env), question, script.model())


def checks(*replies: dict[str, Any]) -> StageScript:
    return StageScript(explore_check=list(replies))


NO = {"enough": False, "answer": "", "direction": "ahead"}


async def test_looks_around_then_walks_to_frontiers_until_enough(question: Question) -> None:
    env = GridWorld(navigation_only=True, range_scan=True)
    script = checks(NO, NO, {"enough": True, "answer": "yes", "reasoning": "both seen"})
    traj = await run(question, script, env)
    names = [s.action.name for s in traj.steps]
    assert names[:11] == ["turn_left"] * 11  # a full circle at 30 degrees, less the last turn
    assert [s.intent for s in traj.steps[:11]] == ["LOOK_AROUND"] * 11
    frontier_steps = [s for s in traj.steps if s.intent == "FRONTIER"]
    assert frontier_steps and any(s.action.name == "move_forward" for s in frontier_steps)
    assert len(traj.plan.stretches) == 2 and all(s.actions <= 6 for s in traj.plan.stretches)
    assert traj.plan.ended_by == "enough"
    assert traj.plan.map.scans == len(traj.steps) + 1 and traj.plan.map.free > 50
    assert traj.result is not None and traj.result.answer == "yes"
    # Each check carries the current view and up to three earlier ones.
    calls = script.calls("explore_check")
    assert [len(m[-1].images()) for _c, m in calls] == [4, 4, 4]
    assert traj.answer_frame_ids == calls[-1][0].metadata["frame_ids"]
    # The agent's map is its own: it never moved through a wall, and every blocked move it
    # tried (if any) was reported by the env as a failure.
    assert all(abs(s.true_pose.x) <= 2 and abs(s.true_pose.y) <= 2 for s in traj.steps if s.true_pose)


async def test_budget_ends_with_a_final_answer_call(question: Question) -> None:
    env = GridWorld(navigation_only=True, range_scan=True)

    def reply(cfg: GenerateConfig) -> dict[str, Any]:
        if cfg.metadata["final"]:
            return {"enough": True, "answer": "no"}
        return NO

    script = StageScript(explore_check=reply)
    traj = await run(question, script, env, budget=15)
    assert len(traj.steps) == 15
    assert script.calls("explore_check")[-1][0].metadata["final"] is True
    assert traj.result is not None and traj.result.answer == "no"


async def test_without_a_range_scan_it_heads_where_the_model_points(question: Question) -> None:
    env = GridWorld(navigation_only=True)
    script = checks({"enough": False, "direction": "right"}, {"enough": True, "answer": "yes"})
    traj = await run(question, script, env, look_around=False)
    assert [s.action.name for s in traj.steps] == ["turn_right"] * 3 + ["move_forward"] * 3
    assert traj.plan.map.scans == 0


async def test_unreadable_check_keeps_exploring(question: Question) -> None:
    env = GridWorld(navigation_only=True, range_scan=True)
    script = checks("garbage", {"enough": True, "answer": "yes"})  # type: ignore[arg-type]
    traj = await run(question, script, env, look_around=False)
    assert "parse_failure" in {e.kind for e in traj.events}
    assert traj.steps and traj.result is not None and traj.result.answer == "yes"
