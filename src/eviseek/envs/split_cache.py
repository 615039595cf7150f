"""Generated question splits cached on disk, shared by the tabletop and the house splits."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from eviseek.types import Question
from eviseek.types.question_file import GENERATED_IMAGE_DIR, QUESTIONS_FILE, read_questions, write_questions

__all__ = ["cache_root", "cached_questions"]


def cache_root() -> Path:
    """Where generated splits are cached."""
    env = os.environ.get("EVISEEK_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "eviseek"


def cached_questions(target: Path, make: Callable[[], list[Question]]) -> list[Question]:
    """The questions cached in ``target``, made by ``make()`` and written there on first use.

    Written to a temporary sibling and renamed, so a reader never sees half a split and two
    processes generating at once both end with one complete copy.
    """
    if not (target / QUESTIONS_FILE).exists():
        questions = make()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            write_questions(tmp, questions, image_dir=GENERATED_IMAGE_DIR)
            try:
                tmp.rename(target)
            except OSError:
                if not (target / QUESTIONS_FILE).exists():  # pragma: no cover - lost a race oddly
                    raise
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return read_questions(target)
