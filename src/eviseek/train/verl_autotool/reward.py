"""AutoTool's reward for verl: accuracy, format and the AMB-scaled mode-specific tool reward.

verl calls a custom reward function by path (``reward.custom_reward_function.path`` / ``name``).
Two entry points:

* :func:`compute_score_batch` has the batch signature of verl's batch reward manager
  (``data_sources, solution_strs, ground_truths, extra_infos, **reward_kwargs``) and returns one
  dict per rollout. It updates AMB once per call with the batch's tool-on share, so the
  coefficients follow the batch actually being trained on.
* :func:`compute_score` scores one rollout (verl's per-sample signature) with the coefficients
  AMB holds now, without updating them; verl >= 0.7 calls rewards per sample, and
  :class:`~eviseek.train.verl_autotool.manager.AutoToolRewardManager` regroups those calls into
  batches for :func:`compute_score_batch`.

The score comes from the same reward functions a TRL run uses
(:func:`eviseek.train.rewards.build_reward_functions`) and their weighted sum
(:func:`~eviseek.train.rewards.total_reward`). Each rollout's text is what verl decodes
(``skip_special_tokens=True``): assistant turns and tool replies joined with the chat markers
stripped; :func:`eviseek.train.rollouts.rollout_messages` splits it back into turns. The
returned dicts carry ``score`` (what GRPO optimises: ``accuracy_weight * acc + format_weight *
format + tool_weight * lambda_mode * R_tool``) and the parts, which verl logs as reward metrics:
``acc``, ``format``, ``tool``, ``tool_on`` (1, 0, or -1 when no mode was declared), ``tool_calls``,
``lambda_on``, ``lambda_off``, ``ratio_on`` and ``amb_released``.

Settings come from ``reward.custom_reward_function.reward_kwargs`` (all optional): ``amb_base``,
``amb_target_on``, ``amb_gain``, ``amb_rule``, ``amb_release_step``, ``accuracy_weight``,
``format_weight``, ``tool_weight``, ``on_correct``, ``on_wrong``, ``off_correct``, ``judge``.

Accuracy is rule-based (:func:`eviseek.autotool.scoring.check_answer`) unless ``judge`` names a
model (e.g. ``openai/Qwen2.5-72B-Instruct`` served by vLLM, reached through ``OPENAI_BASE_URL``):
then an answer the rules call wrong goes to that judge, as the paper's online reward model
(Qwen2.5-72B-Instruct) does. Without it there is no judge, and free-form answers the rules cannot
normalise score 0. One AMB
controller lives per process and per distinct settings; its step counts the training batches it has seen.
Batches whose rows all say ``extra_info.split`` is ``test``/``val``/``validation`` are scored
with the current coefficients and do not move AMB or its step.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.autotool.parser import parse_completion
from eviseek.train.amb import AMBConfig, AMBController, AMBRule
from eviseek.train.rewards import RewardSettings, build_reward_functions, total_reward
from eviseek.train.rollouts import rollout_messages
from eviseek.train.verl_autotool.batching import EVAL_SPLITS as _EVAL_SPLITS

_AMB = AMBConfig.model_fields
_REWARD = RewardSettings.model_fields


class VerlRewardSettings(BaseModel):
    """The reward's settings, from verl's ``reward_kwargs`` (unknown keys are refused).

    Flat, because verl passes flat keyword arguments; every default comes from
    :class:`~eviseek.train.rewards.RewardSettings` and :class:`~eviseek.train.amb.AMBConfig`,
    the settings TRL runs use, so the two trainers cannot drift apart.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    accuracy_weight: float = _REWARD["accuracy_weight"].default
    format_weight: float = _REWARD["format_weight"].default
    tool_weight: float = _REWARD["tool_weight"].default
    on_correct: float = _REWARD["on_correct"].default
    on_wrong: float = _REWARD["on_wrong"].default
    off_correct: float = _REWARD["off_correct"].default
    amb_base: float = Field(default=_AMB["base"].default, ge=0)
    amb_target_on: float = Field(default=_AMB["target_on"].default, gt=0, lt=1)
    amb_gain: float = Field(default=_AMB["gain"].default, ge=0)
    amb_rule: AMBRule = _AMB["rule"].default
    amb_release_step: int | None = Field(default=None, ge=0)
    judge: str | None = None
    """Model id of an LLM judge for answers the rules call wrong (``None``: rules only)."""

    def reward_settings(self) -> RewardSettings:
        """The shared reward settings (weights and MSPO values)."""
        return RewardSettings(
            accuracy_weight=self.accuracy_weight,
            format_weight=self.format_weight,
            tool_weight=self.tool_weight,
            on_correct=self.on_correct,
            on_wrong=self.on_wrong,
            off_correct=self.off_correct,
            judge=self.judge,
        )

    def amb_config(self) -> AMBConfig:
        """The AMB controller's configuration."""
        return AMBConfig(
            base=self.amb_base,
            target_on=self.amb_target_on,
            gain=self.amb_gain,
            rule=self.amb_rule,
            release_step=self.amb_release_step,
        )


# verl may load this module from its file path, outside ``sys.modules``, where pydantic cannot
# find the names of postponed annotations by itself: hand it the one that is not a builtin.
VerlRewardSettings.model_rebuild(_types_namespace={"AMBRule": AMBRule})


class AutoToolVerlReward:
    """Scores verl rollouts with the reward functions TRL runs use; holds the AMB controller."""

    def __init__(self, settings: VerlRewardSettings | None = None) -> None:
        self.settings = settings or VerlRewardSettings()
        self.rewards = self.settings.reward_settings()
        self.amb = AMBController(self.settings.amb_config())
        funcs, _ = build_reward_functions(self.rewards, amb=self.amb)
        self.accuracy, self.format, self.tool = funcs
        self.step = 0
        self._lock = threading.Lock()

    def score_batch(
        self,
        solution_strs: Sequence[str],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[dict[str, Any]]:
        """Score a batch and, for training batches, advance AMB by one step with its mode ratio."""
        n = len(solution_strs)
        # verl hands numpy object arrays: test against None, never by truthiness.
        infos = [
            dict(x) if x is not None else {} for x in ([None] * n if extra_infos is None else extra_infos)
        ]
        ground_truths = list(ground_truths)
        if len(ground_truths) != n or len(infos) != n:
            raise ValueError(
                f"batch lengths differ: {n} solutions, {len(ground_truths)} ground truths, "
                f"{len(infos)} extra_infos"
            )
        training = not all(str(i.get("split", "")).lower() in _EVAL_SPLITS for i in infos)
        with self._lock:
            out = self._score(solution_strs, ground_truths, infos, update=training)
            if training:
                self.step += 1
        return out

    def score_one(
        self, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Score one rollout with the current coefficients (AMB is not updated)."""
        with self._lock:
            return self._score([solution_str], [ground_truth], [dict(extra_info or {})], update=False)[0]

    def _score(
        self, solutions: Sequence[str], truths: Sequence[Any], infos: list[dict[str, Any]], *, update: bool
    ) -> list[dict[str, Any]]:
        completions = [rollout_messages(str(s)) for s in solutions]
        kwargs: dict[str, Any] = {
            "ground_truth": [_truth(t) for t in truths],
            "answer_kind": [i.get("answer_kind") for i in infos],
            "options": [_options_column(i.get("options")) for i in infos],
            "question": [str(i.get("question") or "") for i in infos],
            "trainer_state": {"global_step": self.step},
            "amb_update": update,
        }
        acc = self.accuracy(completions, **kwargs)
        fmt = self.format(completions, **kwargs)
        scaled = self.tool(completions, **kwargs)
        state = self.amb.history[-1] if self.amb.history else None
        ratio = state.ratio_on if (update and state is not None) else None
        released = bool(state and state.released)
        lam_on, lam_off = self.amb.lambdas
        out = []
        for k, completion in enumerate(completions):
            ep = parse_completion(completion)
            a, f, t = float(acc[k] or 0.0), float(fmt[k] or 0.0), float(scaled[k] or 0.0)
            out.append(
                {
                    "score": float(total_reward(self.rewards, a, f, t)),
                    "acc": a,
                    "format": f,
                    "tool": float(self.tool.raw(ep, a == 1.0)),
                    "tool_on": 1.0 if ep.mode == "tool_on" else 0.0 if ep.mode == "tool_off" else -1.0,
                    "tool_calls": float(ep.n_calls),
                    "lambda_on": float(lam_on),
                    "lambda_off": float(lam_off),
                    "ratio_on": float("nan") if ratio is None else float(ratio),
                    "amb_released": 1.0 if released else 0.0,
                }
            )
        return out


def _options_column(value: Any) -> str:
    """Options as the reward functions' column holds them (a JSON list, or empty)."""
    opts = _options(value)
    return json.dumps(opts) if opts else ""


def _truth(value: Any) -> Any:
    if isinstance(value, dict):  # reward_model dicts sometimes arrive whole
        return value.get("ground_truth")
    if hasattr(value, "tolist"):  # numpy arrays from verl's non-tensor batch
        return value.tolist()
    return value


def _options(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        if not value:
            return None
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    return [str(v) for v in value] if isinstance(value, (list, tuple)) and value else None


_INSTANCES: dict[VerlRewardSettings, AutoToolVerlReward] = {}
_INSTANCES_LOCK = threading.Lock()


def reward_for(**reward_kwargs: Any) -> AutoToolVerlReward:
    """The process-wide reward object for these settings (created on first use)."""
    settings = VerlRewardSettings(**reward_kwargs)
    with _INSTANCES_LOCK:
        if settings not in _INSTANCES:
            _INSTANCES[settings] = AutoToolVerlReward(settings)
        return _INSTANCES[settings]


def _settings_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Only the keys that configure the reward (verl may add its own, e.g. a reward router)."""
    fields = VerlRewardSettings.model_fields
    return {k: v for k, v in kwargs.items() if k in fields}


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[dict[str, Any] | None] | None = None,
    **reward_kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batch custom-reward signature: one dict with ``score`` per rollout (see module doc)."""
    del data_sources  # every source is scored the same way; kept for verl's signature
    return reward_for(**_settings_kwargs(reward_kwargs)).score_batch(
        solution_strs, ground_truths, extra_infos
    )


def compute_score(
    data_source: Any,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **reward_kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample signature: scores with AMB's current coefficients, without updating them."""
    del data_source
    return reward_for(**_settings_kwargs(reward_kwargs)).score_one(solution_str, ground_truth, extra_info)
