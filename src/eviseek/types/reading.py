"""Reading a text file whole only when its size is plausible: the size is checked first.

A damaged or hostile file (a trajectory of 1 GB, a question file that is a disk image) would
otherwise be read into memory whole, then parsed into several times its size, before any error
could say what was wrong. Each reader states the most it expects; larger files are refused with
one line naming the file and its size.

The limits are ours, set far above what eviseek writes (a tabletop trajectory is a few KiB, a
long EviSeek episode well under a MiB; question records reference their images by path).
"""

from __future__ import annotations

from pathlib import Path

from eviseek.errors import ConfigError

MiB = 1 << 20
MAX_TRAJECTORY_BYTES = 64 * MiB
"""Largest ``trajectory.json`` read (ours: images live beside it, so this is text alone)."""
MAX_JSONL_BYTES = 512 * MiB
"""Largest JSONL file read: question sets, scripted replies, ESI-Bench records (ours)."""


def check_size(path: str | Path, limit: int, what: str, error: type[ConfigError] = ConfigError) -> None:
    """Raise ``error`` when the file at ``path`` is larger than ``limit`` bytes.

    A path that does not exist passes: the read that follows raises its own error for it.
    """
    try:
        size = Path(path).stat().st_size
    except OSError:
        return
    if size > limit:
        raise error(
            f"{path} is {size / MiB:,.1f} MiB, more than the {limit / MiB:g} MiB {what} may hold; "
            "is it the right file, or damaged?"
        )


def read_text_capped(path: str | Path, limit: int, what: str, error: type[ConfigError] = ConfigError) -> str:
    """The UTF-8 text of ``path``, refused with ``error`` (one line naming the file) when it holds
    more than ``limit`` bytes or is not UTF-8. Reads at most ``limit + 1`` bytes even when the
    file grows after its size was checked."""
    check_size(path, limit, what, error)
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise error(f"{path} grew past the {limit / MiB:g} MiB {what} may hold while being read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"{exc.reason} at byte {exc.start}"
        raise error(f"{path} is not UTF-8 text ({why}); save it as UTF-8") from None
