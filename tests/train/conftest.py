"""Collection rules for the training tests.

``verl_env/`` holds tests that import the real verl classes; they run inside ``.venv-verl``
(driven by ``test_verl_autotool.py``), so the main environment does not collect them.
"""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("verl") else ["verl_env"]
