"""``questions.jsonl``: the one reader, writer and digest of question files.

A question file holds one :class:`~eviseek.types.Question` record per line. Generated sets
(``eviseek tabletop generate``, the cached splits) keep their images in ``images/``; run
directories keep copies in ``question_images/`` so a run can be scored on another machine. Both
name images by content hash and store paths relative to the file's folder; reading makes them
absolute. Every caller (generators, the evaluation harness, the viewer, scorers, judges) goes
through this module, so files are read with one set of rules and one error style:
``PATH:LINE: what is wrong``.

It sits in ``types`` (with :meth:`Trajectory.save`) so that every layer may use it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import ValidationError

from eviseek.errors import ConfigError, SettingError
from eviseek.types.atomic import atomic_file
from eviseek.types.image import Image
from eviseek.types.jsonl import read_jsonl
from eviseek.types.question import Question

QUESTIONS_FILE = "questions.jsonl"
RUN_IMAGE_DIR = "question_images"
"""Where a run directory keeps copies of its questions' images."""
GENERATED_IMAGE_DIR = "images"
"""Where a generated question set keeps its images."""


def questions_file(path: str | Path) -> Path:
    """The question file at ``path``: the file itself, or ``questions.jsonl`` inside a directory."""
    p = Path(path)
    return p / QUESTIONS_FILE if p.is_dir() else p


def question_images(question: Question) -> list[Image]:
    """The images a question carries (initial view, then reference images)."""
    imgs = [question.initial_image] if question.initial_image is not None else []
    return imgs + list(question.reference_images)


MISSING_HINT = "write one with `eviseek tabletop generate --out DIR`, or point at a run directory"


def read_questions(path: str | Path, *, missing_hint: str = MISSING_HINT) -> list[Question]:
    """Read a question file (or the ``questions.jsonl`` in a directory), in file order.

    Relative image paths resolve against the file's folder. A missing file, a line that is not
    JSON and a record that is not a :class:`Question` each raise
    :class:`~eviseek.errors.ConfigError` naming the file (and line); ``missing_hint`` says how to
    get the file.
    """
    file = questions_file(path)
    if not file.is_file():
        hint = f"; {missing_hint}" if missing_hint else ""
        raise ConfigError(f"no question file at {file}{hint}")
    base = file.resolve().parent
    out: list[Question] = []
    for lineno, record in read_jsonl(file):
        try:
            q = Question.model_validate(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "record"
            raise SettingError(f"{file}:{lineno}: not a Question record ({where}: {first['msg']})") from exc
        for img in question_images(q):
            if img.path is not None and not os.path.isabs(img.path):
                img.path = str(base / img.path)
        out.append(q)
    return out


def read_questions_by_id(path: str | Path, *, missing_hint: str = MISSING_HINT) -> dict[str, Question]:
    """:func:`read_questions` keyed by question id."""
    return {q.id: q for q in read_questions(path, missing_hint=missing_hint)}


def _portable(question: Question, image_dir: str) -> Question:
    """A copy whose images point at ``IMAGE_DIR/<hash>.png`` (pixels kept in memory)."""
    if not question_images(question):
        return question  # nothing to rewrite
    copy = question.model_copy(deep=True)
    for src, dst in zip(question_images(question), question_images(copy), strict=True):
        if src.loaded:
            dst._pixels = src.array()
        elif src.path is not None:
            # Loaded into the copy only, so the caller's path-backed questions stay light (a
            # benchmark of 8K images is never all in memory); the file name is the content hash.
            dst.array()
        else:
            continue
        dst.path = f"{image_dir}/{dst.digest()[:20]}.png"
    return copy


_NO_BENCHMARK = {"benchmark"}


def _lines(
    questions: Sequence[Question], image_dir: str | None, *, legacy: bool = False
) -> Iterator[tuple[Question, str]]:
    # One record at a time: a record's pixels are dropped once its line is written. A question
    # of no benchmark is written without the key, as every question was before the records
    # (``legacy``: every question so), so such files stay byte for byte what they were.
    for q in questions:
        record = q if image_dir is None else _portable(q, image_dir)
        drop = _NO_BENCHMARK if legacy or record.benchmark is None else None
        yield record, record.model_dump_json(exclude=drop) + "\n"


def write_questions(
    directory: str | Path, questions: Sequence[Question], *, image_dir: str | None = RUN_IMAGE_DIR
) -> str:
    """Write ``directory/questions.jsonl`` atomically and return its :func:`questions_digest`.

    With ``image_dir`` (``question_images`` for run directories, ``images`` for generated sets)
    the images are written there, named by content hash, and the records point at them; with
    ``None`` records keep their image paths and no image is copied. The in-memory questions are
    left unchanged.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with atomic_file(directory / QUESTIONS_FILE) as fh:
        for record, line in _lines(questions, image_dir):
            if image_dir is not None:
                for img in question_images(record):
                    if img.loaded:
                        img.save(directory, image_dir)
            digest.update(line.encode("utf-8"))
            fh.write(line)
    return digest.hexdigest()


def questions_digest(
    questions: Sequence[Question], *, image_dir: str | None = RUN_IMAGE_DIR, legacy: bool = False
) -> str:
    """The SHA-256 of the file :func:`write_questions` writes for ``questions``, without writing.

    This is what a run's ``questions_sha256`` records: equal digests mean the same questions,
    images included (their file names are their content hashes). ``legacy`` digests them as
    files were written before questions recorded their benchmark (so such a run still resumes).
    """
    digest = hashlib.sha256()
    for _, line in _lines(questions, image_dir, legacy=legacy):
        digest.update(line.encode("utf-8"))
    return digest.hexdigest()
