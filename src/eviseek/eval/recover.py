"""Finished episodes read back from their saved trajectories.

The runner saves an episode's ``trajectory.json`` (with its scored result) *before* it commits
the row to ``results.sqlite``, and saves it atomically (a temporary file, then a rename). So a
``trajectory.json`` that parses and holds a ``result`` is a finished episode, whatever happened
to the store afterwards: deleted, truncated to 0 bytes, damaged, or killed between the save and
the commit. This module reads those results back, so that nothing finished is re-run (and
billed again) and the store can be rebuilt from the trajectories, the source of truth.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from eviseek.errors import EviseekError
from eviseek.eval.store import ResultsStore
from eviseek.types import EpisodeResult
from eviseek.types.reading import MAX_TRAJECTORY_BYTES, read_text_capped
from eviseek.types.rundir import EPISODES_DIR, STORE_FILE, TRAJECTORY_FILE, RunDir

__all__ = [
    "TRAJECTORY_FILE",
    "RebuiltStore",
    "all_saved_results",
    "rebuild_store",
    "saved_result",
    "saved_results_for",
]


def saved_result(directory: str | Path) -> EpisodeResult | None:
    """The result saved in ``directory/trajectory.json``, or ``None`` if it holds no finished one.

    A file that does not parse is an attempt cut short (not a finished episode), so it reads as
    ``None`` rather than raising.
    """
    path = Path(directory, TRAJECTORY_FILE)
    try:
        data = json.loads(read_text_capped(path, MAX_TRAJECTORY_BYTES, "a trajectory"))
    except (OSError, ValueError):  # a ConfigError (too large, not UTF-8) is a ValueError too
        return None
    raw = data.get("result") if isinstance(data, dict) else None
    if raw is None:
        return None
    try:
        return EpisodeResult.model_validate(raw)
    except ValueError:
        return None


def saved_results_for(run_dir: str | Path, keys: Iterable[tuple[str, str]]) -> list[EpisodeResult]:
    """Saved results of the given ``(agent, question_id)`` episodes that finished, in key order."""
    run = RunDir(run_dir)
    if not run.episodes_dir.is_dir():  # a new run: nothing saved to look for, key by key
        return []
    out = []
    for agent, qid in keys:
        result = saved_result(run.episode_dir(agent, qid))
        if result is not None and (result.agent, result.question_id) == (agent, qid):
            out.append(result)
    return out


def all_saved_results(run_dir: str | Path) -> list[EpisodeResult]:
    """Every finished episode saved under ``RUN_DIR/episodes/``, in path order."""
    out = []
    for path in RunDir(run_dir).trajectory_files():
        result = saved_result(path.parent)
        if result is not None:
            out.append(result)
    return out


class RebuiltStore(BaseModel):
    """What :func:`rebuild_store` did."""

    path: Path
    rows: int
    """Rows in the new store."""
    from_trajectories: int
    """Rows taken from saved trajectories."""
    kept_rows: int
    """Rows of the old store kept because their trajectory file is gone."""
    moved_aside: list[Path] = Field(default_factory=list)
    """The old store's files, renamed (never deleted)."""
    old_store: str
    """``missing``, ``readable`` or ``damaged``."""


def rebuild_store(run_dir: str | Path) -> RebuiltStore:
    """Write a fresh ``results.sqlite`` from the saved trajectories of ``run_dir``.

    The old store (if any) is renamed to ``results.sqlite.old-<time>`` (``.damaged-<time>``
    when SQLite cannot read it), never deleted. Rows it still holds whose trajectory file is
    missing are carried over. Takes the run's lock, so it never races an ``eviseek eval``.
    """
    from eviseek.eval.store import StoreDamagedError

    run = Path(run_dir)
    if not run.is_dir():
        raise EviseekError(f"run directory {run} does not exist")
    with RunDir(run).lock():
        saved = {(r.agent, r.question_id): r for r in all_saved_results(run)}
        path = run / STORE_FILE
        old_rows: list[EpisodeResult] = []
        state = "missing"
        if path.exists():
            try:
                with ResultsStore(run, read_only=True) as old:
                    old_rows = old.results()
                state = "readable"
            except StoreDamagedError:
                state = "damaged"
        kept = [r for r in old_rows if (r.agent, r.question_id) not in saved]
        if not saved and not kept:
            raise EviseekError(
                f"{run} has no finished episode to rebuild {STORE_FILE} from: no "
                f"{EPISODES_DIR}/<agent>/<question_id>/{TRAJECTORY_FILE} holds a result"
            )
        stamp = time.strftime("%Y%m%d-%H%M%S")
        label = "damaged" if state == "damaged" else "old"
        moved = []
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{path}{suffix}")
            if source.exists():
                target = run / f"{STORE_FILE}.{label}-{stamp}{suffix}"
                os.replace(source, target)
                moved.append(target)
        with ResultsStore(run) as store:
            store.add_many([*kept, *saved.values()])
            rows = len(store)
    return RebuiltStore(
        path=path,
        rows=rows,
        from_trajectories=len(saved),
        kept_rows=len(kept),
        moved_aside=moved,
        old_store=state,
    )
