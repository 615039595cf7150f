"""Load ESI-Bench's own task modules and pipeline from a checkout, for comparison tests.

Their modules import OmniGibson, OpenCV and the model clients at module level; none of those is
needed by the functions compared here (answer reading, scoring, preprocess), so each is replaced
by a stand-in module for the duration of the import. Real modules already imported (torch, numpy)
are left as they are. Nothing from the checkout is copied: it is imported from ``ESI_BENCH_ROOT``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

STUBBED = ("omnigibson", "cv2", "google", "models")


class _Anything:
    """Any attribute, call or item of it is another one; enough for module-level set-up code."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _Anything()

    def __getitem__(self, key: Any) -> Any:
        return _Anything()

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def esibench_root() -> Path:
    """``ESI_BENCH_ROOT`` or skip the calling test (the full-set checks need a checkout)."""
    root = os.environ.get("ESI_BENCH_ROOT")
    if not root:
        pytest.skip("set ESI_BENCH_ROOT to an ESI-Bench checkout to run the full-set checks")
    path = Path(root)
    if not (path / "src" / "active_explore" / "pipeline.py").is_file():
        pytest.fail(f"ESI_BENCH_ROOT={root} is not an ESI-Bench checkout (no src/active_explore/pipeline.py)")
    return path


def load_official(root: Path) -> tuple[Any, dict[str, Any]]:
    """Their ``pipeline`` module and every task module, imported with stand-ins for the simulator."""
    src = str(root / "src" / "active_explore")
    # Names their runner imports by bare name; a stand-in imported earlier must not answer for them.
    clashing = [n for n in sys.modules if n.split(".")[0] in ("pipeline", "tasks", "utils", "models")]
    stashed = {n: sys.modules.pop(n) for n in clashing}
    before = set(sys.modules)
    finder = _StubFinder()
    sys.meta_path.insert(0, finder)
    sys.path.insert(0, src)
    try:
        pipeline = importlib.import_module("pipeline")
        tasks = {
            p.stem: importlib.import_module(f"tasks.{p.stem}")
            for p in sorted(Path(src, "tasks").glob("*.py"))
        }
    finally:
        sys.path.remove(src)
        sys.meta_path.remove(finder)
        for name in set(sys.modules) - before:
            # Drop their modules and the stand-ins (their modules keep their own references), but
            # keep real libraries they imported for the first time (numpy.fft...): deleting those
            # breaks later imports of the same library in this process.
            module = sys.modules[name]
            where = str(getattr(module, "__file__", "") or "")
            if isinstance(module, _StubModule) or where.startswith(src) or not where:
                del sys.modules[name]
        sys.modules.update(stashed)
    return pipeline, tasks
