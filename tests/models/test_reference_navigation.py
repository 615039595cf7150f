"""The reference policy plays the navigation stages: blind, EviSeek-nav's seeker and controller,
Single-model's atomic actions and the frontier baseline's check, on a navigation-only world."""

from __future__ import annotations

import pytest

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.models.reference import ReferenceModel
from eviseek.types import AnswerContract, Question
from tests.agents.gridworld import GridWorld

QUESTION = Question(
    id="nav-1",
    text="What colour is the ball in the room?",
    contract=AnswerContract(kind="option", options=["red", "green", "blue"]),
)


@pytest.mark.parametrize("spec", ["blind", "passive", "single-model:budget=120", "eviseek-nav", "frontier"])
async def test_reference_plays_every_navigation_agent(spec: str) -> None:
    env = GridWorld(navigation_only=True, range_scan=True)
    traj = await make_agent(spec).run(as_async(env), QUESTION, ReferenceModel())
    kinds = {e.kind for e in traj.events}
    assert not kinds & {"parse_failure", "invalid_intent", "invalid_action", "answer_missing"}
    assert traj.result is not None and traj.result.answer in ("red", "green", "blue")
    assert len(traj.steps) <= 120
    if spec in ("blind", "passive"):
        assert not traj.steps
    else:
        assert traj.steps and {s.action.name for s in traj.steps} <= {
            "move_forward",
            "turn_left",
            "turn_right",
        }


async def test_reference_seeker_scans_then_walks_in_a_navigation_world() -> None:
    env = GridWorld(navigation_only=True, range_scan=True)
    traj = await make_agent("eviseek-nav").run(as_async(env), QUESTION, ReferenceModel())
    intents = [d.intent for d in traj.plan.decisions]
    assert intents[:2] == ["SWEEP", "SWEEP"] and {"GOTO", "APPROACH", "FACE"} & set(intents[2:])
    # The controller, not the seeker, ended the plan: its checks are recorded.
    assert traj.plan.coverage and traj.plan.coverage[-1].decision == "stop"


async def test_reference_keeps_the_named_colour_and_the_controller_closes_on_it() -> None:
    question = Question(
        id="nav-2",
        text="In which room is the red cube?",
        contract=AnswerContract(kind="option", options=["kitchen", "office"]),
    )
    env = GridWorld(navigation_only=True, range_scan=True)
    traj = await make_agent("eviseek-nav").run(as_async(env), question, ReferenceModel())
    assert traj.board and "red in view" in traj.board[0].item.note
    checks = traj.plan.coverage
    assert checks[0].trigger == "new_evidence" and checks[-1].decision == "stop"
    assert traj.plan.covered == [1]
    assert [s.status for s in traj.plan.subtasks] == ["done"]
    assert "early_stop" in {e.kind for e in traj.events} and len(traj.steps) < 20
