"""Gathering verl's per-rollout reward calls into whole training steps (no verl import).

verl >= 0.7 asks for each rollout's reward as that rollout finishes, but AMB must see a training
step's whole batch once: one update of its step counter and one pair of coefficients for every
rollout of the step. :class:`StepBatcher` holds the calls and scores them together:

* **Training rollouts** wait until a step's worth (``batch_size``) has arrived, however long the
  gaps between them, and are then scored in one call: AMB advances exactly once per step and every
  rollout of the step gets the same coefficients. A timer flush would score a slow step in parts,
  each advancing AMB (a 4-rollout step scored as 3 + 1 moved AMB two steps and gave two identical
  right tool-off rollouts different rewards), so training rollouts never flush on a timer.
* **Validation rollouts** (``extra_info.split`` ``test``/``val``/``validation``/``eval``) have no
  fixed count: they are scored when ``flush_after_s`` passes without a new one (or a full batch
  is waiting). They never move AMB.

A step that stalls (no new training rollout for ``step_timeout_s`` while some wait) fails its
waiting calls with an error that says what to check, instead of hanging the run or scoring a
partial step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

EVAL_SPLITS = frozenset({"test", "val", "validation", "eval"})
"""``extra_info.split`` values of validation rows (they do not move AMB)."""

ScoreFn = Callable[[list[dict[str, Any]]], Sequence[Any]]


class StepIncomplete(RuntimeError):
    """A training step's rollouts stopped arriving before the step was whole."""


def is_training(extra_info: dict[str, Any] | None) -> bool:
    """Whether a rollout belongs to a training step (not a validation pass)."""
    return str((extra_info or {}).get("split", "")).lower() not in EVAL_SPLITS


class StepBatcher:
    """Holds per-rollout calls and scores each training step, and each validation pass, as one batch.

    ``score`` receives the waiting entries (whatever the caller queued) and returns one result
    per entry, in order; it runs in the loop's default executor, since scoring is blocking work.
    """

    def __init__(
        self,
        score: ScoreFn,
        batch_size: int,
        *,
        flush_after_s: float = 5.0,
        step_timeout_s: float = 1800.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.score = score
        self.batch_size = batch_size
        self.flush_after_s = flush_after_s
        self.step_timeout_s = step_timeout_s
        self._train: list[tuple[dict[str, Any], asyncio.Future[Any]]] = []
        self._eval: list[tuple[dict[str, Any], asyncio.Future[Any]]] = []
        self._eval_timer: asyncio.TimerHandle | None = None
        self._stall_timer: asyncio.TimerHandle | None = None
        self.batches_scored: list[int] = []
        """Size of every batch scored so far, training and validation (for logs and tests)."""
        self.steps_scored = 0
        """Training steps scored so far (each advanced AMB once)."""

    async def submit(self, entry: dict[str, Any], *, training: bool) -> Any:
        """Queue one rollout; resolves with its result once its batch has been scored."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if training:
            self._train.append((entry, future))
            self._cancel("_stall_timer")
            if len(self._train) >= self.batch_size:
                batch, self._train = self._train[: self.batch_size], self._train[self.batch_size :]
                self.steps_scored += 1
                await self._score(batch)
            if self._train:
                self._stall_timer = loop.call_later(self.step_timeout_s, self._stalled)
        else:
            self._eval.append((entry, future))
            self._cancel("_eval_timer")
            if len(self._eval) >= self.batch_size:
                await self._flush_eval()
            else:
                self._eval_timer = loop.call_later(
                    self.flush_after_s, lambda: asyncio.ensure_future(self._flush_eval())
                )
        return await future

    def _cancel(self, name: str) -> None:
        timer = getattr(self, name)
        if timer is not None:
            timer.cancel()
            setattr(self, name, None)

    async def _flush_eval(self) -> None:
        self._cancel("_eval_timer")
        batch, self._eval = self._eval, []
        if batch:
            await self._score(batch)

    def _stalled(self) -> None:
        self._stall_timer = None
        waiting, self._train = self._train, []
        error = StepIncomplete(
            f"a training step stopped at {len(waiting)} of {self.batch_size} rollouts (none arrived "
            f"for {self.step_timeout_s:g} s); AutoToolRewardManager expects data.train_batch_size x "
            "actor_rollout_ref.rollout.n rollouts per step on one reward worker "
            "(reward.num_workers=1), or raise EVISEEK_REWARD_STEP_TIMEOUT_S for very slow rollouts"
        )
        for _, fut in waiting:
            if not fut.done():
                fut.set_exception(error)

    async def _score(self, batch: list[tuple[dict[str, Any], asyncio.Future[Any]]]) -> None:
        entries = [e for e, _ in batch]
        try:
            loop = asyncio.get_running_loop()
            results = await loop.run_in_executor(None, self.score, entries)
        except Exception as exc:  # an infrastructure failure: every waiting call sees it
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            return
        self.batches_scored.append(len(batch))
        for (_, fut), result in zip(batch, results, strict=True):
            if not fut.done():
                fut.set_result(result)
