"""Question sets for evaluation: named splits, generated directories and JSONL files.

A spec is one of:

* ``tabletop:dev`` / ``tabletop:test``, ``house:dev`` / ``house:test`` (or any ``name:split`` of a
  benchmark registered with :func:`~eviseek.eval.benchmark.register_benchmark`, one module each
  under :mod:`eviseek.eval.benchmarks`): a built-in split;
* a directory holding ``questions.jsonl`` (a generated set, or a run directory);
* a ``.jsonl`` file with one :class:`~eviseek.types.Question` record per line;
* AutoTool's benchmarks, ``vstar:PATH``, ``hrbench4k:PATH``, ``refcoco:PATH``, ``mathvista:PATH``,
  ``synthetic:N``... (see :mod:`eviseek.eval.benchmarks.autotool`).

Every question loaded records its benchmark (:attr:`~eviseek.types.Question.benchmark`): a
``name:split`` spec's, or the one a saved file records (recognised by content, with a logged
note, for files saved before the records). A question whose benchmark is not registered stops
the load with one line asking for the plugin that registers it.

Image paths inside question records are relative to the file's directory; they are made
absolute on load so the questions work from anywhere. Question files are read, written and
digested by :mod:`eviseek.types.question_file` (re-exported here), the one module for them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from eviseek.errors import ConfigError, SettingError
from eviseek.eval.benchmark import Loader, benchmarks, check_registered, record_benchmarks, register_benchmark
from eviseek.types import Question
from eviseek.types.question_file import (
    QUESTIONS_FILE,
    question_images,
    questions_digest,
    read_questions,
    write_questions,
)

__all__ = [
    "QUESTIONS_FILE",
    "check_unique_ids",
    "load_dataset",
    "question_images",
    "questions_digest",
    "read_questions",
    "register_dataset",
    "write_questions",
]

SplitLoader = Loader
logger = logging.getLogger(__name__)


def register_dataset(name: str, loader: SplitLoader) -> None:
    """Make ``name:<split>`` specs load with ``loader(split)`` (a benchmark with the default
    budget and no fixed environment; :func:`~eviseek.eval.benchmark.register_benchmark` says more)."""
    register_benchmark(name, loader)


def load_dataset(spec: str) -> list[Question]:
    """Load the questions named by ``spec`` (see the module docstring)."""
    if not spec or not spec.strip():
        raise ConfigError("empty dataset spec; give e.g. tabletop:dev, a directory or a .jsonl file")
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / QUESTIONS_FILE).exists():
            raise ConfigError(f"dataset directory {spec} has no {QUESTIONS_FILE}")
        questions = read_questions(path)
    elif path.is_file():
        questions = read_questions(path)
    elif ":" in spec and (spec.partition(":")[0] in benchmarks() or not spec.endswith((".jsonl", "/"))):
        name, _, split = spec.partition(":")
        if name not in benchmarks():
            known = ", ".join(f"{n}:<split>" for n in benchmarks())
            raise SettingError(
                f"unknown dataset {name!r} in {spec!r}; known: {known}, a directory or a .jsonl"
            )
        if not split:
            raise SettingError(f"dataset spec {spec!r} names no split, e.g. {name}:dev")
        benchmark = benchmarks()[name]
        questions = []
        for q in benchmark.loader(split):
            # The benchmark named in the spec owns what its loader returns (budget, rules), even
            # questions it borrows from another benchmark's split (which record that one's
            # name); a copy, since a loader may hand out its cached objects.
            if q.benchmark != benchmark.name:
                q = q.model_copy(update={"benchmark": benchmark.name})
            if q.env_id is None and benchmark.env_id is not None:
                q.env_id = benchmark.env_id  # a loader may leave the environment to its registration
            questions.append(q)
    else:
        raise ConfigError(
            f"dataset {spec!r} is neither an existing file or directory nor a name:split spec "
            "such as tabletop:dev"
        )
    if not questions:
        raise ConfigError(f"dataset {spec!r} holds no questions")
    check_unique_ids(questions, spec)
    note = record_benchmarks(questions)  # questions saved before benchmarks were recorded
    if note:
        logger.warning("%s: %s", spec, note)
    check_registered(questions, hint=f"pass --plugin with the module or .py file that registers it ({spec})")
    return questions


def check_unique_ids(questions: list[Question], source: str) -> None:
    """Refuse a question set where two questions share an id (results are keyed by it)."""
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise ConfigError(f"{source}: question id {q.id!r} appears more than once; ids must be unique")
        seen.add(q.id)
