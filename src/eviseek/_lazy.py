"""Import optional dependencies on first use, with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from eviseek.errors import MissingExtraError


def require(module: str, extra: str, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install eviseek[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised by tests that hide modules
        top = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # a broken install of something else: do not disguise it
        raise MissingExtraError(top, extra, purpose) from exc
