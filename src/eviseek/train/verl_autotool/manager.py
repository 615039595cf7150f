"""A verl reward-loop manager that regroups per-sample reward calls into training batches.

Since verl 0.7 rewards are computed per rollout as rollouts finish (``run_single``), so a
reward function never sees a whole batch. AMB needs the batch's tool-on share, so this manager
holds each training call until a step's worth has arrived (``data.train_batch_size *
actor_rollout_ref.rollout.n`` rollouts, split over ``reward.num_workers``), however slowly they
come, then scores them together with the configured batch reward (``compute_score_batch``): AMB
advances exactly once per training step and every rollout of the step gets the same
coefficients. Validation rollouts (``extra_info.split: test``) are scored once ``flush_after_s``
passes without a new one. The batching itself is :class:`~eviseek.train.verl_autotool.batching.StepBatcher`
(no verl import, tested without verl).

Use with (see ``examples/verl/autotool_grpo.sh``)::

    reward.reward_manager.source=importlib
    reward.reward_manager.name=AutoToolRewardManager
    reward.reward_manager.module.path=<this file>
    reward.custom_reward_function.path=<reward.py next to this file>
    reward.custom_reward_function.name=compute_score_batch
    reward.num_workers=1

Use one reward worker: with more, each worker must receive an equal share of every step, or a
step stalls (after ``EVISEEK_REWARD_STEP_TIMEOUT_S``, default 1800 s, the waiting calls fail with
a message saying so). This module imports verl; only verl loads it.
"""

from __future__ import annotations

import os
from typing import Any

from verl import DataProto
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from eviseek.train.verl_autotool.batching import StepBatcher, is_training


def _select(config: Any, key: str, default: Any) -> Any:
    node = config
    for part in key.split("."):
        try:
            node = node.get(part) if hasattr(node, "get") else getattr(node, part)
        except (AttributeError, KeyError):
            return default
        if node is None:
            return default
    return node


class AutoToolRewardManager(RewardManagerBase):
    """Batches ``run_single`` calls for a batch-signature reward; see the module docstring."""

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any,
        reward_router_address: str | None = None,
        reward_model_tokenizer: Any = None,
        *,
        batch_size: int | None = None,
        flush_after_s: float | None = None,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        if compute_score is None:
            raise ValueError(
                "AutoToolRewardManager needs reward.custom_reward_function.path/name pointing at "
                "eviseek's compute_score_batch (eviseek/train/verl_autotool/reward.py)"
            )
        if batch_size is None:
            per_step = int(_select(config, "data.train_batch_size", 1)) * int(
                _select(config, "actor_rollout_ref.rollout.n", 1)
            )
            workers = max(1, int(_select(config, "reward.num_workers", 1)))
            batch_size = max(1, per_step // workers)
        self.batch_size = batch_size
        self.flush_after_s = float(
            flush_after_s if flush_after_s is not None else os.environ.get("EVISEEK_REWARD_FLUSH_S", 5.0)
        )
        self._batcher = StepBatcher(
            self._score_entries,
            batch_size,
            flush_after_s=self.flush_after_s,
            step_timeout_s=float(os.environ.get("EVISEEK_REWARD_STEP_TIMEOUT_S", 1800.0)),
        )

    @property
    def batches_scored(self) -> list[int]:
        """Size of every batch scored so far (for logs and tests)."""
        return self._batcher.batches_scored

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        """Queue one rollout; resolves once its training step (or validation pass) has been scored."""
        item = data[-1:][0]  # the last sequence of a multi-sequence output carries the answer
        response_ids = item.batch["responses"]
        length = int(item.batch["attention_mask"][-response_ids.shape[-1] :].sum())
        text = self.tokenizer.decode(response_ids[:length], skip_special_tokens=True)
        extra_info = dict(item.non_tensor_batch.get("extra_info", None) or {})
        entry = {
            "data_source": item.non_tensor_batch.get("data_source"),
            "solution_str": text,
            "ground_truth": item.non_tensor_batch["reward_model"]["ground_truth"],
            "extra_info": extra_info,
        }
        result: dict[str, Any] = await self._batcher.submit(entry, training=is_training(extra_info))
        return result

    def _score_entries(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = self.compute_score(
            data_sources=[e["data_source"] for e in entries],
            solution_strs=[e["solution_str"] for e in entries],
            ground_truths=[e["ground_truth"] for e in entries],
            extra_infos=[e["extra_info"] for e in entries],
        )
        out = []
        for result in results:
            if isinstance(result, dict):
                score, extra = float(result["score"]), dict(result)
            else:
                score, extra = float(result), {"acc": float(result)}
            out.append({"reward_score": score, "reward_extra_info": extra})
        return out
