"""Tests of experiment code under ``scripts/``.

The scripts import their helper packages (``scripts/autotool_learning/``) the way Python finds
them when a script runs: from the script's own folder. The tests put that folder on the path
the same way, so both import the same module names.
"""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPTS = str(Path(__file__).resolve().parents[2] / "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)
