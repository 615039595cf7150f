"""Reading JSONL files (one JSON value per line) with one error style: ``PATH:LINE: what``.

It sits in ``types`` so that every layer's JSONL reader (question files, scripted replies,
ESI-Bench records) uses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eviseek.errors import SettingError
from eviseek.types.reading import MAX_JSONL_BYTES, check_size


def read_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line of the file at ``path``, parsed, with its line number (from 1).

    A line that is not valid JSON, a file that is not UTF-8 and a file larger than
    :data:`~eviseek.types.reading.MAX_JSONL_BYTES` raise :class:`~eviseek.errors.SettingError`
    (these files are named by the user) naming the file and line; the values are not checked
    further (the caller knows what a record must hold).
    """
    check_size(path, MAX_JSONL_BYTES, "a JSONL file", SettingError)
    with open(path, encoding="utf-8") as fh:
        lineno = 0
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SettingError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
                yield lineno, value
        except UnicodeDecodeError as exc:
            where = f"{path}:{lineno + 1}"
            raise SettingError(f"{where}: not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
