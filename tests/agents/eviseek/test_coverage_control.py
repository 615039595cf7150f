"""EviSeek's navigation variant: the coverage controller closes subtasks, refuses DONE, replans, stops."""

from __future__ import annotations

from typing import Any

import pytest

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.errors import ConfigError
from eviseek.types import GenerateConfig, Question, Trajectory
from tests.agents.eviseek.test_agent import DEMANDS, PLAN, seek_by_subtask
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript


def cover_one_then_both() -> list[dict[str, Any]]:
    """Coverage replies: nothing covered at the first check, demand 1 at the second, both at the
    third (a fresh list per call, so no test can change another's replies)."""
    return [
        {"covered": [], "decision": "continue"},
        {"covered": [1], "decision": "continue"},
        {"covered": [1, 2], "decision": "continue"},
    ]


def nav_script(**over: Any) -> StageScript:
    stages: dict[str, Any] = {
        "demands": [DEMANDS],
        "plan": [PLAN],
        "seek": seek_by_subtask(
            {
                1: [{"intent": "SWEEP", "args": {"direction": "left", "turns": 2}}] * 6,
                2: [{"intent": "GOTO", "args": {"direction": "ahead", "steps": 2}}] * 6,
            }
        ),
        "keep": lambda cfg: {"keep": True, "note": f"kept after {cfg.metadata['intent']}"},
        "track": lambda cfg: {"visible": True},
        "answer": [{"answer": "yes", "reasoning": "seen"}],
    }
    stages.update(over)
    return StageScript(**stages)


async def run_nav(
    question: Question, script: StageScript, spec: str = "eviseek-nav", **cfg: Any
) -> Trajectory:
    env = GridWorld(navigation_only=True)
    return await make_agent(spec, **cfg).run(as_async(env), question, script.model())


def test_nav_variant_defaults() -> None:
    agent = make_agent("eviseek-nav")
    assert agent.name == "eviseek-nav"
    cfg = agent.config  # type: ignore[attr-defined]
    assert cfg.budget == 120 and cfg.coverage_control and not cfg.coverage
    # The tabletop agent is unchanged: no controller unless asked for.
    assert not make_agent("eviseek").config.coverage_control  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="two controllers"):
        make_agent("eviseek-nav:coverage")
    with pytest.raises(ConfigError, match="needs evidence demands"):
        make_agent("eviseek-nav:no_demands")


async def test_controller_closes_subtasks_as_their_demands_are_covered(question: Question) -> None:
    # Nothing covered after the first sweep, demand 1 after the second, both after the GOTO.
    script = nav_script(coverage=cover_one_then_both())
    traj = await run_nav(question, script)
    assert [(s.id, s.status) for s in traj.plan.subtasks] == [(1, "done"), (2, "done")]
    # The seeker never said DONE: the controller closed both subtasks and then stopped.
    assert all(d.intent != "DONE" for d in traj.plan.decisions)
    assert [len(s.steps) for s in traj.plan.subtasks] == [4, 2]
    assert [c.trigger for c in traj.plan.coverage] == ["new_evidence"] * 3
    assert [c.decision for c in traj.plan.coverage] == ["continue", "continue", "stop"]
    assert traj.plan.covered == [1, 2]
    assert "early_stop" in {e.kind for e in traj.events}
    assert len(traj.steps) == 6 and traj.result is not None and traj.result.answer == "yes"
    # Each check sees every retained view (evidence from several views adds up), not only the
    # one kept since the previous check.
    calls = script.calls("coverage")
    assert [len(m[-1].images()) for _c, m in calls] == [1, 2, 3]
    assert calls[0][0].metadata["control"] == "navigation"
    assert [a.name for a in [s.action for s in traj.steps]] == ["turn_left"] * 4 + ["move_forward"] * 2


async def test_controller_refuses_done_on_an_uncovered_demand(question: Question) -> None:
    seek = seek_by_subtask(
        {
            1: [{"intent": "DONE"}, {"intent": "SWEEP", "args": {"turns": 1}}],
            2: [{"intent": "GOTO", "args": {"steps": 1}}],
        }
    )
    script = nav_script(
        seek=seek,
        coverage=[
            {"covered": [], "decision": "continue"},  # on the premature DONE
            {"covered": [1], "decision": "continue"},  # after the sweep kept a view
            {"covered": [1], "decision": "stop", "note": "the overhead view settles it"},
        ],
    )
    traj = await run_nav(question, script)
    assert [c.trigger for c in traj.plan.coverage] == ["seeker_done", "new_evidence", "new_evidence"]
    assert "done_refused" in {e.kind for e in traj.events}
    seek_calls = script.calls("seek")
    assert any("DONE was refused" in line for line in seek_calls[1][0].metadata["working_memory"])
    # Subtask 1 closed only once its demand was covered; the controller's stop ended subtask 2
    # with its demand uncovered.
    assert [(s.id, s.status) for s in traj.plan.subtasks] == [(1, "done"), (2, "timed_out")]
    assert traj.plan.covered == [1]
    assert [s.action.name for s in traj.steps] == ["turn_left", "move_forward"]


async def test_controller_replans_when_the_plan_runs_out_uncovered(question: Question) -> None:
    seek = seek_by_subtask(
        {
            1: [{"intent": "BLOCKED"}],
            2: [{"intent": "BLOCKED"}],
            3: [{"intent": "FACE", "args": {"direction": "right", "degrees": 60}}],
        }
    )
    script = nav_script(
        seek=seek,
        coverage=[
            {"covered": [], "decision": "continue"},
            {"covered": [], "decision": "continue"},
            {
                "covered": [],
                "decision": "replan",
                "subtasks": [{"goal": "look toward the right-hand room", "demand": 1}],
            },
            {"covered": [1, 2], "decision": "continue"},
        ],
    )
    traj = await run_nav(question, script)
    triggers = [c.trigger for c in traj.plan.coverage]
    assert triggers == ["seeker_blocked", "seeker_blocked", "plan_exhausted", "new_evidence"]
    assert [(s.id, s.status) for s in traj.plan.subtasks] == [
        (1, "blocked"),
        (2, "blocked"),
        (3, "done"),
    ]
    assert traj.plan.coverage[-1].decision == "stop"
    assert [s.action.name for s in traj.steps] == ["turn_right", "turn_right"]


async def test_controller_stops_at_the_budget_without_covering(question: Question) -> None:
    script = nav_script(coverage=lambda cfg: {"covered": [], "decision": "continue"})
    traj = await run_nav(question, script, budget=7)
    assert len(traj.steps) == 7
    assert all(s.status in ("timed_out", "pending") for s in traj.plan.subtasks)
    assert traj.plan.covered == []
    assert traj.result is not None and traj.result.answer == "yes"


async def test_unreadable_coverage_reply_keeps_going(question: Question) -> None:
    replies = iter(["not json at all", {"covered": [1, 2], "decision": "continue"}])

    def coverage(cfg: GenerateConfig) -> Any:
        return next(replies)

    traj = await run_nav(question, nav_script(coverage=coverage))
    assert "parse_failure" in {e.kind for e in traj.events}
    assert [c.decision for c in traj.plan.coverage] == ["continue", "stop"]
    assert traj.plan.covered == [1, 2]


async def test_nav_variant_skips_repeats_of_a_blocked_move(question: Question) -> None:
    # Turn to face the near wall (1 m behind the start) and ask for 8 forward moves.
    goto = {1: [{"intent": "GOTO", "args": {"direction": "left", "degrees": 180, "steps": 8}}]}
    over = {"seek": seek_by_subtask(goto), "coverage": lambda cfg: {"covered": [1, 2], "decision": "stop"}}
    env = GridWorld(navigation_only=True, range_scan=True)
    traj = await make_agent("eviseek-nav").run(as_async(env), question, nav_script(**over).model())
    names = [(s.action.name, s.feedback.success) for s in traj.steps]
    assert names == [("turn_left", True)] * 6 + [("move_forward", True)] * 4 + [("move_forward", False)]
    assert "repeats_skipped" in {e.kind for e in traj.events}
    # The tabletop configuration keeps running its compiled sequence to the end.
    env = GridWorld(navigation_only=True, range_scan=True)
    plain = await make_agent("eviseek", budget=120).run(
        as_async(env), question, nav_script(seek=seek_by_subtask(goto)).model()
    )
    assert len(plain.steps) == 14


async def test_paper_preset_checks_only_new_views_and_forgets_between_subtasks(question: Question) -> None:
    # eviseek-nav:paper: coverage checks see the images kept since the previous check, and the
    # seeker's working memory is per subtask (the paper, section 4.3).
    script = nav_script(
        coverage=cover_one_then_both(),
        keep=lambda cfg: {"keep": True, "frames": [1], "note": f"kept after {cfg.metadata['intent']}"},
    )
    traj = await run_nav(question, script, "eviseek-nav:paper", retention="merged")
    calls = script.calls("coverage")
    assert [len(m[-1].images()) for _c, m in calls] == [1, 1, 1]
    first_of_2 = next(cfg for cfg, _m in script.calls("seek") if cfg.metadata["subtask"]["id"] == 2)
    assert first_of_2.metadata["working_memory"] == []
    assert traj.plan.covered == [1, 2]


async def test_nav_memory_lasts_the_episode(question: Question) -> None:
    # The navigation variant's default: subtask 2's seeker still reads what subtask 1 tried
    # (the reference policy keeps its house map there), under a heading that says so.
    script = nav_script(coverage=cover_one_then_both())
    await run_nav(question, script)
    cfg, msgs = next((c, m) for c, m in script.calls("seek") if c.metadata["subtask"]["id"] == 2)
    tried = cfg.metadata["working_memory"]
    assert len(tried) == 2 and all(line.startswith("SWEEP {'direction': 'left'") for line in tried)
    assert "Tried so far in this episode (every subtask):" in msgs[-1].text()


async def test_nav_coverage_checks_read_the_seekers_notes_and_the_pose(question: Question) -> None:
    # coverage_walk (ours, on in eviseek-nav): the check is shown what the seeker tried and the
    # dead-reckoned pose, so it can tell whether the agent has stood where the question points.
    script = nav_script(coverage=cover_one_then_both())
    traj = await run_nav(question, script)
    calls = script.calls("coverage")
    cfg, msgs = calls[2]
    tried = cfg.metadata["working_memory"]
    assert len(tried) == 3 and tried[-1].startswith("GOTO {'direction': 'ahead'")
    # The pose after the last step, as the seeker is shown it.
    last = traj.steps[-1].pose
    assert last is not None and cfg.metadata["pose"] == last.model_dump()
    assert (last.x, last.y) != (0.0, 0.0)
    text = msgs[-1].text()
    assert "What the agent has done so far (its own notes, oldest first):\n- SWEEP" in text
    assert f"Pose estimate now (relative to the start; E/N are your own axes): d({last.x:+.2f}E" in text
    # The paper's controller sees the demands and the retained evidence only.
    script = nav_script(coverage=cover_one_then_both())
    await run_nav(question, script, "eviseek-nav:paper", retention="merged")
    cfg, msgs = script.calls("coverage")[0]
    assert "working_memory" not in cfg.metadata and "pose" not in cfg.metadata
    assert "What the agent has done so far" not in msgs[-1].text()
    assert "Pose estimate now" not in msgs[-1].text()


async def test_coverage_prompt_keeps_a_line_per_demand(question: Question) -> None:
    # A demand marked covered earlier used to run into the next line ("...(covered earlier)Current
    # subtask"): each demand ends its own line.
    script = nav_script(
        coverage=[
            {"covered": [1], "decision": "continue"},
            {"covered": [1, 2], "decision": "continue"},
        ]
    )
    await run_nav(question, script)
    text = script.calls("coverage")[1][1][-1].text()
    assert "(covered earlier)\n2. " in text
    assert "\nCurrent subtask (new evidence):" in text


async def test_a_refused_keep_still_leaves_its_note_in_memory(question: Question) -> None:
    # What an intent's views showed (here: the rooms and doorways the reference keeper names)
    # reaches the working memory even when none of the views is worth keeping.
    notes = iter(
        [
            {"keep": False, "note": "in the kitchen; doorways kitchen / hallway; nothing the question needs"},
            {"keep": True, "note": "in the hallway; red cup"},
        ]
    )
    script = nav_script(
        keep=lambda cfg: next(notes, {"keep": True, "note": "more"}),
        coverage=[{"covered": [1, 2], "decision": "continue"}],
    )
    await run_nav(question, script)
    second = script.calls("seek")[1][0].metadata["working_memory"]
    assert second[0].endswith(
        "nothing kept (in the kitchen; doorways kitchen / hallway; nothing the question needs)"
    )
