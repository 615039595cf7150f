"""One-line errors for the commands: what went wrong and how to fix it, never a traceback."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import typer


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def require_folder(path: Path | None, flag: str = "--out") -> None:
    """Refuse a folder option that names an existing file (exit code 2, like other bad flags)."""
    if path is not None and path.exists() and not path.is_dir():
        fail(f"{flag} {path} is a file; give a folder (a new one is created)", 2)


def os_error(exc: OSError, doing: str) -> str:
    """``exc`` as one line saying what could not be done and why (a read-only disk, say)."""
    where = f" ({exc.filename})" if exc.filename else ""
    why = exc.strerror or str(exc)
    hint = ""
    if isinstance(exc, PermissionError) or "read-only" in why.lower():
        hint = "; the storage is not writable: use a writable folder"
    return f"cannot {doing}: {why}{where}{hint}"


def number(
    *, above: float | None = None, at_least: float | None = None, below: float | None = None
) -> Callable[[float | None], float | None]:
    """A Typer callback that refuses a numeric flag that is not finite or out of range.

    Click reads ``nan``, ``inf`` and ``1e400`` as floats and its own ranges let ``nan`` through
    (every comparison with it is false), so each number is checked here, at the command line's
    edge: a bad one is a usage error (one line, exit code 2), never a traceback later on.
    """

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        wanted = []
        if above is not None:
            wanted.append(f"above {above:g}")
        if at_least is not None:
            wanted.append(f"at least {at_least:g}")
        if below is not None:
            wanted.append(f"below {below:g}")
        ok = (
            math.isfinite(value)
            and (above is None or value > above)
            and (at_least is None or value >= at_least)
            and (below is None or value < below)
        )
        if not ok:
            need = " and ".join(wanted)
            raise typer.BadParameter(f"must be a finite number{' ' + need if need else ''}, got {value:g}")
        return value

    return check


POSITIVE = number(above=0)
"""A finite number above 0 (timeouts, sizes)."""


def resource_amounts(pairs: dict[str, object], flag: str) -> dict[str, float]:
    """``KEY=AMOUNT`` resources as finite, non-negative numbers (``GPU=-1``, ``nan`` refused)."""
    out: dict[str, float] = {}
    for key, value in pairs.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise typer.BadParameter(f"{flag} {key}= needs a finite number, got {value!r}")
        if value < 0:
            raise typer.BadParameter(f"{flag} {key}= cannot be negative, got {value:g}")
        out[key] = float(value)
    return out
