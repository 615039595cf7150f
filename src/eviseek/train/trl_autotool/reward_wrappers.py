"""Reward functions as TRL calls them, reading each rollout rebuilt from its token ids.

TRL's parsed messages drop text before ``<think>`` in some turns (the mode token among it), so
the rewards read the rollout decoded from ``completion_ids`` instead (:func:`rollout_messages`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eviseek.autotool.parser import parse_completion
from eviseek.train.rewards import column
from eviseek.train.rollout_stats import rollout_stats
from eviseek.train.rollouts import crop_turns, rollout_messages


class FullRolloutReward:
    """Wrap a reward so it reads rollouts rebuilt from their token ids (see :func:`rollout_messages`).

    Picklable; keeps the wrapped reward's ``__name__`` so TRL logs it under the same name.
    With ``monitor=True`` it also counts, per batch, the tool replies that carried an image
    into the completion (logged as ``autotool/crops_in_completion``) and keeps running totals:
    the evidence that crops reach the policy's input, not only the tool. A monitoring wrapper
    must wrap the accuracy reward: its values (1 correct, 0 wrong) feed the batch's
    :func:`~eviseek.train.rollout_stats.rollout_stats`, logged as ``autotool/<name>``.
    """

    def __init__(
        self, reward: Callable[..., list[float | None]], tokenizer: Any, *, monitor: bool = False
    ) -> None:
        self.reward = reward
        self.tokenizer = tokenizer
        self.monitor = monitor
        self.rollouts_seen = 0
        self.crops_in_completions = 0
        self.pending_cost: dict[str, dict[str, float]] = {}
        """Rollouts and completion tokens per chosen mode since :meth:`take_cost` last ran."""
        self.__name__ = getattr(reward, "__name__", type(reward).__name__)

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        ids = kwargs.get("completion_ids")
        if ids is None or len(ids) != len(completions):
            return self.reward(completions=completions, **kwargs)
        rebuilt = [rollout_messages(self.tokenizer.decode(list(i), skip_special_tokens=False)) for i in ids]
        if self.monitor:
            crops = sum(crop_turns(m) for m in rebuilt)
            self.rollouts_seen += len(rebuilt)
            self.crops_in_completions += crops
            for m, i in zip(rebuilt, ids, strict=True):
                mode = parse_completion(m).mode or "no_mode"
                cost = self.pending_cost.setdefault(mode, {"rollouts": 0.0, "tokens": 0.0})
                cost["rollouts"] += 1
                # Every completion token: the reply, and the tool's reply with its crop's image
                # tokens, which the policy also runs its forward and backward passes over.
                cost["tokens"] += len(i)
            log_metric = kwargs.get("log_metric")
            values = self.reward(completions=rebuilt, **kwargs)
            if callable(log_metric):
                log_metric("autotool/crops_in_completion", crops / max(1, len(rebuilt)))
                episodes = [parse_completion(m) for m in rebuilt]
                needs = column(kwargs, "needs_zoom", len(rebuilt))
                stats = rollout_stats(episodes, [bool(v) for v in values], needs)
                for key, value in stats.items():
                    log_metric(f"autotool/{key}", value)
            return values
        return self.reward(completions=rebuilt, **kwargs)

    def take_cost(self) -> dict[str, dict[str, float]]:
        """The per-mode rollouts and tokens gathered since the last call (and reset them)."""
        out, self.pending_cost = self.pending_cost, {}
        return out
