"""Import optional dependencies on first use, with an error that names the extra to install."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from types import ModuleType

from eviseek.errors import MissingExtraError


def require(module: str, extra: str, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised by tests that hide modules
        top = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # a broken install of something else: do not disguise it
        raise MissingExtraError(top, extra, purpose) from exc


def require_pybullet(purpose: str = "") -> ModuleType:
    """``pybullet``, imported without its ``pybullet build time: ...`` banner.

    PyBullet's C code prints that line when the module loads (on standard error with the wheel
    installed here; older builds used standard output), so every simulator process (the main
    one and each env worker) added one to a command's output. Both file descriptors point at
    ``/dev/null`` during the import, and C's buffers are flushed before they are restored so the
    banner cannot come out later either. Python-level errors are exceptions, not output, so
    nothing a user needs is hidden.

    The descriptor swap is process-wide, so first imports from several threads (an evaluation's
    episodes start their simulators side by side) take one lock: without it, a second thread
    could save the descriptor while it points at ``/dev/null`` and restore *that* last, leaving
    the command's standard output silently discarded for the rest of the run.
    """
    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    with _QUIET_IMPORT_LOCK:
        if "pybullet" in sys.modules:  # another thread finished the import while we waited
            return sys.modules["pybullet"]
        return _import_pybullet_quietly(purpose)


_QUIET_IMPORT_LOCK = threading.Lock()


def _import_pybullet_quietly(purpose: str) -> ModuleType:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    try:
        saved = [(fd, os.dup(fd)) for fd in (1, 2)]
    except OSError:  # a process without standard streams: nothing to keep clean
        return require("pybullet", "sim", purpose)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd, _ in saved:
            os.dup2(devnull, fd)
        return require("pybullet", "sim", purpose)
    finally:
        _flush_c_stdio()
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


def _flush_c_stdio() -> None:
    import ctypes

    # No C library to reach (not Linux/macOS) means nothing of ours is buffered there.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).fflush(None)
