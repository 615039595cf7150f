"""Gymnasium ids of eviseek's environments, registered when ``eviseek`` is imported.

Gymnasium 1.x's convention: importing the package that provides environments registers their
ids (``import eviseek`` or ``gymnasium.register_envs(eviseek)``, then
``gymnasium.make("eviseek/Tabletop-v0")``). The ids point at entry-point strings, so registering
loads neither PyBullet nor the wrappers; ``gymnasium.make`` imports the wrapper when it builds
one.

``import eviseek`` must stay light, so it does not import Gymnasium (about 0.2 s) itself: if
Gymnasium is already imported the ids are registered at once, otherwise a finder waits for
Gymnasium's own import and registers them right after it. Worker processes of a Gymnasium
vector env import Gymnasium to rebuild the env, and the finder (installed again there by their
``import eviseek``) or the entry-point string does the rest.
"""

from __future__ import annotations

import sys

from eviseek import env_ids

TYPE_CHECKING = False  # typing itself costs ~5 ms: keep it out of `import eviseek`
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any

GYMNASIUM_ENVS: dict[str, str] = {
    env_ids.TABLETOP: "eviseek.envs.tabletop.gymnasium_env:TabletopGymEnv",
    env_ids.IMAGE_ZOOM: "eviseek.envs.image.gymnasium_env:ImageZoomGymEnv",
    env_ids.HOUSE: "eviseek.envs.house.gymnasium_env:HouseGymEnv",
}
"""Gymnasium id -> ``module:class`` of its wrapper."""


def register_gymnasium_envs() -> None:
    """Register every id of :data:`GYMNASIUM_ENVS` with Gymnasium (idempotent)."""
    import gymnasium

    for env_id, entry_point in GYMNASIUM_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


class _RegisterAfterGymnasium:
    """A meta path finder that finds nothing itself; it makes Gymnasium's own loader register
    our ids once it has run. (Duck-typed: subclassing ``importlib.abc.MetaPathFinder`` would
    import ``importlib.resources``, pathlib and re, tripling ``import eviseek``'s time.)"""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != "gymnasium":
            return None
        spec = None
        for finder in sys.meta_path:  # the finders after us, as the import system would ask them
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        loader: Any = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return None
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            register_gymnasium_envs()
            _uninstall()

        loader.exec_module = exec_module
        return spec


_FINDER = _RegisterAfterGymnasium()


def _uninstall() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def register_when_gymnasium_loads() -> None:
    """Register the ids now if Gymnasium is imported, else right after it is."""
    if "gymnasium" in sys.modules:
        register_gymnasium_envs()
    elif _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
