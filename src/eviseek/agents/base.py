"""The Agent protocol: run one question in one environment with one model."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from eviseek.envs.base import AsyncEnv
from eviseek.models.base import Model
from eviseek.types import Question, Trajectory


@runtime_checkable
class Agent(Protocol):
    """An answering policy. ``run`` resets ``env`` with the question and returns the trajectory.

    The returned trajectory's ``result`` carries the answer and cost; scoring (correctness,
    support) is filled in by the evaluation harness, not by the agent.
    """

    name: str

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Run one episode."""
        ...
