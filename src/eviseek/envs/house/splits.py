"""Named house splits (``house:dev``, ``house:test``): seeded, generated once, then cached.

The same seed gives byte-identical question files. Splits live in the same cache as the
tabletop's (``$EVISEEK_CACHE_DIR`` or ``~/.cache/eviseek``), under ``house/``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel

from eviseek.envs.house.questions import GENERATOR_VERSION, KINDS, build_question, unknown_kinds_message
from eviseek.errors import SettingError
from eviseek.types import Question


class HouseSplit(BaseModel):
    """A named split: its seed, questions per kind and rooms per house."""

    seed: int
    n_per_kind: int
    n_rooms: int = 6


SPLITS: dict[str, HouseSplit] = {
    "dev": HouseSplit(seed=3000, n_per_kind=3),
    "test": HouseSplit(seed=4000, n_per_kind=25),
}


def generate_questions(
    n_per_kind: int, seed: int, *, kinds: list[str] | None = None, n_rooms: int = 6
) -> list[Question]:
    """``n_per_kind`` questions of every kind (or of ``kinds``), in a fixed order."""
    chosen = kinds or list(KINDS)
    unknown = [k for k in chosen if k not in KINDS]
    if unknown:
        raise SettingError(unknown_kinds_message(unknown))
    return [build_question(k, seed, i, n_rooms=n_rooms) for k in chosen for i in range(n_per_kind)]


def split_dir(name: str, cache_dir: str | Path | None = None) -> Path:
    """The cache directory of split ``name`` (keyed by generator version and split settings)."""
    from eviseek.envs.split_cache import cache_root

    if name not in SPLITS:
        raise SettingError(f"unknown house split {name!r}; splits: {', '.join(SPLITS)}")
    key = hashlib.sha256(
        json.dumps([GENERATOR_VERSION, SPLITS[name].model_dump(), list(KINDS)]).encode()
    ).hexdigest()[:12]
    root = Path(cache_dir) if cache_dir is not None else cache_root()
    return root / "house" / f"{name}-{key}"


def load_split(name: str, *, cache_dir: str | Path | None = None) -> list[Question]:
    """The questions of split ``name`` (``dev`` or ``test``), generated on first use."""
    from eviseek.envs.split_cache import cached_questions

    split = SPLITS.get(name)
    target = split_dir(name, cache_dir)  # refuses an unknown name
    assert split is not None
    return cached_questions(
        target, lambda: generate_questions(split.n_per_kind, split.seed, n_rooms=split.n_rooms)
    )
