"""Task families of the tabletop benchmark, discovered from the modules in this package.

Every module here whose name does not start with ``_`` (and is not ``base``) must define
``Family``, a :class:`~eviseek.envs.tabletop.families.base.TaskFamily` subclass. Families are
ordered as ESI-Bench orders them (family, then module name), which fixes the order of splits.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from eviseek.envs.tabletop.families.base import FAMILY_ORDER, TaskDraft, TaskFamily, World
from eviseek.errors import ConfigError

__all__ = ["TaskDraft", "TaskFamily", "World", "all_families", "get_family", "slugs"]


@lru_cache(maxsize=1)
def _discover() -> tuple[type[TaskFamily], ...]:
    found: list[type[TaskFamily]] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        cls = getattr(module, "Family", None)
        if not (isinstance(cls, type) and issubclass(cls, TaskFamily)):
            raise ConfigError(
                f"task family module {module.__name__} must define `Family`, a TaskFamily subclass"
            )
        if cls.slug != info.name:
            raise ConfigError(
                f"{module.__name__}: Family.slug is {cls.slug!r}; it must equal the module name"
            )
        found.append(cls)

    def order(cls: type[TaskFamily]) -> tuple[int, str]:
        rank = FAMILY_ORDER.index(cls.family) if cls.family in FAMILY_ORDER else len(FAMILY_ORDER)
        return rank, cls.slug

    return tuple(sorted(found, key=order))


def all_families() -> list[TaskFamily]:
    """One instance of every family, in benchmark order."""
    return [cls() for cls in _discover()]


def slugs() -> list[str]:
    """Slugs of every family, in benchmark order."""
    return [cls.slug for cls in _discover()]


def get_family(key: str) -> TaskFamily:
    """A family by slug (``linear_alignment``) or subcategory name (``Linear Alignment``)."""
    norm = key.strip().lower().replace(" ", "_").replace("-", "_").replace("&", "and")
    for cls in _discover():
        names = {cls.slug, cls.subcategory.lower().replace(" ", "_").replace("&", "and")}
        if norm in names:
            return cls()
    raise ConfigError(f"unknown tabletop subcategory {key!r}; known: {', '.join(slugs())}")
