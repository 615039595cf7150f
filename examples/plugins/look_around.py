"""An agent in one module: ``look-around`` turns in place a few times, then answers from the views.

One config model, one agent class, one ``register_agent`` call. Load it with ``--plugin``:

    eviseek eval --plugin examples/plugins/look_around.py --agents look-around \
        --agent-arg turns=3 --model reference --dataset tabletop:dev --limit 2 --out runs/look

It reaches the environment only through the ``envs.base`` protocol (``reset``, ``step``,
``legal_actions``), records each action with ``StepRecord.from_step`` (so its trajectory has the
fields every agent's has), makes its model calls with ``generate_recorded`` (so they are in the
trajectory with their cost), reads the reply with ``parse_reply`` and fills the result with
``finish``, as the built-in agents do.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.agents import register_agent
from eviseek.agents.common import contract_metadata, finish
from eviseek.agents.parsing import parse_reply, schema_of
from eviseek.agents.replies import AnswerReply
from eviseek.answers import normalize_answer
from eviseek.envs import AsyncEnv
from eviseek.models import Model, generate_recorded
from eviseek.types import Action, ChatMessage, GenerateConfig, Question, Stage, StepRecord, Trajectory


class LookAroundConfig(BaseModel):
    """Its ``--agent-arg`` settings (``budget`` is the run's step budget, given to every agent)."""

    model_config = ConfigDict(extra="forbid")

    turns: int = Field(2, ge=0)
    budget: int = 30


class LookAroundAgent:
    kind = "look-around"

    def __init__(self, *, name: str = "look-around", **settings: Any) -> None:
        self.name = name
        self.config = LookAroundConfig(**settings)

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        started = time.perf_counter()
        obs, _ = await env.reset(seed=seed, options={"question": question})
        traj = Trajectory(
            episode_id=f"{question.id}-{seed}",
            question_id=question.id,
            agent=self.name,
            model=model.name,
            config=self.config.model_dump(),
            initial_image=obs.image,
        )
        legal = {spec.name for spec in await env.legal_actions()}
        views = [obs]
        for _ in range(min(self.config.turns, self.config.budget) if "turn_left" in legal else 0):
            action = Action(name="turn_left")
            result = await env.step(action)
            traj.steps.append(StepRecord.from_step(len(traj.steps) + 1, action, result))
            views.append(result.observation)
        prompt = ChatMessage.user(
            *[v.image for v in views], f"{question.text} {question.contract.describe()}"
        )
        # The stage, the reply's schema and the contract go with the call as metadata: real VLMs
        # ignore them; the reference policy (--model reference) reads them, as it does for ours.
        ask = GenerateConfig(
            stage=Stage.ANSWER,
            response_schema=schema_of(AnswerReply),
            metadata={**contract_metadata(question), "frame_ids": [v.frame_id for v in views]},
        )
        completion, call = await generate_recorded(model, [prompt], ask)
        traj.calls.append(call)
        traj.answer_images = [v.image for v in views]
        traj.answer_frame_ids = [v.frame_id for v in views]
        reply = parse_reply(completion.text, AnswerReply)
        raw = reply.value.answer if reply.value is not None else completion.text
        answer = normalize_answer(raw, question.contract)
        finish(traj, question, answer=answer, raw_answer=raw, mode="active", started=started)
        return traj


# With ``config=``, the run's settings that are fields of the config (``budget``, ``turns``) reach
# the factory, and ``--agents look-around:turns=1`` works too.
register_agent("look-around", LookAroundAgent, config=LookAroundConfig)
