"""The one atomic writer: a reader sees the old file or the whole new one, never half; and its
folder form, for sets of files published together (a generated split, a run's prompt copies)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_file", "atomic_folder", "write_atomic"]


@contextmanager
def atomic_file(path: str | Path, *, binary: bool = False, newline: str | None = None) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that readers see the old file or the whole new one, never half.

    The content goes to a temporary file beside ``path`` (named for this process and thread, so
    concurrent writers of the same file do not share one), is flushed and fsynced, and is renamed
    over ``path`` when the block ends without an exception; on an exception the temporary file
    is removed and ``path`` is left as it was. Missing parent folders are created.
    """
    path = path if isinstance(path, Path) else Path(path)  # a Path is parsed again when wrapped
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        fh = _open_new(tmp, binary, newline)
    except (FileNotFoundError, NotADirectoryError):
        # The folder is missing (or is not one): create it, or fail as ``mkdir`` does. Trying
        # the file first saves the ``mkdir`` and ``stat`` calls of the usual case, where the
        # folder exists (a saved episode writes five files into two folders).
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = _open_new(tmp, binary, newline)
    try:
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _open_new(path: Path, binary: bool, newline: str | None) -> IO[Any]:
    return open(path, "wb") if binary else open(path, "w", encoding="utf-8", newline=newline)


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically; see :func:`atomic_file`."""
    target = path if isinstance(path, Path) else Path(path)
    with atomic_file(target, binary=isinstance(data, bytes)) as fh:
        fh.write(data)
    return target


@contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """A new, empty folder beside ``path`` to fill; renamed to ``path`` when the block ends, so a
    reader sees no folder or the whole one, never part of it.

    The temporary folder is named for this process and thread, like :func:`atomic_file`'s. When
    ``path`` already exists as a folder at the end (another process published it first), that
    one is kept and this one dropped. On an exception nothing is published. Missing parent
    folders are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)  # left by a crashed process that had this pid
    tmp.mkdir()
    try:
        yield tmp
        try:
            tmp.rename(path)
        except OSError:
            if not path.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
