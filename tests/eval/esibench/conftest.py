"""The ESI-Bench-format fixture tree (records written for eviseek's tests; see its README)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "esibench"


@pytest.fixture
def esi_tree(tmp_path: Path) -> Path:
    """A writable copy of the fixture checkout (``dataset/json_clean/...``)."""
    dest = tmp_path / "esibench"
    shutil.copytree(FIXTURES / "dataset", dest / "dataset")
    return dest
