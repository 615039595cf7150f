"""Fixtures: one synthetic run (EviSeek, Single-model, Passive on one question), built once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.viewer.synthetic import write_synthetic_run


@pytest.fixture(scope="session")
def pristine_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved run directory; never written to by tests (copy it with ``run_copy``)."""
    run = tmp_path_factory.mktemp("pristine") / "run"
    write_synthetic_run(run)
    return run


@pytest.fixture
def run_copy(pristine_run: Path, tmp_path: Path) -> Path:
    """A private copy of the synthetic run that a test may change."""
    dest = tmp_path / "run"
    shutil.copytree(pristine_run, dest)
    return dest


def episode(run: Path, agent: str) -> Path:
    """The episode folder of ``agent`` in a synthetic run."""
    return run / "episodes" / agent / "align-007"
