"""Question sets for evaluation: named splits, generated directories and JSONL files.

A spec is one of:

* ``tabletop:dev`` / ``tabletop:test``, ``house:dev`` / ``house:test`` (or any ``name:split`` registered with
  :func:`register_dataset`): a built-in split;
* a directory holding ``questions.jsonl`` (a generated set, or a run directory);
* a ``.jsonl`` file with one :class:`~eviseek.types.Question` record per line.

Image paths inside question records are relative to the file's directory; they are made
absolute on load so the questions work from anywhere.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from eviseek.errors import ConfigError
from eviseek.types import Image, Question

QUESTIONS_FILE = "questions.jsonl"

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


def load_dataset(spec: str) -> list[Question]:
    """Load the questions named by ``spec`` (see the module docstring)."""
    if not spec or not spec.strip():
        raise ConfigError("empty dataset spec; give e.g. tabletop:dev, a directory or a .jsonl file")
    path = Path(spec).expanduser()
    if path.is_dir():
        file = path / QUESTIONS_FILE
        if not file.exists():
            raise ConfigError(f"dataset directory {spec} has no {QUESTIONS_FILE}")
        questions = read_questions(file)
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


def read_questions(path: str | Path) -> list[Question]:
    """Read a JSONL file of Question records; relative image paths resolve against its folder."""
    path = Path(path)
    base = path.resolve().parent
    out: list[Question] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                q = Question.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "record"
                raise ConfigError(
                    f"{path}:{lineno}: not a Question record ({where}: {first['msg']})"
                ) from exc
            for img in question_images(q):
                if img.path is not None and not os.path.isabs(img.path):
                    img.path = str(base / img.path)
            out.append(q)
    return out


def question_images(question: Question) -> list[Image]:
    """The images a question carries (initial view, then reference images)."""
    imgs = [question.initial_image] if question.initial_image is not None else []
    return imgs + list(question.reference_images)


def _portable(question: Question) -> Question:
    """A copy whose images point at ``question_images/<hash>.png`` (pixels kept in memory)."""
    if not question_images(question):
        return question  # nothing to rewrite
    copy = question.model_copy(deep=True)
    for src, dst in zip(question_images(question), question_images(copy), strict=True):
        if src.loaded or src.path is not None:
            # array() loads from the absolute path when needed; the file name is the content hash.
            dst._pixels = src.array()
            dst.path = f"question_images/{dst.digest()[:20]}.png"
    return copy


def write_questions(directory: str | Path, questions: list[Question]) -> str:
    """Write ``questions.jsonl`` (atomically) with its images copied beside it; return its SHA-256.

    The copy makes a run directory self-contained, so it can be scored on another machine.
    The in-memory questions are left unchanged.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    tmp = directory / (QUESTIONS_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for q in questions:
            copy = _portable(q)
            for img in question_images(copy):
                if img.loaded:
                    img.save(directory, "question_images")
            line = copy.model_dump_json() + "\n"
            digest.update(line.encode("utf-8"))
            fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(directory / QUESTIONS_FILE)
    return digest.hexdigest()


def questions_digest(questions: list[Question]) -> str:
    """The SHA-256 :func:`write_questions` would return for ``questions``, without writing."""
    digest = hashlib.sha256()
    for q in questions:
        digest.update((_portable(q).model_dump_json() + "\n").encode("utf-8"))
    return digest.hexdigest()
