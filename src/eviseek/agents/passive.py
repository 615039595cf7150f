"""Passive: one view of the scene, one answer, no interaction (the paper's non-interactive reference)."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.agents.common import build_config, contract_metadata, finish, start_episode
from eviseek.agents.replies import AnswerReply
from eviseek.answers.accept import accept_answer
from eviseek.envs.base import AsyncEnv
from eviseek.models.base import Model
from eviseek.types import Question, Stage, Trajectory
from eviseek.types.plans import ModePlan


class PassiveConfig(BaseModel):
    """Settings of the Passive baseline (decoding as in the paper's appendix A)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(0.0, ge=0.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int | None = Field(512, ge=1)
    reference_images: bool = True
    """Attach the task's reference images (they are part of the question, e.g. the scene before
    an unobserved change); set False for the strict one-image protocol."""


class PassiveAgent:
    """Answers from the initial view alone with a single model call."""

    kind = "passive"

    def __init__(self, config: PassiveConfig | None = None, *, name: str = "passive", **overrides: Any):
        self.config = build_config(PassiveConfig, config, overrides)
        self.name = name

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Reset ``env`` to the question, show the first view and take the answer."""
        cfg = self.config
        started = time.perf_counter()
        obs, traj, caller = await start_episode(
            self.name, self.kind, cfg, env, question, model, seed=seed, plan=ModePlan(mode="passive")
        )
        refs = list(question.reference_images) if cfg.reference_images else []
        parsed, completion = await caller.ask_rendered(
            Stage.PASSIVE,
            AnswerReply,
            fallback="read the answer from the reply text",
            metadata={**contract_metadata(question), "frame_ids": [*([-1] * len(refs)), obs.frame_id]},
            context={
                "question": question,
                "contract": question.contract.describe(),
                "references": refs,
                "view": obs.image,
            },
        )
        raw = parsed.value.answer if parsed.value is not None else completion.text
        traj.answer_images = [*refs, obs.image]
        traj.answer_frame_ids = [*([-1] * len(refs)), obs.frame_id]
        answer = accept_answer(question, raw)
        if answer is None:
            traj.log(
                "answer_unmapped",
                f"answer {raw[:80]!r} is not one the question accepts",
                stage=Stage.PASSIVE,
            )
        finish(traj, question, answer=answer, raw_answer=raw, mode="passive", started=started)
        return traj
