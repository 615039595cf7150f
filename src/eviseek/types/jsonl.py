"""Reading JSONL files (one JSON value per line) with one error style: ``PATH:LINE: what``.

It sits in ``types`` so that every layer's JSONL reader (question files, scripted replies,
ESI-Bench records) uses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError


def read_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of the file at ``path``, parsed, with its line number (from 1).

    A line that is not valid JSON raises :class:`~eviseek.errors.ConfigError` naming the file and
    line; the values are not checked further (the caller knows what a record must hold).
    """
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
            yield lineno, value
