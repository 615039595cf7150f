"""Garbage, truncated and ill-typed replies at every stage never crash an episode (property-based).

Each example scripts a whole episode from drawn reply recipes: free text, a valid reply cut at a
random point, a JSON object with random fields, a near-JSON variant, or a valid reply. Every agent
must finish with a result, stay within its budget, and log each unreadable reply as an event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eviseek.agents import make_agent
from eviseek.envs import as_async
from eviseek.models import ScriptedModel
from eviseek.types import AnswerContract, ChatMessage, GenerateConfig, Question, Trajectory
from tests.agents.gridworld import GridWorld
from tests.agents.scripts import stage_key

VALID: dict[str, list[dict[str, Any]]] = {
    "demands": [{"demands": [{"text": "the cube from above"}, {"text": "the box"}]}],
    "plan": [{"subtasks": [{"goal": "look down", "demand": 1}, {"goal": "look at the box", "demand": 2}]}],
    "seek": [
        {"intent": "RISE_TOPDOWN", "args": {"degrees": 45}},
        {"intent": "APPROACH", "target": "red cube", "args": {"steps": 4}},
        {"intent": "ORBIT", "target": "box", "args": {"steps": 3}},
        {"intent": "SWEEP", "args": {"direction": "right", "turns": 5, "tilt_down": True}},
        {"intent": "put_on", "args": {"object": "red_cube", "target": "blue_box"}},
        {"intent": "DONE"},
        {"intent": "BLOCKED"},
    ],
    "keep": [{"keep": True, "frames": [1, 3], "note": "useful"}, {"keep": False}],
    "track": [{"visible": False}, {"visible": True}],
    "answer": [{"answer": "yes"}, {"answer": "maybe"}],
    "passive": [{"answer": "B"}],
    "forced_choice": [{"answer": "no"}, {"answer": "unsure"}],
    "single_step": [
        {"action": "turn_left", "answer": "yes", "confidence": 0.3},
        {"action": "pick up red cube", "answer": "no", "confidence": 0.95},
        {"action": "stop", "answer": "not sure", "confidence": 0.1},
    ],
    "triage": [{"sufficient": False}, {"sufficient": True, "answer": "??"}],
    "coverage": [
        {"covered": [1], "decision": "replan", "subtasks": [{"goal": "again", "demand": 9}]},
        {"decision": "stop"},
        {"decision": "continue"},
    ],
}

recipe = st.tuples(
    st.sampled_from(["text", "cut", "random", "near", "valid"]),
    st.integers(0, 10_000),
    st.floats(0.0, 1.0),
    st.text(max_size=60),
    st.dictionaries(
        st.sampled_from(
            [
                "intent",
                "keep",
                "answer",
                "demands",
                "subtasks",
                "action",
                "confidence",
                "visible",
                "sufficient",
                "decision",
                "args",
                "frames",
                "x",
            ]
        ),
        st.none()
        | st.booleans()
        | st.integers(-5, 50)
        | st.text(max_size=10)
        | st.lists(st.integers(-2, 5), max_size=3),
        max_size=4,
    ),
)


class RecipeModel:
    """Turns drawn recipes into replies for whatever stage asks next."""

    def __init__(self, recipes: list[tuple]) -> None:
        self.recipes = recipes
        self.i = 0

    def __call__(self, messages: Sequence[ChatMessage], cfg: GenerateConfig) -> str:
        key = stage_key(cfg)
        if self.i >= len(self.recipes):
            return json.dumps(VALID[key][-1])  # the script ran dry: valid replies that end things
        kind, n, frac, text, obj = self.recipes[self.i]
        self.i += 1
        valid = json.dumps(VALID[key][n % len(VALID[key])])
        if kind == "text":
            return text
        if kind == "cut":
            return valid[: int(len(valid) * frac)]
        if kind == "random":
            return json.dumps(obj)
        if kind == "near":
            return (
                "Here you go:\n```json\n" + valid.replace('"', "'").replace("true", "True")[:-1] + ",}\n```"
            )
        return valid


def check(traj: Trajectory, budget: int) -> None:
    assert traj.result is not None and traj.result.error is None
    assert len(traj.steps) <= budget
    assert traj.result.calls == len(traj.calls) and traj.result.steps == len(traj.steps)
    failures = [e for e in traj.events if e.kind == "parse_failure"]
    assert all(e.stage for e in failures)
    for s in getattr(traj.plan, "subtasks", []):  # EviSeek's plan; the baselines keep none
        assert s.status in ("pending", "done", "timed_out", "blocked")
    Trajectory.model_validate_json(traj.model_dump_json())  # the record stays serialisable


QUESTION = Question(
    id="g",
    text="Is the red cube left of the blue box?",
    contract=AnswerContract(kind="option", options=["yes", "no"]),
)
SPECS = [
    "eviseek",
    "eviseek:adaptive+coverage",
    "eviseek:no_intents+no_board",
    "eviseek:no_demands+no_selective_retention",
    "single-model",
    "passive",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(SPECS), recipes=st.lists(recipe, max_size=50), nav=st.booleans())
def test_episodes_survive_any_replies(spec: str, recipes: list[tuple], nav: bool) -> None:
    budget = 12
    agent = make_agent(spec) if spec == "passive" else make_agent(spec, budget=budget)
    env = GridWorld(navigation_only=nav)
    traj = asyncio.run(agent.run(as_async(env), QUESTION, ScriptedModel(RecipeModel(recipes))))
    check(traj, budget)
