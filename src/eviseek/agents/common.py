"""Pieces every agent shares: recorded stage calls, answer resolution and the episode result.

Two error paths are kept apart here. A reply the model got wrong (no JSON, wrong fields) is a
:class:`~eviseek.types.EpisodeEvent` in the trajectory and the caller applies its fallback; a
provider failure (server down, script exhausted) propagates, because a person must fix it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from eviseek.agents.parsing import ParseResult, parse_reply, schema_of
from eviseek.agents.prompting import render
from eviseek.answers import normalize_answer
from eviseek.answers.accept import accept_answer, esibench_rule
from eviseek.answers.esibench import esibench_final_answer
from eviseek.envs.base import AsyncEnv
from eviseek.models.base import Model, generate_recorded
from eviseek.types import (
    ChatMessage,
    Completion,
    GenerateConfig,
    Image,
    Observation,
    Question,
    Stage,
    Trajectory,
)
from eviseek.types.plans import AgentPlan
from eviseek.types.trajectory import EpisodeResult

T = TypeVar("T", bound=BaseModel)


C = TypeVar("C", bound=BaseModel)


def build_config(cls: type[C], config: C | None, overrides: dict[str, Any]) -> C:
    """``config`` (or the defaults) with keyword ``overrides`` applied, validated as a whole.

    An unknown or out-of-range setting raises :class:`~eviseek.errors.ConfigError` naming it.
    """
    from pydantic import ValidationError

    from eviseek.errors import ConfigError

    data = config.model_dump() if config is not None else {}
    data.update(overrides)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"bad {cls.__name__} setting(s): {problems}") from exc


def new_episode_id() -> str:
    """A short unique episode id."""
    return uuid.uuid4().hex[:12]


class StageCaller:
    """Makes one agent's model calls: sets stage, schema and metadata, records, parses, logs.

    ``base`` holds the agent's sampling settings (temperature, top-p, token limit); each call
    may override them (the forced-choice call runs at temperature 0).
    """

    def __init__(self, model: Model, trajectory: Trajectory, base: GenerateConfig) -> None:
        self.model = model
        self.trajectory = trajectory
        self.base = base
        self._base = base.model_dump()

    def config(
        self, stage: str, reply: type[BaseModel], metadata: dict[str, Any] | None = None, **overrides: Any
    ) -> GenerateConfig:
        """The request settings for one call of ``stage``."""
        data = dict(self._base)
        data.update(overrides)
        data["stage"] = stage
        data["response_schema"] = schema_of(reply)
        data["metadata"] = dict(metadata or {})
        # Every value here is already typed (a validated base, float overrides, our own dicts):
        # constructing without re-validation keeps a model call's bookkeeping cheap.
        return GenerateConfig.model_construct(**data)

    async def ask(
        self,
        stage: str,
        messages: Sequence[ChatMessage],
        reply: type[T],
        *,
        fallback: str,
        at_step: int = 0,
        metadata: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> tuple[ParseResult[T], Completion]:
        """Call the model, record the call, and parse the reply as ``reply``.

        When the reply cannot be read, a ``parse_failure`` event naming ``fallback`` (what the
        caller will do instead) is logged; the caller then does exactly that.
        """
        cfg = self.config(stage, reply, metadata, **overrides)
        completion, call = await generate_recorded(self.model, messages, cfg)
        self.trajectory.calls.append(call)
        parsed = parse_reply(completion.text, reply)
        if not parsed.ok:
            self.trajectory.log(
                "parse_failure",
                f"{stage} reply unreadable: {parsed.error}; fallback: {fallback}",
                stage=stage,
                at_step=at_step,
                data={"call_id": call.id, "output_head": completion.text[:200]},
            )
        elif parsed.prose is not None:
            value = getattr(parsed.value, "answer", None)
            self.trajectory.log(
                "answer_extracted",
                f"{stage} reply had no JSON; answer {str(value)[:80]!r} read from the prose ({parsed.prose})",
                stage=stage,
                at_step=at_step,
                data={"call_id": call.id, "form": parsed.prose, "output_tail": completion.text[-200:]},
            )
        elif parsed.repaired:
            self.trajectory.log(
                "reply_repaired",
                f"{stage} reply was near-JSON and was repaired before reading",
                stage=stage,
                at_step=at_step,
                data={"call_id": call.id},
            )
        return parsed, completion

    async def ask_rendered(
        self,
        stage: str,
        reply: type[T],
        *,
        fallback: str,
        at_step: int = 0,
        metadata: dict[str, Any] | None = None,
        template: str | None = None,
        context: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> tuple[ParseResult[T], Completion]:
        """Render ``template`` (default: the stage's own) with ``context`` and :meth:`ask`."""
        messages = render(template or stage, **(context or {}))
        return await self.ask(
            stage, messages, reply, fallback=fallback, at_step=at_step, metadata=metadata, **overrides
        )


class AgentSettings(Protocol):
    """What :func:`start_episode` reads from an agent's config: its sampling settings."""

    temperature: float
    top_p: float
    max_tokens: int | None

    def model_dump(self) -> dict[str, Any]:
        """The settings as a dict (recorded in the trajectory)."""
        ...


async def start_episode(
    agent: str,
    kind: str,
    config: AgentSettings,
    env: AsyncEnv,
    question: Question,
    model: Model,
    *,
    seed: int,
    plan: AgentPlan,
    sensors: tuple[str, ...] = ("rgb",),
) -> tuple[Observation, Trajectory, StageCaller]:
    """Reset ``env`` to ``question`` and open the episode's record.

    ``sensors``: what the agent declares it carries; an RGB-D agent (``("rgb", "depth")``) asks the
    env for depth, which an env that has it (the Habitat bridge) then sends with each frame.
    Returns the first observation, a trajectory that holds it (with ``plan`` and the agent's
    ``kind`` and settings), and a :class:`StageCaller` using ``config``'s sampling settings.
    """
    options: dict[str, object] = {"question": question}
    if tuple(sensors) != ("rgb",):
        options["sensors"] = list(sensors)
    obs, _info = await env.reset(seed=seed, options=options)
    traj = Trajectory(
        episode_id=new_episode_id(),
        question_id=question.id,
        agent=agent,
        model=model.name,
        config={"kind": kind, **config.model_dump()},
        initial_image=obs.image,
        initial_pose=obs.pose,
        plan=plan,
    )
    caller = StageCaller(
        model,
        traj,
        GenerateConfig(temperature=config.temperature, top_p=config.top_p, max_tokens=config.max_tokens),
    )
    return obs, traj, caller


def contract_metadata(question: Question) -> dict[str, Any]:
    """The answer contract as structured request metadata (also stated in the prompt text)."""
    return {
        "question": question.text,
        "question_id": question.id,
        "answer_kind": question.contract.kind,
        "options": list(question.contract.options or []),
        "format_hint": question.contract.format_hint,
    }


async def resolve_answer(
    caller: StageCaller,
    question: Question,
    raw: str | None,
    *,
    images: Sequence[Image],
    context: str,
    at_step: int,
    enabled: bool = True,
    stop_reason: str = "",
) -> tuple[str | None, str | None]:
    """Read ``raw`` as the question does (:func:`~eviseek.answers.accept.accept_answer`: the
    contract, or an ESI-Bench task's own rule); ask a forced-choice question when it says so.

    Returns ``(answer, raw_answer)``. The forced-choice call runs at temperature 0 with the
    images and short context given, and no further interaction (ESI-Bench's fallback).
    """
    answer = accept_answer(question, raw, stop_reason=stop_reason)
    rule = esibench_rule(question)
    if answer is not None or not enabled:
        return answer, raw
    why = (
        "is one the task's rule answers with its forced choice"
        if rule
        else "does not fit the answer contract"
    )
    caller.trajectory.log(
        "answer_unmapped",
        f"final answer {str(raw)[:80]!r} {why}; asking a forced choice",
        stage=Stage.FORCED_CHOICE,
        at_step=at_step,
    )
    meta = contract_metadata(question)
    parsed, completion = await caller.ask_rendered(
        Stage.FORCED_CHOICE,
        _forced_reply(),
        fallback="use the reply text as the answer",
        at_step=at_step,
        metadata=meta,
        context={
            "question": question,
            "contract": question.contract.describe(),
            "previous": raw or "",
            "context": context,
            "images": list(images),
        },
        temperature=0.0,
        top_p=1.0,
    )
    forced_raw = parsed.value.answer if parsed.value is not None else completion.text  # type: ignore[attr-defined]
    if rule is not None:
        # The task keeps whatever its reader makes of the forced reply (ESI-Bench's pipeline
        # does not ask twice), abstentions included; its scorer judges that.
        return _text_of(esibench_final_answer(rule, forced_raw)), forced_raw
    forced = normalize_answer(forced_raw, question.contract)
    if forced is None:
        caller.trajectory.log(
            "answer_missing",
            "the forced choice did not fit the answer contract either; the episode has no answer",
            stage=Stage.FORCED_CHOICE,
            at_step=at_step,
        )
        return None, forced_raw or raw
    return forced, forced_raw


def _text_of(value: object) -> str | None:
    text = "" if value is None else str(value).strip()
    return text or None


def _forced_reply() -> type[BaseModel]:
    from eviseek.agents.replies import ForcedChoiceReply

    return ForcedChoiceReply


def finish(
    trajectory: Trajectory,
    question: Question,
    *,
    answer: str | None,
    raw_answer: str | None,
    mode: str | None,
    started: float,
    error: str | None = None,
) -> EpisodeResult:
    """Fill ``trajectory.result`` from what the trajectory recorded; return it."""
    result = trajectory.make_result(
        question,
        answer=answer,
        raw_answer=raw_answer,
        mode=mode,
        wall_time_s=time.perf_counter() - started,
        error=error,
    )
    trajectory.result = result
    return result


def load_pixels(images: Sequence[Image], base_dir: str | Path | None) -> None:
    """Bring saved images back into memory so they can be sent to a model again."""
    for img in images:
        if not img.loaded and img.path is not None:
            img.array(base_dir)
