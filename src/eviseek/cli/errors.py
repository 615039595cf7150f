"""One-line errors for the commands: what went wrong and how to fix it, never a traceback."""

from __future__ import annotations

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
