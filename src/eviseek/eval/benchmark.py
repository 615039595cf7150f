"""The benchmark registry: one :class:`Benchmark` per dataset prefix, declared in one place.

A benchmark binds the name a ``--dataset`` spec starts with (``tabletop:dev``, ``house:test``,
``esibench:PATH``, ``vstar:PATH``...) to everything the harness does differently for it:

* its question loader, the environment its questions run in and the step budget a run uses
  unless ``--budget`` is given;
* how its answers are scored: its own :data:`Scorer` (else each question's answer contract), and
  the named rule sets a question may choose between (:class:`RuleSets`, ESI-Bench's);
* how the report shows it: the :class:`Taxonomy` its families and subcategories are ordered by,
  and the benchmark-specific sections it adds (:data:`REPORT_SECTIONS`).

Each built-in benchmark is one module of :mod:`eviseek.eval.benchmarks` with one
:func:`register_benchmark` call; a plugin registers its own the same way (``--plugin MODULE``).

Which benchmark a question belongs to (:func:`benchmark_for`) is told by the run's dataset spec
when it names one; questions read back from a file or a run directory are claimed by the
benchmark whose ``owns`` recognises them (the keys its loader writes into them, which older
runs carry too).

This module sits at the bottom of ``eval`` (the run configuration asks it for budgets); the
built-in modules are imported by name on the first lookup, so it imports nothing above it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from eviseek.answers import AnswerScore
from eviseek.envs.budget import NAVIGATION_BUDGET, TABLETOP_BUDGET
from eviseek.types import Question, Trajectory

__all__ = [
    "DEFAULT_BUDGET",
    "NAVIGATION_BUDGET",
    "REPORT_SECTIONS",
    "RULES_KEY",
    "TABLETOP_BUDGET",
    "Benchmark",
    "Loader",
    "RuleSets",
    "Scorer",
    "Taxonomy",
    "benchmark_for",
    "benchmark_of",
    "benchmarks",
    "register_benchmark",
    "rule_sets",
]

Loader = Callable[[str], list[Question]]
"""Questions of one spec: called with what follows ``name:`` (a split, a path, a count...)."""

Scorer = Callable[[Trajectory, Question, str | None], AnswerScore]
"""A benchmark's own verdict on an episode's raw answer (instead of the answer contract's)."""

RULES_KEY = "rules"
"""``Question.metadata`` key holding the rule set a question is scored by (see :class:`RuleSets`)."""

REPORT_SECTIONS = ("express", "autotool")
"""The benchmark-specific sections ``eviseek report`` can add to its common tables (accuracy by
family and subcategory, visual support, cost, paired comparisons):

* ``express``: EXPRESS-Bench's C, C*, E_path and d_T from the EXPRESS judge's grades;
* ``autotool``: AutoTool's tool-on/tool-off shares, cost per mode and each set's headline metric.
"""


class Taxonomy(Protocol):
    """How a benchmark orders its families and subcategories in reports."""

    def rank(self, family: str, subcategory: str) -> tuple[int, int]:
        """Sort key of a (family, subcategory) pair: smaller first; unknown pairs last."""
        ...


@dataclass(frozen=True)
class RuleSets:
    """Named rule sets a benchmark's questions choose between (``Question.metadata["rules"]``,
    written by its loader and replaced by ``eviseek score --rules NAME``)."""

    names: tuple[str, ...]
    """Every rule set, the loaders' default first."""
    parse: Callable[[object], str | None]
    """A saved or typed name to one of :attr:`names` (``None``: not one of them); this is where
    a benchmark accepts older spellings."""

    def of(self, question: Question) -> str | None:
        """The rule set ``question`` is scored by (``None``: it names none of these)."""
        return self.parse(question.metadata.get(RULES_KEY))


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
    """What a benchmark is: where its questions come from, where they run, for how long, how
    they are scored and how the report shows them."""

    name: str
    loader: Loader
    env_id: str | None = None
    """The environment its questions run in (``None``: each question names its own)."""
    budget: int = DEFAULT_BUDGET
    """Primitive steps per episode (``eviseek eval``'s default ``--budget`` for this benchmark)."""
    description: str = ""
    scorer: Scorer | None = None
    """Its own verdict (``None``: each question's answer contract decides)."""
    scoring: str = "contract"
    """The name of its scoring rules, shown by ``eviseek score`` and the report."""
    rules: RuleSets | None = None
    """Named rule sets its questions choose between (then :attr:`scoring` is the chosen one)."""
    owns: Callable[[Question], bool] | None = None
    """Recognises its questions once saved (a question file or a run directory as ``--dataset``)."""
    taxonomy: Taxonomy | None = None
    """The order of its families and subcategories in reports (``None``: first seen first)."""
    report_sections: tuple[str, ...] = ()
    """The report sections of :data:`REPORT_SECTIONS` it adds."""

    def chosen_rules(self, question: Question) -> str | None:
        """The rule set ``question`` chose among :attr:`rules` (``None``: it chose none, or this
        benchmark has no rule sets)."""
        return self.rules.of(question) if self.rules is not None else None

    def rules_of(self, question: Question) -> str:
        """The name of the rules ``question`` is scored by (its rule set, else :attr:`scoring`)."""
        return self.chosen_rules(question) or self.scoring


_REGISTRY: dict[str, Benchmark] = {}
_loaded = False


def register_benchmark(
    name: str,
    loader: Loader,
    *,
    env_id: str | None = None,
    budget: int = DEFAULT_BUDGET,
    description: str = "",
    scorer: Scorer | None = None,
    scoring: str | None = None,
    rules: RuleSets | None = None,
    owns: Callable[[Question], bool] | None = None,
    taxonomy: Taxonomy | None = None,
    report_sections: tuple[str, ...] = (),
) -> Benchmark:
    """Make ``name:<arg>`` dataset specs load with ``loader(arg)`` and run with ``budget`` steps,
    scored by ``scorer`` (else the answer contract) and reported with ``taxonomy`` and
    ``report_sections`` (see :class:`Benchmark` for each field).

    ``scoring`` names the scorer in reports (default: ``contract`` without a scorer, else the
    benchmark's name). Registering a name again replaces it (a plugin module may be imported twice).
    """
    if budget < 1:
        raise ValueError(f"benchmark {name!r}: budget must be at least 1, got {budget}")
    unknown = [s for s in report_sections if s not in REPORT_SECTIONS]
    if unknown:
        raise ValueError(
            f"benchmark {name!r}: unknown report section(s) {', '.join(unknown)}; "
            f"known: {', '.join(REPORT_SECTIONS)}"
        )
    benchmark = Benchmark(
        name,
        loader,
        env_id=env_id,
        budget=budget,
        description=description,
        scorer=scorer,
        scoring=scoring or ("contract" if scorer is None else name),
        rules=rules,
        owns=owns,
        taxonomy=taxonomy,
        report_sections=tuple(report_sections),
    )
    _REGISTRY[name] = benchmark
    return benchmark


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


def benchmark_for(question: Question, dataset: str | None = None) -> Benchmark | None:
    """The benchmark ``question`` belongs to: the one ``dataset`` (the run's spec) names, else the
    first (by name) whose ``owns`` recognises the question, else ``None`` (the answer contract
    scores it and the report adds nothing of a benchmark's own)."""
    named = benchmark_of(dataset) if dataset else None
    if named is not None:
        return named
    for benchmark in benchmarks().values():
        if benchmark.owns is not None and benchmark.owns(question):
            return benchmark
    return None


def rule_sets() -> dict[str, RuleSets]:
    """Every benchmark's named rule sets by benchmark name (for ``eviseek score --rules``)."""
    return {name: b.rules for name, b in benchmarks().items() if b.rules is not None}
