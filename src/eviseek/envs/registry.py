"""Registered, versioned environment ids (``eviseek/Tabletop-v0``), and what one instance needs.

A registration may declare the compute one instance of the environment needs (``resources``:
``{"CPU": 1, "GPU": 1}``, or a custom resource that only some cluster nodes advertise). The Ray
backend places its episode actors by these declarations (see :mod:`eviseek.eval.ray_backend`);
they are read from the registration alone, so asking never imports a simulator.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eviseek._registration import Origin, Origins, caller_origin
from eviseek.envs.base import Env
from eviseek.errors import ConfigError, SettingError

DEFAULT_RESOURCES: dict[str, float] = {"CPU": 1.0}
"""What an environment that declares nothing needs: one CPU."""


@dataclass(frozen=True)
class Registration:
    """One registered id: how to build it and what one instance needs."""

    entry_point: str | Callable[..., Env]
    defaults: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RESOURCES))


_ENVS: dict[str, Registration] = {}
_ORIGINS = Origins("environment")


def _checked_resources(env_id: str, resources: Mapping[str, float] | None) -> dict[str, float]:
    declared = dict(DEFAULT_RESOURCES)
    for name, amount in (resources or {}).items():
        ok_amount = isinstance(amount, (int, float)) and not isinstance(amount, bool)
        if not isinstance(name, str) or not name or not ok_amount or not math.isfinite(amount) or amount < 0:
            raise ConfigError(
                f"environment {env_id!r} declares resource {name!r}={amount!r}; give each resource a "
                'name and a finite amount of at least 0, e.g. resources={"GPU": 1}'
            )
        declared[name] = float(amount)
    return declared


def register(
    env_id: str,
    entry_point: str | Callable[..., Env],
    *,
    resources: Mapping[str, float] | None = None,
    replace: bool = False,
    **defaults: Any,
) -> None:
    """Register ``env_id``; ``entry_point`` is ``"module:Class"`` (imported lazily) or a callable.

    ``resources`` is what one instance needs, as Ray resource amounts (``{"GPU": 1}``); ``CPU``
    is 1 unless given. Other keyword arguments are defaults passed to the entry point.

    Registering an id again from another module raises :class:`ConfigError` unless
    ``replace=True`` (then the run records the replacement; see :mod:`eviseek._registration`).
    """
    checked = _checked_resources(env_id, resources)
    _ORIGINS.claim(env_id, caller_origin(), replace=replace, exists=env_id in _ENVS)
    _ENVS[env_id] = Registration(entry_point, defaults, checked)


def env_origin(env_id: str) -> Origin | None:
    """The module that registered ``env_id`` (``None`` when it is not registered)."""
    return _ORIGINS.of(env_id)


def registered() -> list[str]:
    """All registered ids."""
    return sorted(_ENVS)


def _registration(env_id: str) -> Registration:
    if env_id not in _ENVS:
        raise SettingError(f"unknown environment {env_id!r}; registered: {', '.join(registered())}")
    return _ENVS[env_id]


def env_resources(env_id: str) -> dict[str, float]:
    """The resources one instance of ``env_id`` declared (``CPU`` is 1 unless it declared another)."""
    return dict(_registration(env_id).resources)


def resizable(env_id: str) -> bool:
    """Whether environment ``env_id`` can render at another size: its constructor takes
    ``width`` and ``height`` (the tabletop, the house, EXPRESS-Bench's Habitat bridge)."""
    import inspect

    entry = _registration(env_id).entry_point
    if isinstance(entry, str):
        module_name, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), attr)
    try:
        params = inspect.signature(entry).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return "width" in params and "height" in params


def make(env_id: str, **kwargs: Any) -> Env:
    """Build a registered environment; keyword arguments override the registered defaults."""
    reg = _registration(env_id)
    entry = reg.entry_point
    if isinstance(entry, str):
        module_name, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), attr)
    assert callable(entry)
    return entry(**{**reg.defaults, **kwargs})
