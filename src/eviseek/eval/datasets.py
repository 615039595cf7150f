"""Question sets for evaluation: named splits, generated directories and JSONL files.

A spec is one of:

* ``tabletop:dev`` / ``tabletop:test``, ``house:dev`` / ``house:test`` (or any ``name:split`` registered with
  :func:`register_dataset`): a built-in split;
* a directory holding ``questions.jsonl`` (a generated set, or a run directory);
* a ``.jsonl`` file with one :class:`~eviseek.types.Question` record per line;
* AutoTool's benchmarks, ``vstar:PATH``, ``hrbench4k:PATH``, ``refcoco:PATH``, ``mathvista:PATH``,
  ``synthetic:N``... (see :mod:`eviseek.autotool.benchmark_specs`).

Image paths inside question records are relative to the file's directory; they are made
absolute on load so the questions work from anywhere. Question files are read, written and
digested by :mod:`eviseek.types.question_file` (re-exported here), the one module for them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from eviseek.errors import ConfigError
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

SplitLoader = Callable[[str], list[Question]]

_DATASETS: dict[str, SplitLoader] = {}


def register_dataset(name: str, loader: SplitLoader) -> None:
    """Make ``name:<split>`` specs load with ``loader(split)``."""
    _DATASETS[name] = loader


def _tabletop(split: str) -> list[Question]:
    from eviseek._lazy import require_pybullet

    require_pybullet("the tabletop question splits")
    from eviseek.envs.tabletop import load_split

    questions: list[Question] = load_split(split)
    return questions


register_dataset("tabletop", _tabletop)


def _house(split: str) -> list[Question]:
    from eviseek.envs.house import load_split

    questions: list[Question] = load_split(split)
    return questions


register_dataset("house", _house)


def _express(path: str) -> list[Question]:
    from eviseek.envs.express import load_express

    return load_express(path)


register_dataset("express", _express)


def _esibench(spec: str) -> list[Question]:
    from eviseek.eval.esibench import load_esibench

    return load_esibench(spec)


register_dataset("esibench", _esibench)


def _autotool_loader(name: str) -> SplitLoader:
    def load(arg: str) -> list[Question]:
        from eviseek.autotool.benchmark_specs import load_autotool_benchmark

        return load_autotool_benchmark(name, arg)

    return load


# AutoTool's benchmarks (vstar:PATH, hrbench4k:PATH, refcoco:PATH, mathvista:PATH, synthetic:N...),
# hosted by eviseek/ImageZoom-v0; names listed here so that the registry stays import-light.
for _name in (
    *("vstar", "hrbench", "hrbench4k", "hrbench8k", "pope", "refcoco", "refcoco+", "refcocog", "grounding"),
    *("mathvista", "mathverse", "mathvision", "wemath", "dynamath", "logicvista", "synthetic"),
):
    register_dataset(_name, _autotool_loader(_name))


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
    elif ":" in spec and (spec.partition(":")[0] in _DATASETS or not spec.endswith((".jsonl", "/"))):
        name, _, split = spec.partition(":")
        if name not in _DATASETS:
            known = ", ".join(f"{n}:<split>" for n in sorted(_DATASETS))
            raise ConfigError(
                f"unknown dataset {name!r} in {spec!r}; known: {known}, a directory or a .jsonl"
            )
        if not split:
            raise ConfigError(f"dataset spec {spec!r} names no split, e.g. {name}:dev")
        questions = list(_DATASETS[name](split))
    else:
        raise ConfigError(
            f"dataset {spec!r} is neither an existing file or directory nor a name:split spec "
            "such as tabletop:dev"
        )
    if not questions:
        raise ConfigError(f"dataset {spec!r} holds no questions")
    check_unique_ids(questions, spec)
    return questions


def check_unique_ids(questions: list[Question], source: str) -> None:
    """Refuse a question set where two questions share an id (results are keyed by it)."""
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise ConfigError(f"{source}: question id {q.id!r} appears more than once; ids must be unique")
        seen.add(q.id)
