"""Blind: answers from the question text alone (the paper's question-only reference, section 5.5).

It measures how much of a benchmark a language prior settles without looking: no image, no
action, one model call. It works for any question on any environment; the environment is still
reset (the harness hosts every episode the same way and the trajectory records the scene's first
view), but nothing it shows reaches the model.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.agents.common import build_config, contract_metadata, finish, resolve_answer, start_episode
from eviseek.agents.replies import AnswerReply
from eviseek.envs.base import AsyncEnv
from eviseek.models.base import Model
from eviseek.types import Question, Stage, Trajectory
from eviseek.types.plans import ModePlan


class BlindConfig(BaseModel):
    """Settings of the Blind baseline."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(512, ge=1)
    forced_choice: bool = True
    """A reply outside the answer contract gets one forced-choice call (still without images)."""


class BlindAgent:
    """One text-only call: the question and its answer contract, nothing else."""

    kind = "blind"

    def __init__(self, config: BlindConfig | None = None, *, name: str = "blind", **overrides: Any):
        self.config = build_config(BlindConfig, config, overrides)
        self.name = name

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Answer ``question`` without looking; the trajectory has no steps and no answer images."""
        cfg = self.config
        started = time.perf_counter()
        _obs, traj, caller = await start_episode(
            self.name, self.kind, cfg, env, question, model, seed=seed, plan=ModePlan(mode="blind")
        )
        parsed, completion = await caller.ask_rendered(
            Stage.BLIND,
            AnswerReply,
            fallback="read the answer from the reply text",
            metadata={**contract_metadata(question), "frame_ids": []},
            context={"question": question, "contract": question.contract.describe()},
        )
        raw = parsed.value.answer if parsed.value is not None else completion.text
        traj.answer_images = []
        traj.answer_frame_ids = []
        answer, raw_answer = await resolve_answer(
            caller, question, raw, images=[], context="", at_step=0, enabled=cfg.forced_choice
        )
        finish(traj, question, answer=answer, raw_answer=raw_answer, mode="blind", started=started)
        return traj
