"""Blind: one text-only call, no image, no action, on any env."""

from __future__ import annotations

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.types import Question
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript


async def test_blind_answers_from_the_question_alone(question: Question) -> None:
    script = StageScript(blind=[{"answer": "no", "reasoning": "a guess"}])
    env = GridWorld()
    traj = await make_agent("blind").run(as_async(env), question, script.model())
    ((cfg, messages),) = script.calls("blind")
    assert all(not m.images() for m in messages)
    assert question.text in messages[-1].text()
    assert cfg.metadata["frame_ids"] == []
    assert traj.steps == [] and env.steps_taken == [] and traj.answer_images == []
    assert traj.result is not None and traj.result.answer == "no" and traj.result.mode == "blind"


async def test_blind_gets_a_forced_choice_without_images(question: Question) -> None:
    script = StageScript(blind=["I cannot see anything"], forced_choice=[{"answer": "yes"}])
    traj = await make_agent("blind").run(as_async(GridWorld()), question, script.model())
    assert traj.result is not None and traj.result.answer == "yes"
    ((_cfg, messages),) = script.calls("forced_choice")
    assert all(not m.images() for m in messages)
