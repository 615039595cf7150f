"""Generated question splits cached on disk, shared by the tabletop and the house splits."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from eviseek.types import Question
from eviseek.types.atomic import atomic_folder
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
        with atomic_folder(target) as tmp:
            write_questions(tmp, questions, image_dir=GENERATED_IMAGE_DIR)
    return read_questions(target)
