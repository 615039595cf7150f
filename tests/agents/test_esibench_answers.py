"""Agents on ESI-Bench questions: the task's own answer format is shown, and the task's own rule
(not eviseek's answer contract) decides whether a reply needs a forced choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from eviseek.agents import make_agent
from eviseek.answers import score_answer
from eviseek.envs import as_async
from eviseek.eval.esibench.dataset import LoadOptions, load_with_exclusions
from eviseek.types import Question
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "esibench"


@pytest.fixture(scope="module")
def esi() -> dict[str, Question]:
    kept, _ = load_with_exclusions(FIXTURES, LoadOptions(images="skip", tasktext="off"))
    return {q.metadata["esibench"]["task"]: q for q in kept}


def _scored(q: Question, raw: str | None) -> bool:
    return score_answer(q, raw, rules=q.metadata["rules"]).correct


def step(answer: str, confidence: float = 0.95, action: str = "stop") -> dict:
    return {"action": action, "reasoning": "seen", "answer": answer, "confidence": confidence}


async def test_a_letter_on_a_yes_no_task_gets_the_task_forced_choice(esi: dict[str, Question]) -> None:
    q = esi["transparent"]
    assert q.ground_truth == "yes"
    # eviseek's contract would read "A" as the first option; the task's reader does not.
    assert "(A)" not in q.contract.describe()
    for agent, stage, first in (
        ("single-model", "single_step", step("A")),
        ("passive", "passive", {"answer": "A", "reasoning": "seen"}),
        ("blind", "blind", {"answer": "A", "reasoning": "guess"}),
    ):
        script = StageScript(**{stage: [first]}, forced_choice=[{"answer": "yes"}])
        traj = await make_agent(agent).run(as_async(GridWorld()), q, script.model())
        assert traj.result is not None
        if agent == "passive":  # passive has no forced choice: the task reads "A" as no answer
            assert traj.result.answer is None and not _scored(q, traj.result.raw_answer)
            continue
        assert len(script.calls("forced_choice")) == 1, agent
        assert (traj.result.answer, traj.result.raw_answer) == ("yes", "yes"), agent
        assert _scored(q, traj.result.raw_answer)


async def test_the_option_text_needs_no_forced_choice(esi: dict[str, Question]) -> None:
    q = esi["transparent"]
    script = StageScript(single_step=[step("yes")])
    traj = await make_agent("single-model", min_steps=0).run(as_async(GridWorld()), q, script.model())
    assert traj.result is not None and traj.result.answer == "yes" and not script.calls("forced_choice")


async def test_not_sure_where_the_task_accepts_it_is_kept(esi: dict[str, Question]) -> None:
    # Action Order Inference asks its forced choice on "unsure" only; "not sure" is an answer
    # its reader keeps (and its scorer marks wrong), so no forced choice follows.
    q = esi["action"]
    script = StageScript(single_step=[step("not sure")])
    traj = await make_agent("single-model", min_steps=0).run(as_async(GridWorld()), q, script.model())
    assert traj.result is not None and traj.result.answer == "not sure"
    assert not script.calls("forced_choice") and not _scored(q, traj.result.raw_answer)
    script = StageScript(single_step=[step("unsure")], forced_choice=[{"answer": "right, left"}])
    traj = await make_agent("single-model", min_steps=0).run(as_async(GridWorld()), q, script.model())
    assert len(script.calls("forced_choice")) == 1


async def test_stacking_forced_choice_in_the_task_format_is_the_answer(esi: dict[str, Question]) -> None:
    q = esi["stacking"]
    order = q.metadata["esibench"]["rule"]["orders"][0]
    said = " ".join(f"{i}) {name.replace('_', ' ')}" for i, name in enumerate(order, start=1))
    script = StageScript(single_step=[step("unsure")], forced_choice=[{"answer": said}])
    traj = await make_agent("single-model", min_steps=0).run(as_async(GridWorld()), q, script.model())
    assert traj.result is not None
    assert traj.result.answer == said and traj.result.raw_answer == said
    assert not [e for e in traj.events if e.kind == "answer_missing"]
    assert _scored(q, traj.result.raw_answer)
