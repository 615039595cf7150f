"""Load ESI-Bench's own task modules and pipeline from a checkout, for comparison tests.

The library's offline loader (:mod:`eviseek.envs.esibench.offline`) does it: OmniGibson, OpenCV
and the model clients are replaced by inert stand-ins while the modules are imported (none of the
compared functions uses them). Nothing from the checkout is copied: it is imported from
``ESI_BENCH_ROOT``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from eviseek.envs.esibench.offline import load_offline


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
    return load_offline(root)
