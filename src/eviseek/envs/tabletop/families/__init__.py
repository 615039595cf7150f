"""Task families of the tabletop benchmark, discovered from the modules in this package.

Every module here whose name does not start with ``_`` (and is not ``base``) must define exactly
one concrete :class:`~eviseek.envs.tabletop.families.base.TaskFamily` subclass, named after the
subcategory (``partial_occlusion`` defines ``PartialOcclusionFamily``), whose ``slug`` is the
module name. Abstract bases a module shares with others (``CountingFamily``) do not count. Families
are ordered as ESI-Bench orders them (family, then module name), which fixes the order of splits.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import lru_cache
from types import ModuleType

from eviseek.envs.tabletop.families.base import FAMILY_ORDER, TaskDraft, TaskFamily, World
from eviseek.errors import ConfigError, SettingError

__all__ = ["TaskDraft", "TaskFamily", "World", "all_families", "get_family", "slugs"]


def _family_of(module: ModuleType, slug: str) -> type[TaskFamily]:
    """The one concrete task family ``module`` defines; a clear error when there is not one."""
    defined = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, TaskFamily)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]
    if len(defined) != 1:
        names = ", ".join(cls.__name__ for cls in defined) or "none"
        raise ConfigError(
            f"task family module {module.__name__} must define exactly one concrete TaskFamily "
            f"subclass (found: {names}); shared concrete helpers belong in a module starting with `_`"
        )
    cls = defined[0]
    if cls.slug != slug:
        raise ConfigError(
            f"{module.__name__}: {cls.__name__}.slug is {cls.slug!r}; it must equal the module name"
        )
    return cls


@lru_cache(maxsize=1)
def _discover() -> tuple[type[TaskFamily], ...]:
    found: list[type[TaskFamily]] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append(_family_of(module, info.name))

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
    raise SettingError(f"unknown tabletop subcategory {key!r}; known: {', '.join(slugs())}")
