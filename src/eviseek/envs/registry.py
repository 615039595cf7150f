"""Registered, versioned environment ids (``eviseek/Tabletop-v0``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from eviseek.envs.base import Env
from eviseek.errors import ConfigError

_ENVS: dict[str, tuple[str | Callable[..., Env], dict[str, Any]]] = {}


def register(env_id: str, entry_point: str | Callable[..., Env], **defaults: Any) -> None:
    """Register ``env_id``; ``entry_point`` is ``"module:Class"`` (imported lazily) or a callable."""
    _ENVS[env_id] = (entry_point, defaults)


def registered() -> list[str]:
    """All registered ids."""
    return sorted(_ENVS)


def make(env_id: str, **kwargs: Any) -> Env:
    """Build a registered environment; keyword arguments override the registered defaults."""
    if env_id not in _ENVS:
        raise ConfigError(f"unknown environment {env_id!r}; registered: {', '.join(registered())}")
    entry, defaults = _ENVS[env_id]
    if isinstance(entry, str):
        module_name, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), attr)
    assert callable(entry)
    return entry(**{**defaults, **kwargs})
