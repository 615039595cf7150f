"""Task texts rendered once per checkout state and reused (``eviseek esibench prompts``).

Rendering one record's task text imports ESI-Bench's pipeline and task modules (torch, scipy...),
which costs far more than the rendering itself. A rendered :class:`TaskText` is kept on disk under
``$EVISEEK_CACHE_DIR`` (or ``~/.cache/eviseek``) in ``esibench-tasktext/``, keyed by the
checkout's runner files (path, size and modification time of every ``src/active_explore`` Python
file), the record's own fields and the rendering settings: a changed checkout or record is
rendered again, an unchanged one is read back without importing anything of ESI-Bench.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eviseek.envs.esibench.task_text import TaskText
from eviseek.envs.split_cache import cache_root
from eviseek.types.atomic import write_atomic

CACHE_VERSION = "1"
"""Bumped when :class:`TaskText` or its rendering changes, so older entries are not read."""


def checkout_state(checkout: Path) -> str:
    """A digest of the checkout's runner files (their paths, sizes and modification times)."""
    runner = checkout / "src" / "active_explore"
    digest = hashlib.sha256(str(checkout.resolve()).encode())
    for file in sorted(runner.rglob("*.py")):
        stat = file.stat()
        digest.update(f"{file.relative_to(runner)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def cached_task_text(
    checkout: Path, row: dict[str, Any], settings: dict[str, Any], render: Callable[[], TaskText]
) -> TaskText:
    """The task text of the record ``row`` (its stored fields), from the cache or ``render()``."""
    key = hashlib.sha256(
        json.dumps(
            [CACHE_VERSION, checkout_state(checkout), row, settings], sort_keys=True, default=str
        ).encode()
    ).hexdigest()
    path = cache_root() / "esibench-tasktext" / key[:2] / f"{key}.json"
    if path.is_file():
        try:
            return TaskText.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError:
            pass  # a damaged entry is rendered again and rewritten
    text = render()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text.model_dump_json())
    except OSError:
        pass  # an unwritable cache only costs the next call a rendering
    return text
