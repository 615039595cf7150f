"""ESI-Bench's per-subcategory minimum of exploration steps before a confident answer may stop.

ESI-Bench's pipeline has one ``--min-steps`` (default 3, ``active_explore/pipeline.py``), but each
task module's ``should_stop`` hook decides whether to honour it. Which modules do, and which
module serves which subcategory, is one column of the taxonomy table
(:mod:`eviseek.types.taxonomy`); this module only names the rule for the agents.
"""

from __future__ import annotations

from eviseek.types.taxonomy import ESIBENCH_MIN_STEPS
from eviseek.types.taxonomy import min_steps as _min_steps

__all__ = ["ESIBENCH_MIN_STEPS", "esibench_min_steps"]


def esibench_min_steps(subcategory: str, family: str = "", *, default: int = ESIBENCH_MIN_STEPS) -> int:
    """The steps a Single-model episode of ``subcategory`` must take before a confident stop.

    Accepts ESI-Bench's spelling (``Counting w Occlusion``) and the tabletop's (``Counting with
    Occlusion``); unknown subcategories get 0.
    """
    return _min_steps(subcategory, family, default=default)
