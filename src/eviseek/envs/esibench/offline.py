"""ESI-Bench's pipeline and task modules imported from a checkout without its simulator.

The task modules' prompt hooks (``build_system_prompt``, ``build_force_choice_prompt``,
``preprocess``, ``initial_camera``, ``object_display_names``...) read only the question record.
But the modules import OmniGibson, OpenCV and the model clients at module level, which exist only
inside ESI-Bench's own environment. To call those hooks anywhere (at load time, for ``eviseek
esibench prompts``), each of those imports is answered by an inert stand-in module for the
duration of the import; real libraries (numpy, torch) are used as they are. Nothing from the
checkout is copied: it is imported from the user's checkout, and its modules are removed from
``sys.modules`` afterwards so they never shadow anything of the caller.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

from eviseek.errors import ConfigError

STUBBED = ("omnigibson", "cv2", "google", "models")
"""Top-level modules answered by stand-ins (the simulator, OpenCV, the model clients)."""

_LOCK = threading.Lock()


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


class StubModule(types.ModuleType):
    """A module whose every attribute is an inert stand-in."""

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
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def runner_dir(root: str | Path) -> Path:
    """``src/active_explore`` of an ESI-Bench checkout (a clear error when it is not one)."""
    path = Path(root).expanduser().resolve()
    src = path / "src" / "active_explore"
    if not (src / "pipeline.py").is_file() or not (src / "tasks").is_dir():
        raise ConfigError(
            f"{path} is not an ESI-Bench checkout (no src/active_explore/pipeline.py and tasks/); "
            "point at a checkout of github.com/ESI-Bench/ESI-Bench (or set ESI_BENCH_ROOT)"
        )
    return src


def load_offline(root: str | Path) -> tuple[Any, dict[str, Any]]:
    """Their ``pipeline`` module and every task module (by name), imported without a simulator."""
    src = str(runner_dir(root))
    return _load(src)


@lru_cache(maxsize=4)
def _load(src: str) -> tuple[Any, dict[str, Any]]:
    with _LOCK:
        # Names their runner imports by bare name; a module imported earlier must not answer for them.
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
                if not p.stem.startswith("_")
            }
        except Exception as exc:
            raise ConfigError(f"cannot import ESI-Bench's task modules from {src}: {exc}") from exc
        finally:
            sys.path.remove(src)
            sys.meta_path.remove(finder)
            for name in set(sys.modules) - before:
                # Drop their modules and the stand-ins (their modules keep their own references);
                # keep real libraries imported here for the first time (numpy.fft...), which later
                # imports of the same library need.
                module = sys.modules[name]
                where = str(getattr(module, "__file__", "") or "")
                if isinstance(module, StubModule) or where.startswith(src) or not where:
                    del sys.modules[name]
            sys.modules.update(stashed)
    return pipeline, tasks
