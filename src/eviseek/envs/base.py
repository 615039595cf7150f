"""The environment protocol agents use, in a synchronous and an asynchronous form.

Environments follow Gymnasium's shape: ``reset(*, seed, options) -> (observation, info)`` and
``step(action) -> StepResult`` with ``terminated`` (the task ended) kept apart from ``truncated``
(a limit was reached). The question to host is passed as ``options={"question": Question}``.

Agents talk to an :class:`AsyncEnv`, so the evaluation harness can put the simulator in
a worker process while model calls overlap; :func:`as_async` adapts any :class:`Env`. A
benchmark's own episode rules reach agents the same way, as :class:`TaskHooks` asked for by
name (:func:`task_hooks`).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from eviseek.errors import ConfigError
from eviseek.types import Action, ActionSpec, Observation, Question, StepResult


@runtime_checkable
class Env(Protocol):
    """A synchronous environment hosting one question per episode."""

    env_id: str

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode. ``options["question"]`` selects the question (a :class:`Question`)."""
        ...

    def step(self, action: Action) -> StepResult:
        """Execute one atomic action. A bad action yields ``feedback.success=False``, never raises."""
        ...

    def legal_actions(self) -> list[ActionSpec]:
        """The atomic actions the current question allows, with their legal arguments."""
        ...

    def close(self) -> None:
        """Release simulator resources."""
        ...


@runtime_checkable
class SupportGradingEnv(Protocol):
    """An environment that can grade how well a set of its frames shows the decisive evidence."""

    def visual_support(self, frame_ids: list[int]) -> float:
        """Grade in {0, 0.5, 1} for frames of the current episode (privileged; for scoring only)."""
        ...


class AsyncEnv(Protocol):
    """The asynchronous form agents use."""

    env_id: str

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """See :meth:`Env.reset`."""
        ...

    async def step(self, action: Action) -> StepResult:
        """See :meth:`Env.step`."""
        ...

    async def legal_actions(self) -> list[ActionSpec]:
        """See :meth:`Env.legal_actions`."""
        ...

    async def close(self) -> None:
        """See :meth:`Env.close`."""
        ...


class ThreadedEnv:
    """Runs a synchronous :class:`Env` in a worker thread so the event loop stays free.

    One lock serialises calls: simulator clients are not safe to drive from two threads at once.
    """

    def __init__(self, env: Env) -> None:
        self.env = env
        self.env_id = env.env_id
        self._lock = asyncio.Lock()

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        async with self._lock:
            return await asyncio.to_thread(fn, *args, **kwargs)

    async def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Reset in the worker thread."""
        result: tuple[Observation, dict[str, Any]] = await self._call(
            self.env.reset, seed=seed, options=options
        )
        return result

    async def step(self, action: Action) -> StepResult:
        """Step in the worker thread."""
        result: StepResult = await self._call(self.env.step, action)
        return result

    async def legal_actions(self) -> list[ActionSpec]:
        """Legal actions (cheap; still serialised with the other calls)."""
        result: list[ActionSpec] = await self._call(self.env.legal_actions)
        return result

    async def close(self) -> None:
        """Close the wrapped environment."""
        await self._call(self.env.close)


def as_async(env: Env | AsyncEnv) -> AsyncEnv:
    """Wrap a synchronous env in a :class:`ThreadedEnv`; pass an async one through."""
    if asyncio.iscoroutinefunction(getattr(env, "step", None)):
        return env  # type: ignore[return-value]
    return ThreadedEnv(env)  # type: ignore[arg-type]


def question_from_options(options: dict[str, Any] | None) -> Question | None:
    """The :class:`Question` passed in reset options, validated if given as a dict."""
    if not options or options.get("question") is None:
        return None
    q = options["question"]
    return q if isinstance(q, Question) else Question.model_validate(q)


class TaskHooks(Protocol):
    """A benchmark's own per-task prompting and stopping, for agents that reproduce its baseline.

    Some benchmarks ship their own episode rules (ESI-Bench's task modules build each prompt,
    read each reply, decide when to stop and pick the final answer). An agent asks for them by
    name with :func:`task_hooks` and calls them through this protocol, so it never imports the
    environment that provides them. ``history`` is the benchmark's own list of turns.
    """

    def contents(
        self, image_path: Path, history: list[dict[str, Any]], prompt: str, references: list[Path]
    ) -> list[str | Path]:
        """One call's content in the benchmark's order: text pieces and image files."""
        ...

    def system_prompt(self) -> str:
        """The per-step instruction."""
        ...

    def forced_choice_prompt(self) -> str:
        """The last-chance prompt when the final answer is an abstention."""
        ...

    def read(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The benchmark's reading of one JSON reply."""
        ...

    def should_stop(
        self, parsed: dict[str, Any], history: list[dict[str, Any]], step: int
    ) -> tuple[bool, str]:
        """Whether to stop after the reply of ``step`` (1-based), and why."""
        ...

    def final_answer(self, history: list[dict[str, Any]]) -> tuple[Any, int]:
        """The answer kept from the history, and its step."""
        ...

    def needs_forced_choice(self, answer: Any, stop_reason: str) -> bool:
        """Whether the forced-choice prompt is asked for this final answer."""
        ...


TaskHooksFactory = Callable[..., TaskHooks]
"""Builds one question's hooks: ``factory(question, root, **settings)``."""

_TASK_HOOKS: dict[str, str | TaskHooksFactory] = {}


def register_task_hooks(name: str, entry_point: str | TaskHooksFactory) -> None:
    """Offer task hooks under ``name``; ``entry_point`` is ``"module:attr"`` (``attr`` may be
    dotted; imported when first asked for, like an environment's) or the factory itself."""
    _TASK_HOOKS[name] = entry_point


def task_hooks(name: str, question: Question, root: str | None = None, **settings: Any) -> TaskHooks:
    """The hooks registered as ``name`` for ``question`` (``root``: where the benchmark's own code
    is, when it lives outside eviseek); a :class:`~eviseek.errors.ConfigError` for an unknown name."""
    if name not in _TASK_HOOKS:
        raise ConfigError(f"no task hooks named {name!r}; registered: {', '.join(sorted(_TASK_HOOKS))}")
    entry = _TASK_HOOKS[name]
    if isinstance(entry, str):
        module_name, _, path = entry.partition(":")
        found: Any = importlib.import_module(module_name)
        for attr in path.split("."):
            found = getattr(found, attr)
        entry = found
    factory: TaskHooksFactory = entry
    return factory(question, root, **settings)
