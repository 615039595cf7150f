"""Who registered a name, and refusing silent replacement (envs, providers, agents, benchmarks).

Each registry keeps one :class:`Origins` table: the module that registered each name. Registering
a name again from the *same* source file is allowed (a plugin may be imported twice, once by
module name and once as a ``--plugin`` file, which gives it two module names but one file);
from another module it raises :class:`~eviseek.errors.ConfigError`, unless the caller passes
``replace=True``. Every replacement made that way is kept in :func:`replacements`, which a run
saves in its ``run.json`` (``replaced``), so a result produced by a replaced benchmark, env,
provider or agent says so.

This module imports nothing of eviseek's but :mod:`eviseek.errors`, so every layer may use it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from eviseek.errors import ConfigError

__all__ = ["Origin", "Origins", "caller_origin", "replacements"]

_PASS_THROUGH = frozenset(
    {
        __name__,
        "eviseek.envs.registry",
        "eviseek.models.registry",
        "eviseek.agents.registry",
        "eviseek.eval.benchmark",
        "eviseek.eval.datasets",  # register_dataset forwards to register_benchmark
    }
)
"""Modules whose functions are the registries' own: the origin is the first frame outside them."""


@dataclass(frozen=True)
class Origin:
    """Where a registration came from: the module's name and its source file (when it has one)."""

    module: str
    file: str | None = None

    def same_source(self, other: Origin) -> bool:
        """True when both come from one source file (or, without files, one module name)."""
        if self.file is not None and other.file is not None:
            return self.file == other.file
        return self.module == other.module

    def describe(self) -> str:
        """``module`` plus its file when the module name does not tell where it is."""
        if self.file is not None and not self.module.startswith("eviseek."):
            return f"{self.module} ({self.file})"
        return self.module


def caller_origin() -> Origin:
    """The origin of the registration being made: the first calling frame outside the registries."""
    frame = sys._getframe(1)
    # A registry's own functions pass the call through; its module body (the built-in
    # providers registered where the registry is defined) is an origin like any other.
    while (
        frame is not None
        and frame.f_globals.get("__name__") in _PASS_THROUGH
        and frame.f_code.co_name != "<module>"
    ):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return Origin("unknown")
    module = str(frame.f_globals.get("__name__", "unknown"))
    file = frame.f_globals.get("__file__")
    return Origin(module, os.path.realpath(file) if isinstance(file, str) else None)


_REPLACED: list[str] = []


def replacements() -> list[str]:
    """Every replacement made with ``replace=True`` in this process, one line each, in order."""
    return list(_REPLACED)


class Origins:
    """The origins of one registry's names (``kind`` names the registry in messages)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._origins: dict[str, Origin] = {}

    def of(self, name: str) -> Origin | None:
        """Who registered ``name`` (``None``: nobody, or a built-in the registry lists itself)."""
        return self._origins.get(name)

    def claim(self, name: str, origin: Origin, *, replace: bool, exists: bool) -> None:
        """Record ``origin`` as the registrant of ``name``; refuse a replacement from another
        module unless ``replace`` (``exists``: the registry already holds ``name``)."""
        before = self._origins.get(name)
        if exists and before is not None and not before.same_source(origin):
            if not replace:
                raise ConfigError(
                    f"{self.kind} {name!r} is already registered by {before.describe()}; "
                    f"{origin.describe()} cannot register it again: pick another name, or pass "
                    "replace=True to replace it (the run then records the replacement)"
                )
            _REPLACED.append(f"{self.kind} {name}: {before.describe()} replaced by {origin.describe()}")
        self._origins[name] = origin
