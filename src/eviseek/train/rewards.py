"""AutoTool's reward functions, shaped for TRL's ``GRPOTrainer`` (and reusable from verl).

TRL calls each reward function by keyword: ``prompts``, ``completions``, ``completion_ids``,
every dataset column (one list entry per completion), ``trainer_state`` and ``log_metric``,
plus whatever it adds later (hence ``**kwargs``). Each returns one ``float`` (or ``None``) per
completion. Completions may be strings or conversational message lists that include the tool
turns; both are read with :func:`eviseek.autotool.parser.parse_completion`.

The functions are picklable callable classes with a ``__name__`` (TRL logs rewards by name):

* :class:`AccuracyReward` - 1 if the answer matches the ground truth (rule-based first, then an
  optional LLM judge through any eviseek model), else 0.
* :class:`FormatReward` - 1 if every turn follows the protocol (mode token, ``<think>``, a tool
  call or an ``<answer>``) and an answer was given, else 0.
* :class:`ToolReward` - the mode-specific tool reward (MSPO): tool-on earns ``on_correct`` (1)
  for at least one valid zoom call and a correct answer and ``on_wrong`` (-0.5) for a tool call
  with a wrong answer; tool-off earns ``off_correct`` (1) for no tool call and a correct answer;
  everything else 0. With an :class:`~eviseek.train.amb.AMBController` it returns
  ``lambda_mode * R_tool`` and logs the batch's mode ratio and both coefficients.

* :class:`DeepEyesToolReward` - DeepEyes' tool reward: 1 when a zoom returned a crop and the
  answer is correct, whatever the mode (the "always-tool" row of the paper's component table).

The dataset columns read are ``ground_truth`` (or DeepEyes' ``reward_model.ground_truth``),
and optionally ``answer_kind`` and ``options`` (see :class:`eviseek.train.data.TrainingRow`).

:class:`RewardSettings` is the one place the reward's numbers live; TRL (``reward_weights``)
and verl (:mod:`eviseek.train.verl_autotool.reward`) both build their reward from it through
:func:`build_reward_functions` and :func:`total_reward`. The total is
``w_acc * accuracy + w_format * format + w_tool * lambda_mode * R_tool``. The 0.8 / 0.2 weights
are DeepEyes' (its reward for V* and chart data); the AutoTool paper names the three terms but
gives no weights for the first two. The coefficient ``lambda_mode`` lives inside
:class:`ToolReward` (AMB), so ``w_tool`` stays 1.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eviseek.autotool.parser import ParsedEpisode, parse_completion
from eviseek.autotool.scoring import check_answer
from eviseek.train.amb import AMBConfig, AMBController
from eviseek.types import Stage

Rewards = list[float | None]

DEEPEYES_ACCURACY_WEIGHT = 0.8
"""Weight of the accuracy term in DeepEyes' reward (not stated by the AutoTool paper)."""
DEEPEYES_FORMAT_WEIGHT = 0.2
"""Weight of the format term in DeepEyes' reward (not stated by the AutoTool paper)."""
PAPER_ON_WRONG = -0.5
"""AutoTool paper, section 3.4: tool-on, a tool call and a wrong answer."""

ToolScheme = Literal["mspo", "deepeyes", "none"]


class RewardSettings(BaseModel):
    """The numbers of ``R = w_acc * accuracy + w_format * format + w_tool * lambda * R_tool``.

    ``tool_scheme`` picks ``R_tool``: ``mspo`` (the paper's mode-specific reward, section 3.4),
    ``deepeyes`` (1 for a crop plus a correct answer, any mode: the always-tool baseline) or
    ``none`` (text-only GRPO: accuracy and format only).
    """

    model_config = ConfigDict(extra="forbid")

    accuracy_weight: float = Field(default=DEEPEYES_ACCURACY_WEIGHT, ge=0)
    format_weight: float = Field(default=DEEPEYES_FORMAT_WEIGHT, ge=0)
    tool_weight: float = Field(default=1.0, ge=0)
    """Multiplies ``lambda_mode * R_tool``; AMB's lambdas carry the paper's 1.2."""
    tool_scheme: ToolScheme = "mspo"
    on_correct: float = 1.0
    on_wrong: float = PAPER_ON_WRONG
    """Penalty for a tool call with a wrong answer (paper: -0.5; 0 removes it). Positive values
    are refused: they would reward wrong answers after a tool call."""
    off_correct: float = 1.0
    judge: str | None = None
    """Model id of an LLM judge for answers the rules cannot settle (e.g. ``openai/qwen2.5-72b``)."""

    @field_validator("on_wrong")
    @classmethod
    def _penalty_not_reward(cls, value: float) -> float:
        if value > 0:
            raise ValueError(
                f"on_wrong={value} would reward wrong answers after a tool call; "
                "use 0 or a negative penalty (paper: -0.5)"
            )
        return value

    def weights(self) -> list[float]:
        """TRL's ``reward_weights`` for the functions :func:`build_reward_functions` returns."""
        if self.tool_scheme == "none":
            return [self.accuracy_weight, self.format_weight]
        return [self.accuracy_weight, self.format_weight, self.tool_weight]


def column(kwargs: dict[str, Any], name: str, n: int) -> list[Any]:
    """Dataset column ``name`` as a list of ``n`` values (``None`` where missing)."""
    value = kwargs.get(name)
    if value is None:
        return [None] * n
    if isinstance(value, (list, tuple)) and len(value) == n:
        return list(value)
    return [value] * n  # a scalar broadcast (e.g. a single-row call)


def ground_truths(kwargs: dict[str, Any], n: int) -> list[Any]:
    """Ground truths from ``ground_truth``, ``solution``, ``answer`` or ``reward_model`` columns."""
    for name in ("ground_truth", "solution", "answer"):
        if kwargs.get(name) is not None:
            return column(kwargs, name, n)
    rm = column(kwargs, "reward_model", n)
    return [r.get("ground_truth") if isinstance(r, dict) else None for r in rm]


def _step(kwargs: dict[str, Any]) -> int:
    state = kwargs.get("trainer_state")
    step = getattr(state, "global_step", None)
    if step is None and isinstance(state, dict):
        step = state.get("global_step")
    return int(step or 0)


def _log(kwargs: dict[str, Any], metrics: dict[str, float]) -> None:
    log_metric = kwargs.get("log_metric")
    if callable(log_metric):
        for key, value in metrics.items():
            log_metric(key, value)


def _options(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, (list, tuple)) and value:
        return [str(v) for v in value]
    return None


_JUDGE_PROMPT = (
    "You check answers. Question: {question}\nReference answer: {truth}\nCandidate answer: {answer}\n"
    "Does the candidate mean the same as the reference (same option, value or fact; wording may "
    'differ)? Reply with JSON only: {{"equivalent": true}} or {{"equivalent": false}}.'
)
_JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"equivalent": {"type": "boolean"}},
    "required": ["equivalent"],
}
_EQUIV = re.compile(r'"?equivalent"?\s*:\s*(true|false)', re.IGNORECASE)


class AccuracyReward:
    """1.0 for a correct final answer, 0.0 otherwise (``None``-free).

    The answer is the last ``<answer>`` block of the rollout. Rule-based checking runs first
    (:func:`eviseek.autotool.scoring.check_answer`); when it says "wrong" and a ``judge`` is
    set, the judge model decides (free-form answers the rules cannot normalise). ``judge`` is
    a model id (built lazily, so the object stays picklable) or a Model instance.
    """

    __name__ = "accuracy"

    def __init__(self, judge: Any = None, judge_kwargs: dict[str, Any] | None = None) -> None:
        self.judge = judge
        self.judge_kwargs = dict(judge_kwargs or {})
        self._judge_model: Any = None
        self._verdicts: dict[tuple[str, str], bool] = {}
        """Judge verdicts by (answer, truth): the tool reward asks about the same rollouts again."""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_judge_model"] = None  # clients hold sockets; rebuild after unpickling
        if not isinstance(state["judge"], (str, type(None))):
            state["judge"] = getattr(state["judge"], "name", None)
        return state

    def score(self, episodes: Sequence[ParsedEpisode], kwargs: dict[str, Any]) -> list[bool]:
        """Correctness of each parsed rollout against the batch's ground truths."""
        n = len(episodes)
        truths = ground_truths(kwargs, n)
        kinds = column(kwargs, "answer_kind", n)
        options = column(kwargs, "options", n)
        questions = column(kwargs, "question", n)
        out: list[bool] = []
        pending: list[tuple[int, str, Any, str]] = []
        for i, ep in enumerate(episodes):
            ok, _ = check_answer(ep.answer, truths[i], kinds[i], _options(options[i]))
            out.append(ok)
            judgeable = ep.answer and truths[i] is not None and kinds[i] != "bbox"
            if not ok and self.judge is not None and judgeable:
                assert ep.answer is not None
                pending.append((i, ep.answer, truths[i], str(questions[i] or "")))
        for i, answer, truth, _ in pending:
            if (answer, str(truth)) in self._verdicts:
                out[i] = self._verdicts[(answer, str(truth))]
        pending = [p for p in pending if (p[1], str(p[2])) not in self._verdicts]
        if pending:
            verdicts = _run(self._judge_many(pending))
            for (i, answer, truth, _), verdict in zip(pending, verdicts, strict=True):
                out[i] = verdict
                if len(self._verdicts) > 50_000:
                    self._verdicts.clear()
                self._verdicts[(answer, str(truth))] = verdict
        return out

    async def _judge_many(self, items: list[tuple[int, str, Any, str]]) -> list[bool]:
        from eviseek.models import generate_recorded, get_model
        from eviseek.types import ChatMessage, GenerateConfig

        if self._judge_model is None:
            j = self.judge
            self._judge_model = get_model(j, **self.judge_kwargs) if isinstance(j, str) else j
        model = self._judge_model

        async def one(answer: str, truth: Any, question: str) -> bool:
            prompt = _JUDGE_PROMPT.format(question=question or "(not given)", truth=truth, answer=answer)
            cfg = GenerateConfig(
                temperature=0.0,
                max_tokens=32,
                stage=Stage.JUDGE,
                response_schema=_JUDGE_SCHEMA,
                metadata={"reference": str(truth), "candidate": answer},
            )
            completion, _ = await generate_recorded(model, [ChatMessage.user(prompt)], cfg)
            m = _EQUIV.search(completion.text)
            return bool(m and m.group(1).lower() == "true")

        return list(await asyncio.gather(*(one(a, t, q) for _, a, t, q in items)))

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> Rewards:
        episodes = [parse_completion(c) for c in completions]
        return [1.0 if ok else 0.0 for ok in self.score(episodes, kwargs)]


class FormatReward:
    """1.0 when the rollout follows the protocol in every turn and gives an answer, else 0.0."""

    __name__ = "format"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> Rewards:
        out: Rewards = []
        for c in completions:
            ep = parse_completion(c)
            out.append(1.0 if ep.well_formed and ep.answer is not None else 0.0)
        return out


class ToolReward:
    """The mode-specific tool reward of MSPO, optionally scaled by AMB's per-mode coefficient.

    Args:
        on_correct: tool-on, at least one valid zoom call, correct answer (paper: 1).
        on_wrong: tool-on, a tool call (valid or not), wrong answer (paper: -0.5).
        off_correct: tool-off, no tool call, correct answer (paper: 1).
        amb: an :class:`AMBController` (or its config); when set, each call updates it with the
            batch's modes at ``trainer_state.global_step`` and the reward is multiplied by the
            coefficient of the rollout's mode. Metrics go to TRL's ``log_metric``. A call with
            ``amb_update=False`` (validation batches) uses the current coefficients unchanged.
        accuracy: the :class:`AccuracyReward` that decides correctness (rule-based by default).
    """

    __name__ = "tool"

    def __init__(
        self,
        *,
        on_correct: float = 1.0,
        on_wrong: float = -0.5,
        off_correct: float = 1.0,
        amb: AMBController | AMBConfig | None = None,
        accuracy: AccuracyReward | None = None,
    ) -> None:
        self.on_correct = on_correct
        self.on_wrong = on_wrong
        self.off_correct = off_correct
        self.amb = AMBController(amb) if isinstance(amb, AMBConfig) else amb
        self.accuracy = accuracy or AccuracyReward()

    def raw(self, episode: ParsedEpisode, correct: bool) -> float:
        """``R_tool`` for one parsed rollout, before any coefficient."""
        if episode.mode == "tool_on":
            if correct and episode.n_valid_calls > 0:
                return self.on_correct
            if not correct and episode.n_calls > 0:
                return self.on_wrong
            return 0.0
        if episode.mode == "tool_off":
            return self.off_correct if correct and episode.n_calls == 0 else 0.0
        return 0.0

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> Rewards:
        episodes = [parse_completion(c) for c in completions]
        correct = self.accuracy.score(episodes, kwargs)
        values = [self.raw(ep, ok) for ep, ok in zip(episodes, correct, strict=True)]
        if self.amb is None:
            return list(values)
        if kwargs.get("amb_update", True):
            state = self.amb.update([ep.mode for ep in episodes], _step(kwargs))
            _log(kwargs, state.metrics())
        return [self.amb.lambda_for(ep.mode) * v for ep, v in zip(episodes, values, strict=True)]


class DeepEyesToolReward:
    """DeepEyes' tool term: 1.0 when a zoom returned a crop and the answer is correct, else 0.0.

    The mode token plays no part: this is the always-tool baseline of the paper's component
    table (row #2). Scaled by a fixed coefficient (DeepEyes: 1.2, AutoTool's lambda base).
    """

    __name__ = "tool"

    def __init__(self, *, coefficient: float = 1.2, accuracy: AccuracyReward | None = None) -> None:
        self.coefficient = coefficient
        self.accuracy = accuracy or AccuracyReward()

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> Rewards:
        episodes = [parse_completion(c) for c in completions]
        correct = self.accuracy.score(episodes, kwargs)
        return [
            self.coefficient * (1.0 if ok and ep.n_valid_calls > 0 else 0.0)
            for ep, ok in zip(episodes, correct, strict=True)
        ]


def build_reward_functions(
    settings: RewardSettings | None = None, *, amb: AMBController | AMBConfig | None = None
) -> tuple[list[Any], list[float]]:
    """The reward functions and their weights for a trainer, from one :class:`RewardSettings`.

    ``[accuracy, format, tool]`` (``[accuracy, format]`` for ``tool_scheme: none``), with the
    weights of :meth:`RewardSettings.weights`. With ``amb=None`` the MSPO tool reward runs with
    a default AMB controller; pass ``AMBController(AMBConfig(gain=0))`` for fixed coefficients.
    """
    s = settings or RewardSettings()
    acc = AccuracyReward(judge=s.judge)
    funcs: list[Any] = [acc, FormatReward()]
    if s.tool_scheme == "mspo":
        controller = amb if amb is not None else AMBController()
        funcs.append(
            ToolReward(
                on_correct=s.on_correct,
                on_wrong=s.on_wrong,
                off_correct=s.off_correct,
                amb=controller,
                accuracy=acc,
            )
        )
    elif s.tool_scheme == "deepeyes":
        base = amb.config.base if isinstance(amb, AMBController) else amb.base if amb is not None else 1.2
        funcs.append(DeepEyesToolReward(coefficient=base, accuracy=acc))
    return funcs, s.weights()


def total_reward(settings: RewardSettings, accuracy: float, fmt: float, tool: float) -> float:
    """The weighted total of one rollout's terms (``tool`` already scaled by its coefficient)."""
    if settings.tool_scheme == "none":
        tool = 0.0
    return settings.accuracy_weight * accuracy + settings.format_weight * fmt + settings.tool_weight * tool


def autotool_rewards(
    *,
    amb: AMBController | AMBConfig | None = None,
    judge: Any = None,
    on_wrong: float = PAPER_ON_WRONG,
) -> tuple[list[Any], list[float]]:
    """The three AutoTool reward functions and their TRL ``reward_weights`` (DeepEyes' 0.8, 0.2; 1.0)."""
    return build_reward_functions(RewardSettings(judge=judge, on_wrong=on_wrong), amb=amb)


def _run(coro: Any) -> Any:
    """Run a coroutine from synchronous code, even when an event loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
