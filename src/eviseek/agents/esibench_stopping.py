"""ESI-Bench's per-subcategory minimum of exploration steps before a confident answer may stop.

ESI-Bench's pipeline has one ``--min-steps`` (default 3, ``active_explore/pipeline.py``), but each
task module's ``should_stop`` hook decides whether to honour it. Nine modules stop on confidence
only once ``step >= min_steps`` (``action``, ``cognitivemap``, ``counting``, ``deformable``,
``mirror``, ``size``, ``slope``, ``stacking``, ``unobserved_changes``); the other ten stop as soon
as the confidence (sometimes with a ``conclusive`` flag) is high enough, from the first step
(``angle_confusion``, ``distance``, ``line``, ``multiagent``, ``occlusion``, ``pour``,
``storage``, ``touching``, ``transparent``, ``triangle``). Those are facts of ESI-Bench's task
code. Which module serves which subcategory is ours, read from the module names and question
forms (``counting`` for every Enumerative Perception subcategory, ``mirror`` for the three
Specular Reflection ones, ``cognitivemap`` for the four Cognitive Mapping ones).
"""

from __future__ import annotations

ESIBENCH_MIN_STEPS = 3
"""ESI-Bench's default ``--min-steps`` (its pipeline's argument default)."""

HONOURS_MIN_STEPS: frozenset[str] = frozenset(
    {
        "Action Order Inference",  # action
        "Connectivity",  # cognitivemap
        "Traversable Passage",
        "Regional Boundary",
        "Long-Term Navigation",
        "Counting with Occlusion",  # counting
        "Spatial Segmentation",
        "Merged Observation",
        "Category Ambiguity",
        "Structural Enclosure",
        "Illumination Variability",
        "Deformable",  # deformable
        "Reflection Authoring",  # mirror
        "Correspondence",
        "Dimensional Size",  # size
        "Inclined Plane",  # slope
        "Stacking & Stability",  # stacking
        "Unobserved Change",  # unobserved_changes
    }
)
"""Subcategories whose ESI-Bench task module applies the minimum (see the module docstring)."""

HONOURS_IN_FAMILY: dict[str, frozenset[str]] = {"Specular Reflection": frozenset({"Spatial Relations"})}
"""Subcategory names that also name a family elsewhere, honoured only inside this family."""


def esibench_min_steps(subcategory: str, family: str = "", *, default: int = ESIBENCH_MIN_STEPS) -> int:
    """The steps a Single-model episode of ``subcategory`` must take before a confident stop."""
    if subcategory in HONOURS_MIN_STEPS or subcategory in HONOURS_IN_FAMILY.get(family, frozenset()):
        return default
    return 0
