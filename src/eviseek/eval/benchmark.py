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

Which benchmark a question belongs to is recorded in it (:attr:`Question.benchmark`, written
when its benchmark loads it, saved with it in every question file and run directory) and in the
run's ``run.json``; every later reader looks it up by that name (:func:`benchmark_named`) and
stops with one line naming the plugin to pass when it is not registered. Only questions saved
before these records are recognised by content, once, by the benchmark whose ``owns`` accepts
them (:func:`record_benchmarks`, which says so).

This module sits at the bottom of ``eval`` (the run configuration asks it for budgets); the
built-in modules are imported by name on the first lookup, so it imports nothing above it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from eviseek._registration import Origin, Origins, caller_origin
from eviseek.answers import AnswerScore
from eviseek.envs.budget import NAVIGATION_BUDGET, TABLETOP_BUDGET
from eviseek.errors import SettingError
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
    "UnregisteredBenchmark",
    "benchmark_for",
    "benchmark_named",
    "benchmark_names",
    "benchmark_of",
    "benchmarks",
    "budget_of",
    "check_registered",
    "declare_report_section",
    "recognise",
    "record_benchmarks",
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

A plugin adds its own with :func:`eviseek.eval.report_sections.register_report_section`.
"""


_DECLARED_SECTIONS: list[str] = []


def declare_report_section(name: str) -> None:
    """Make ``name`` a section benchmarks may add (called by
    :func:`eviseek.eval.report_sections.register_report_section`, which holds its callable)."""
    if name not in _DECLARED_SECTIONS:
        _DECLARED_SECTIONS.append(name)


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
    """The report sections it adds: built-in (:data:`REPORT_SECTIONS`) or registered by a plugin
    (:func:`eviseek.eval.report_sections.register_report_section`)."""
    origin: Origin = field(default_factory=lambda: Origin("unknown"))
    """The module that registered it (a built-in module, or a plugin's)."""

    def chosen_rules(self, question: Question) -> str | None:
        """The rule set ``question`` chose among :attr:`rules` (``None``: it chose none, or this
        benchmark has no rule sets)."""
        return self.rules.of(question) if self.rules is not None else None

    def rules_of(self, question: Question) -> str:
        """The name of the rules ``question`` is scored by (its rule set, else :attr:`scoring`)."""
        return self.chosen_rules(question) or self.scoring


_REGISTRY: dict[str, Benchmark] = {}
_ORIGINS = Origins("benchmark")
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
    replace: bool = False,
) -> Benchmark:
    """Make ``name:<arg>`` dataset specs load with ``loader(arg)`` and run with ``budget`` steps,
    scored by ``scorer`` (else the answer contract) and reported with ``taxonomy`` and
    ``report_sections`` (see :class:`Benchmark` for each field).

    ``scoring`` names the scorer in reports (default: ``contract`` without a scorer, else the
    benchmark's name). Registering a name again from the same module replaces it (a plugin may be
    imported twice); from another module it raises :class:`~eviseek.errors.ConfigError` unless
    ``replace=True``, and the replacement is recorded (:func:`eviseek._registration.replacements`).
    """
    _load_builtins()  # so a plugin's claim on a built-in name meets the built-in, whatever the order
    if budget < 1:
        raise ValueError(f"benchmark {name!r}: budget must be at least 1, got {budget}")
    unknown = [s for s in report_sections if s not in REPORT_SECTIONS and s not in _DECLARED_SECTIONS]
    if unknown:
        raise ValueError(
            f"benchmark {name!r}: unknown report section(s) {', '.join(unknown)}; "
            f"known: {', '.join([*REPORT_SECTIONS, *_DECLARED_SECTIONS])} (a plugin registers its own "
            "with eviseek.eval.report_sections.register_report_section before its benchmark)"
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
        origin=caller_origin(),
    )
    _ORIGINS.claim(name, benchmark.origin, replace=replace, exists=name in _REGISTRY)
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


class UnregisteredBenchmark(SettingError):
    """A question or a run names a benchmark that nothing registered in this process (its plugin
    was not passed, or cannot be imported); the message says which plugin to pass."""


def benchmark_named(name: str, *, hint: str = "") -> Benchmark:
    """The registered benchmark ``name``; :class:`UnregisteredBenchmark` when there is none.

    ``hint`` says where its registration was expected to come from (a run's plugin); without
    one the message asks for the ``--plugin`` that registers it."""
    _load_builtins()
    found = _REGISTRY.get(name)
    if found is None:
        how = hint or "pass --plugin with the module or .py file that registers it"
        raise UnregisteredBenchmark(
            f"benchmark {name!r} is not registered here (registered: {', '.join(sorted(_REGISTRY))}); {how}"
        )
    return found


def recognise(question: Question) -> Benchmark | None:
    """The benchmark whose ``owns`` recognises ``question`` (the first by name), for questions
    saved before benchmarks were recorded (:attr:`Question.benchmark`); ``None``: no benchmark."""
    for benchmark in benchmarks().values():
        if benchmark.owns is not None and benchmark.owns(question):
            return benchmark
    return None


def record_benchmarks(questions: Iterable[Question], dataset: str | None = None) -> str | None:
    """Fill in :attr:`Question.benchmark` where a question records none: the benchmark
    ``dataset`` names, else (a question saved before the records) the one whose ``owns``
    recognises it. Returns a one-line note when any was assigned, else ``None``.

    Questions that record a benchmark keep it: nothing is recognised again for them."""
    named = benchmark_of(dataset) if dataset else None
    by_spec: dict[str, int] = {}
    by_content: dict[str, int] = {}
    for q in questions:
        if q.benchmark is not None:
            continue
        found = named if named is not None else recognise(q)
        if found is not None:
            q.benchmark = found.name
            tally = by_spec if named is not None else by_content
            tally[found.name] = tally.get(found.name, 0) + 1
    how = [
        f"{', '.join(f'{n} question(s) as {name}' for name, n in sorted(counts.items()))} {why}"
        for counts, why in ((by_spec, "by the dataset spec"), (by_content, "by their content"))
        if counts
    ]
    if not how:
        return None
    return (
        f"questions saved without a benchmark record were assigned one ({'; '.join(how)}); "
        "questions saved from now on record their benchmark"
    )


def benchmark_for(question: Question, dataset: str | None = None) -> Benchmark | None:
    """The benchmark ``question`` belongs to: the one it records (:attr:`Question.benchmark`,
    looked up by name: :class:`UnregisteredBenchmark` when it is not registered), else the one
    ``dataset`` (the run's spec) names, else (a question saved before the records) the first by
    name whose ``owns`` recognises it, else ``None`` (the answer contract scores it and the report
    adds nothing of a benchmark's own)."""
    if question.benchmark is not None:
        return benchmark_named(question.benchmark)
    named = benchmark_of(dataset) if dataset else None
    if named is not None:
        return named
    return recognise(question)


def benchmark_names(questions: Iterable[Question]) -> list[str]:
    """The benchmarks ``questions`` record, in order of first appearance."""
    return list(dict.fromkeys(q.benchmark for q in questions if q.benchmark is not None))


def check_registered(questions: Iterable[Question], *, hint: str = "") -> None:
    """Raise :class:`UnregisteredBenchmark` for the first benchmark ``questions`` record that
    is not registered (``hint``: which plugin registers it, see :func:`benchmark_named`)."""
    for name in benchmark_names(questions):
        benchmark_named(name, hint=hint)


def budget_of(questions: Iterable[Question]) -> int:
    """The step budget of a saved question set: its benchmark's when every question records the
    same one, else :data:`DEFAULT_BUDGET`."""
    names = {q.benchmark for q in questions}
    if len(names) == 1 and None not in names:
        return benchmark_named(str(names.pop())).budget
    return DEFAULT_BUDGET


def rule_sets() -> dict[str, RuleSets]:
    """Every benchmark's named rule sets by benchmark name (for ``eviseek score --rules``)."""
    return {name: b.rules for name, b in benchmarks().items() if b.rules is not None}
