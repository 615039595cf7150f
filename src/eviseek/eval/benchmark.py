"""The benchmark registry: one :class:`Benchmark` per dataset prefix, declared in one place.

A benchmark binds the name a ``--dataset`` spec starts with (``tabletop:dev``, ``house:test``,
``esibench:PATH``, ``vstar:PATH``...) to its question loader, the environment its questions run
in and the step budget a run uses unless ``--budget`` is given. Each built-in benchmark is one
module of :mod:`eviseek.eval.benchmarks` with one :func:`register_benchmark` call; a plugin
registers its own the same way (``--plugin MODULE``).

This module sits at the bottom of ``eval`` (the run configuration asks it for budgets); the
built-in modules are imported by name on the first lookup, so it imports nothing above it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from eviseek.answers import AnswerScore
from eviseek.types import Question, Trajectory

__all__ = [
    "DEFAULT_BUDGET",
    "NAVIGATION_BUDGET",
    "TABLETOP_BUDGET",
    "Benchmark",
    "Loader",
    "Scorer",
    "benchmark_of",
    "benchmarks",
    "register_benchmark",
    "register_scorer",
    "scorer_named",
]

Loader = Callable[[str], list[Question]]
"""Questions of one spec: called with what follows ``name:`` (a split, a path, a count...)."""

Scorer = Callable[[Trajectory, Question, str | None], AnswerScore]
"""A benchmark's own verdict on an episode's raw answer (instead of the answer contract's)."""

TABLETOP_BUDGET = 30
"""Primitive steps per episode on ESI-Bench and the tabletop (the paper's appendix A)."""
NAVIGATION_BUDGET = 120
"""Primitive steps per episode on EXPRESS-Bench and the house (the paper's section 5.5)."""
DEFAULT_BUDGET = TABLETOP_BUDGET
"""The budget of a benchmark that names none, and of question files and directories."""

_BUILTINS = (
    "eviseek.eval.benchmarks.tabletop",
    "eviseek.eval.benchmarks.house",
    "eviseek.eval.benchmarks.express",
    "eviseek.eval.benchmarks.esibench",
    "eviseek.eval.benchmarks.autotool",
)


@dataclass(frozen=True)
class Benchmark:
    """What a benchmark is: where its questions come from, where they run, for how long."""

    name: str
    loader: Loader
    env_id: str | None = None
    """The environment its questions run in (``None``: each question names its own)."""
    budget: int = DEFAULT_BUDGET
    """Primitive steps per episode (``eviseek eval``'s default ``--budget`` for this benchmark)."""
    description: str = ""


_REGISTRY: dict[str, Benchmark] = {}
_SCORERS: dict[str, Scorer] = {}
_loaded = False


def register_benchmark(
    name: str,
    loader: Loader,
    *,
    env_id: str | None = None,
    budget: int = DEFAULT_BUDGET,
    description: str = "",
) -> Benchmark:
    """Make ``name:<arg>`` dataset specs load with ``loader(arg)`` and run with ``budget`` steps.

    Registering a name again replaces it (a plugin module may be imported twice).
    """
    if budget < 1:
        raise ValueError(f"benchmark {name!r}: budget must be at least 1, got {budget}")
    benchmark = Benchmark(name, loader, env_id=env_id, budget=budget, description=description)
    _REGISTRY[name] = benchmark
    return benchmark


def register_scorer(name: str, scorer: Scorer) -> None:
    """Score questions whose ``metadata["scorer"]`` is ``name`` with ``scorer`` (the name a
    benchmark's loader writes into its questions, so saved runs rescore the same way)."""
    _SCORERS[name] = scorer


def scorer_named(name: object) -> Scorer | None:
    """The scorer registered as ``name``, or ``None``: the answer contract decides."""
    if not isinstance(name, str):
        return None
    _load_builtins()
    return _SCORERS.get(name)


def _load_builtins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _BUILTINS:
            importlib.import_module(module)


def benchmarks() -> dict[str, Benchmark]:
    """Every registered benchmark by name (built-ins loaded first), sorted by name."""
    _load_builtins()
    return dict(sorted(_REGISTRY.items()))


def benchmark_of(spec: str) -> Benchmark | None:
    """The benchmark a dataset spec names (``house:dev`` -> house), or ``None`` for a question
    file or directory. The name is matched case-insensitively."""
    _load_builtins()
    name, sep, _ = spec.strip().partition(":")
    if not sep:
        return None
    return _REGISTRY.get(name) or _REGISTRY.get(name.lower())
