"""Importing ESI-Bench's own code from a checkout at run time (never copied into eviseek).

ESI-Bench's runner lives in ``src/active_explore``: ``pipeline.py`` imports its task modules as
``tasks.<name>`` and its helpers as ``utils``, so that folder goes on ``sys.path``. Importing the
pipeline imports OmniGibson; that only works inside ESI-Bench's own environment (its conda env
with Isaac Sim and the BEHAVIOR assets).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from eviseek.envs.budget import TABLETOP_BUDGET
from eviseek.errors import ConfigError

ROOT_ENV = "ESI_BENCH_ROOT"


def checkout_root(root: str | Path | None = None) -> Path:
    """The ESI-Bench checkout: ``root`` or ``$ESI_BENCH_ROOT``, checked to hold the runner."""
    value = root if root is not None else os.environ.get(ROOT_ENV)
    if not value:
        raise ConfigError(f"set {ROOT_ENV} (or pass root=) to a checkout of github.com/ESI-Bench/ESI-Bench")
    path = Path(value).expanduser().resolve()
    if not (path / "src" / "active_explore" / "pipeline.py").is_file():
        raise ConfigError(f"{path} is not an ESI-Bench checkout: src/active_explore/pipeline.py is missing")
    return path


def import_pipeline(root: str | Path | None = None) -> ModuleType:
    """ESI-Bench's ``pipeline`` module, imported from the checkout (once per process)."""
    src = str(checkout_root(root) / "src" / "active_explore")
    if src not in sys.path:
        sys.path.insert(0, src)
    loaded = sys.modules.get("pipeline")
    if loaded is not None and str(getattr(loaded, "__file__", "")).startswith(src):
        return loaded
    try:
        return importlib.import_module("pipeline")
    except ImportError as exc:
        raise ConfigError(
            f"cannot import ESI-Bench's pipeline from {src} ({exc}); run inside ESI-Bench's environment "
            "(its conda env with OmniGibson), with eviseek installed there"
        ) from exc


def task_module(pipeline: ModuleType, task: str) -> ModuleType:
    """One task module, through the pipeline's own loader."""
    try:
        return pipeline.load_task_module(task)  # type: ignore[no-any-return]
    except ImportError as exc:
        raise ConfigError(f"ESI-Bench task module {task!r} cannot be imported ({exc})") from exc


def runner_config(
    pipeline: ModuleType,
    task: str,
    source: Path,
    *,
    threshold: float,
    min_steps: int,
    max_steps: int = TABLETOP_BUDGET,
) -> Any:
    """The official runner's config for one question file, as its command line would build it with
    ESI-Bench's own decoding defaults (temperature 0.2, top_p 0.9) and no model or output folder: the
    task hooks read it, nothing here runs the official agent."""
    return pipeline.ActiveExploreConfig(
        task=task,
        metadata=source,
        question_index=0,
        json_root=None,
        results_root=Path("."),
        step_image_root=Path("."),
        provider="eviseek",
        model=None,
        api_key=None,
        max_steps=max_steps,
        min_steps=min_steps,
        threshold=threshold,
        max_new_tokens=1024,
        temperature=0.2,
        top_p=0.9,
        robot="R1",
        overwrite=True,
    )
