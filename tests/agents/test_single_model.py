"""Single-model (ESI-Bench appendix D): stopping rule, forced choice, memory, fallbacks."""

from __future__ import annotations

import pytest

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.types import Question
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import StageScript


def step(action: str = "turn_left", answer: str = "yes", confidence: float = 0.3) -> dict:
    return {"action": action, "reasoning": "looking", "answer": answer, "confidence": confidence}


async def run(question: Question, grid: GridWorld, replies: list, *, forced: list | None = None, **config):  # type: ignore[no-untyped-def]
    script = StageScript(single_step=replies, forced_choice=forced or [])
    traj = await make_agent("single-model", **config).run(as_async(grid), question, script.model())
    return traj, script


async def test_stops_once_confidence_reaches_the_threshold(question: Question, grid: GridWorld) -> None:
    traj, script = await run(question, grid, [step(confidence=0.79), step(confidence=0.8, answer="A")])
    assert traj.result is not None
    assert (traj.result.steps, traj.result.calls) == (1, 2)
    assert traj.result.answer == "yes" and traj.plan.ended_by == "confidence"
    for cfg, _ in script.calls("single_step"):
        assert (cfg.temperature, cfg.top_p) == (0.2, 0.9)


async def test_min_steps_delays_confidence_stopping(question: Question, grid: GridWorld) -> None:
    # min_steps counts calls as ESI-Bench does: 3 means the third call, after two actions.
    traj, _ = await run(question, grid, [step(confidence=0.95)] * 3, min_steps=3)
    assert traj.result is not None and traj.result.steps == 2 and traj.result.calls == 3


@pytest.mark.parametrize(
    ("family", "subcategory", "steps"),
    [
        ("Physical Dynamics", "Inclined Plane", 2),  # slope.py honours --min-steps 3: the third call
        ("Specular Reflection", "Spatial Relations", 2),  # mirror.py
        ("Perceptual Grounding", "Partial Occlusion", 0),  # occlusion.py stops on confidence alone
        ("Spatial Relations", "Physical Contact", 0),  # touching.py
    ],
)
async def test_the_default_minimum_follows_esibench_per_subcategory(
    question: Question, grid: GridWorld, family: str, subcategory: str, steps: int
) -> None:
    q = question.model_copy(update={"family": family, "subcategory": subcategory})
    traj, _ = await run(q, grid, [step(confidence=0.95)] * 5)
    assert traj.result is not None and traj.result.steps == steps and traj.result.calls == steps + 1
    explicit, _ = await run(q, grid, [step(confidence=0.95)] * 5, min_steps=2)
    assert explicit.result is not None and explicit.result.steps == 1


async def test_confident_but_unreadable_answer_keeps_exploring(question: Question, grid: GridWorld) -> None:
    traj, _ = await run(
        question, grid, [step(confidence=0.9, answer="hmm"), step(confidence=0.9, answer="no")]
    )
    assert traj.result is not None and traj.result.steps == 1 and traj.result.answer == "no"


async def test_stop_action_with_unmapped_answer_asks_a_forced_choice(
    question: Question, grid: GridWorld
) -> None:
    traj, script = await run(
        question,
        grid,
        [step(), step(action="stop", answer="not sure", confidence=0.2)],
        forced=[{"answer": "B"}],
    )
    assert traj.result is not None
    assert traj.result.answer == "no" and traj.result.raw_answer == "B"
    assert traj.plan.ended_by == "stop"
    ((cfg, messages),) = script.calls("forced_choice")
    assert cfg.temperature == 0.0
    assert "not sure" in messages[-1].text()
    assert [c.stage for c in traj.calls] == ["single_step", "single_step", "forced_choice"]
    assert "answer_unmapped" in [e.kind for e in traj.events]


async def test_budget_ends_the_episode_after_a_last_look(question: Question, grid: GridWorld) -> None:
    # As ESI-Bench's max_steps: the third call is the last, and answers without acting.
    traj, _ = await run(question, grid, [step()] * 3, budget=3)
    assert traj.result is not None
    assert (traj.result.steps, traj.result.calls) == (2, 3)
    assert traj.plan.ended_by == "budget" and traj.result.answer == "yes"


async def test_parse_failure_and_unknown_action_fall_back_to_move_forward(
    question: Question, grid: GridWorld
) -> None:
    traj, script = await run(
        question, grid, ["no json here", step(action="fly upward"), step(confidence=0.9)]
    )
    assert [s.action.name for s in traj.steps] == ["move_forward", "move_forward"]
    kinds = [e.kind for e in traj.events]
    assert kinds == ["parse_failure", "invalid_action"]
    last_prompt = script.calls("single_step")[-1][1][-1].text()
    assert "could not be read" in last_prompt and "Step 2: action=move_forward" in last_prompt


async def test_history_is_full_text_but_only_five_earlier_views(question: Question, grid: GridWorld) -> None:
    traj, script = await run(question, grid, [step()] * 8 + [step(confidence=0.9)])
    cfg, messages = script.calls("single_step")[-1]
    user = messages[-1]
    assert len(user.images()) == 6  # five earlier views and the current one
    assert cfg.metadata["frame_ids"] == [3, 4, 5, 6, 7, 8]
    text = user.text()
    assert all(f"Step {i}: action=turn_left" in text for i in range(1, 9))
    assert traj.answer_images == user.images() and traj.answer_frame_ids == [3, 4, 5, 6, 7, 8]
    assert traj.result is not None and traj.result.images_in_answer == 6


async def test_manipulation_actions_reach_the_env_with_arguments(question: Question, grid: GridWorld) -> None:
    traj, _ = await run(question, grid, [step(action="put red cube on blue box"), step(confidence=0.9)])
    assert traj.steps[0].action.args == {"object": "red_cube", "target": "blue_box"}
    assert traj.steps[0].feedback.state["current_stack"] == ["blue_box", "red_cube"]


@pytest.mark.parametrize("bad", [{"budget": 0}, {"confidence_threshold": 1.5}, {"colour": "red"}])
def test_bad_settings_name_the_problem(bad: dict) -> None:
    from eviseek.errors import ConfigError

    with pytest.raises(ConfigError):
        make_agent("single-model", **bad)


async def test_env_ending_the_episode_still_gets_a_last_reply(question: Question, grid: GridWorld) -> None:
    class EndsAfterTwo(GridWorld):
        def step(self, action):  # type: ignore[no-untyped-def]
            result = super().step(action)
            result.truncated = len(self.steps_taken) >= 2
            return result

    traj, _ = await run(question, EndsAfterTwo(), [step()] * 2 + [step(answer="no", confidence=0.1)])
    assert traj.result is not None and (traj.result.steps, traj.result.calls) == (2, 3)
    assert traj.plan.ended_by == "env" and traj.result.answer == "no"
