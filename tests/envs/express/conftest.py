"""The habitat-sim stand-in on ``sys.path`` and a scene folder shaped like EXPRESS-Bench's data/."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

STANDIN = Path(__file__).parent / "standin"
FIXTURE = Path(__file__).parents[2] / "fixtures" / "express" / "express-bench-sample.json"


def forget_standin() -> None:
    """Drop the stand-in's modules so the next import sees fresh ``CALLS``."""
    for name in [n for n in sys.modules if n == "habitat_sim" or n.startswith("habitat_sim.")]:
        del sys.modules[name]


def scene_root(tmp: Path) -> Path:
    """EXPRESS-Bench's layout: <root>/<scene_id>/<name>.basis.glb and .basis.navmesh."""
    root = tmp / "express-data"
    for scene in ("00000-StandinA", "00001-StandinB"):
        folder = root / scene
        folder.mkdir(parents=True, exist_ok=True)
        name = scene.split("-", 1)[1]
        (folder / f"{name}.basis.glb").write_bytes(b"glb")
        (folder / f"{name}.basis.navmesh").write_bytes(b"navmesh")
    return root


@pytest.fixture
def habitat(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The stand-in ``habitat_sim`` module, importable by name."""
    forget_standin()
    monkeypatch.syspath_prepend(str(STANDIN))
    import habitat_sim

    yield habitat_sim
    forget_standin()
