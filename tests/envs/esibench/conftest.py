"""A stand-in ESI-Bench checkout (same function names and signatures, records the calls)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

STANDIN = Path(__file__).parent / "standin"


def standin_checkout(tmp: Path) -> Path:
    """A folder shaped like an ESI-Bench checkout whose runner is the stand-in."""
    root = tmp / "esibench-standin"
    shutil.copytree(STANDIN, root / "src" / "active_explore", dirs_exist_ok=True)
    return root


def forget_standin() -> None:
    """Drop the stand-in's modules so the next import sees a fresh ``CALLS``."""
    for name in [n for n in sys.modules if n in ("pipeline", "tasks") or n.startswith("tasks.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if "esibench-standin" not in p]


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """ESI_BENCH_ROOT pointing at a fresh stand-in checkout; yields the imported pipeline module."""
    forget_standin()
    root = standin_checkout(tmp_path)
    monkeypatch.setenv("ESI_BENCH_ROOT", str(root))
    from eviseek.envs.esibench.checkout import import_pipeline

    yield import_pipeline()
    forget_standin()
