"""The step loop shared by the simulated environments: a step budget, ``terminated`` (the agent
stopped) kept apart from ``truncated`` (the budget ran out), and steps after the end answered with
failed feedback instead of running; and the two step budgets the paper sets, which the
environments' defaults and the benchmark registry (``eval.benchmark``) both read from here."""

from __future__ import annotations

from typing import Any

from eviseek.errors import EnvError
from eviseek.types import Action, Feedback, Observation, StepResult

TABLETOP_BUDGET = 30
"""Primitive steps per episode on ESI-Bench and the tabletop (the paper's appendix A)."""
NAVIGATION_BUDGET = 120
"""Primitive steps per episode on EXPRESS-Bench and the house: the EviSeek paper's navigation
budget (section 5.5 and Table 7's interface), not EXPRESS-Bench's code, which teleports between
waypoints and sets no step budget."""


class BudgetedSteps:
    """Mixin giving an environment its ``step``; the environment supplies ``_started``,
    ``_execute``, ``_observe`` and ``_info`` and keeps the counters declared here."""

    max_steps: int
    _steps: int
    _terminated: bool
    _truncated: bool
    _last_obs: Observation | None

    def _started(self) -> bool:
        """Whether ``reset`` has loaded a question."""
        raise NotImplementedError

    def _execute(self, action: Action) -> Feedback:
        raise NotImplementedError

    def _observe(self) -> Observation:
        raise NotImplementedError

    def _info(self) -> dict[str, Any]:
        raise NotImplementedError

    def step(self, action: Action) -> StepResult:
        """Execute one action; bad or impossible actions become ``success=False`` feedback."""
        if not self._started() or self._last_obs is None:
            raise EnvError("step() called before reset(); reset the environment with a question first")
        if self._terminated or self._truncated:
            return self._result(
                self._last_obs,
                Feedback(
                    operation=action.name,
                    success=False,
                    reason="the episode is over (stopped or out of steps); call reset() for a new one",
                ),
            )
        self._steps += 1
        fb = self._execute(action)
        obs = self._observe()
        if not self._terminated and self._steps >= self.max_steps:
            self._truncated = True
        return self._result(obs, fb)

    def _result(self, obs: Observation, fb: Feedback) -> StepResult:
        return StepResult(
            observation=obs,
            feedback=fb,
            terminated=self._terminated,
            truncated=self._truncated,
            info=self._info(),
        )
