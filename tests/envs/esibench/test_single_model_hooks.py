"""Single-model with ESI-Bench's task hooks (the official baseline through eviseek), on the bridge,
both against the stand-in runner that records which official functions were called."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from eviseek.agents.single_model import SingleModelAgent
from eviseek.envs.base import as_async
from eviseek.envs.esibench import ESIBenchEnv
from eviseek.eval.datasets import load_dataset
from eviseek.models.scripted import ScriptedModel
from eviseek.types import ChatMessage, GenerateConfig
from tests.eval.esibench.conftest import FIXTURES


def question(sub: str):
    return next(q for q in load_dataset(f"esibench:{FIXTURES}") if q.subcategory == sub)


def run(replies, sub: str, tmp: Path, **cfg):
    seen: list[tuple[list[ChatMessage], GenerateConfig]] = []
    script = iter(replies)

    def reply(messages, config):
        seen.append((list(messages), config))
        return next(script)

    agent = SingleModelAgent(esibench_hooks=True, **{"budget": 5, **cfg})
    env = ESIBenchEnv(step_image_root=str(tmp / "steps"))
    traj = asyncio.run(agent.run(as_async(env), question(sub), ScriptedModel(reply)))
    env.close()
    return traj, seen


def test_task_prompts_reading_and_stopping_come_from_the_task(standin, tmp_path: Path) -> None:
    replies = [
        json.dumps({"action": "move_forward", "answer": "not sure", "confidence": 0.1, "reasoning": "look"}),
        "this is not json",  # the runner's fallback: move_forward with an abstention
        json.dumps({"action": "pick up red mug", "answer": "No", "confidence": 0.5, "reasoning": "closer"}),
        json.dumps({"action": "stop", "answer": "no", "confidence": 0.95, "reasoning": "sure"}),
    ]
    traj, seen = run(replies, "Physical Contact", tmp_path)
    prompts = [m[-1].text() for m, _ in seen]
    assert all("STANDIN TASK PROMPT: Are the book and the box touching?" in p for p in prompts)
    assert "HISTORY 1:move_forward:not sure" in prompts[1]  # the runner's own history assembly
    assert [s.action.text() for s in traj.steps] == [
        "move_forward",
        "move_forward",
        "physical(command=pick up red mug)",
    ]
    assert traj.plan.ended_by == "confidence_threshold" and traj.result.raw_answer == "no"
    assert [c[1] for c in standin.CALLS if c[0] == "task_should_stop"] == [1, 2, 3, 4]
    assert ("task_parse_model_output", "No") in standin.CALLS
    assert any(e.kind == "parse_failure" for e in traj.events)
    # images: the current view, plus earlier views, are sent with every call
    assert len(seen[3][0][-1].images()) == 4 and seen[0][1].temperature == 0.2


def test_an_abstention_at_the_budget_gets_the_task_forced_choice(standin, tmp_path: Path) -> None:
    step = json.dumps({"action": "turn_left", "answer": "not sure", "confidence": 0.2, "reasoning": "?"})
    replies = [step] * 3 + [json.dumps({"answer": "yes", "confidence": 0.6, "reasoning": "best guess"})]
    traj, seen = run(replies, "Material Transparency", tmp_path, budget=3)
    assert len(traj.steps) == 2 and traj.plan.ended_by == "max_steps_forced_choice"
    assert "STANDIN FORCED CHOICE" in seen[-1][0][-1].text() and seen[-1][1].temperature == 0.0
    assert traj.result.raw_answer == "yes"


async def test_eviseek_runs_on_the_bridge(standin, tmp_path: Path) -> None:
    from eviseek.agents import make_agent
    from tests.agents.scripts import StageScript

    script = StageScript(
        demands=[{"demands": [{"text": "a close view of where the book meets the box"}]}],
        plan=[{"subtasks": [{"goal": "look closer at the gap", "demand": 1}]}],
        seek=[{"intent": "RISE_TOPDOWN", "args": {"degrees": 30}}, {"intent": "DONE"}],
        keep=lambda cfg: {"keep": True, "note": "the gap is visible"},
        track=lambda cfg: {"visible": True},
        answer=[{"answer": "no", "reasoning": "a gap between them"}],
    )
    env = ESIBenchEnv(step_image_root=str(tmp_path / "steps"))
    q = question("Physical Contact")
    traj = await make_agent("eviseek").run(as_async(env), q, script.model())
    env.close()
    assert traj.result is not None and traj.result.raw_answer == "no" and traj.steps
    assert {s.action.name for s in traj.steps} <= {"move_up", "turn_down", "move_forward", "move_backward"}
    assert [c[1] for c in standin.CALLS if c[0] == "execute_action"] == [s.action.name for s in traj.steps]
    from eviseek.answers import score_answer

    assert score_answer(q, traj.result.raw_answer).correct
