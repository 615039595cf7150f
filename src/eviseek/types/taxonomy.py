"""ESI-Bench's taxonomy, in one table: every family and subcategory eviseek knows of.

Each row of :data:`SUBCATEGORIES` is one of the paper's 29 subcategories, in the order of its
Table 5 (families in that order, subcategories in the order listed under each), with:

* ``family`` and ``name``: as ESI-Bench's records (``big_task``, ``small_task``) and the paper's
  Table 5 write them, e.g. ``Enumerative Perception`` / ``Counting w Occlusion``;
* ``slug`` and ``display``: the tabletop (and house) benchmark's identifier and the name its
  questions carry (``counting_with_occlusion`` / ``Counting with Occlusion``);
* ``paper_questions``: the paper's #Q (Table 5), 3,436 in all;
* ``task``: ESI-Bench's task module that serves it (``runner_task`` in the records,
  ``src/active_explore/tasks/<task>.py`` in ESI-Bench's repository);
* ``honours_min_steps``: whether that task module's ``should_stop`` hook applies the pipeline's
  ``--min-steps`` (default 3) before a confident stop. Nine modules do (``action``,
  ``cognitivemap``, ``counting``, ``deformable``, ``mirror``, ``size``, ``slope``, ``stacking``,
  ``unobserved_changes``); the other ten stop on confidence from the first step. These are facts
  of ESI-Bench's task code (commit 9f35528); the rule is per module, so every row of a module
  shares it;
* ``where``: which of eviseek's own benchmarks has the subcategory (``tabletop`` or ``house``).

Every consumer reads this table: the ESI-Bench loader and ``eviseek esibench stats`` (the paper's
counts), Single-model's stopping rule (the minimum steps), the tabletop ``paper`` split (its
weights) and family order, and the report's family order. Subcategory names are matched with the
family, because ``Spatial Relations`` is both a family and a Specular Reflection subcategory.
"""

from __future__ import annotations

from dataclasses import dataclass

ESIBENCH_MIN_STEPS = 3
"""ESI-Bench's default ``--min-steps`` (its pipeline's argument default)."""

PAPER_TOTAL = 3436
"""Questions in the paper's ESI-Bench evaluation (Table 5, Overall #Q)."""


@dataclass(frozen=True)
class Subcategory:
    """One row of the taxonomy (see the module docstring for each field)."""

    family: str
    name: str
    slug: str
    display: str
    paper_questions: int
    task: str
    honours_min_steps: bool
    where: str = "tabletop"

    @property
    def key(self) -> str:
        """``Family/Subcategory`` as ESI-Bench writes them."""
        return f"{self.family}/{self.name}"

    def min_steps(self, default: int = ESIBENCH_MIN_STEPS) -> int:
        """Steps a Single-model episode must take before a confident stop (0: none)."""
        return default if self.honours_min_steps else 0


# Which task modules apply --min-steps in should_stop (ESI-Bench commit 9f35528).
_HONOURS = frozenset(
    {
        "action",
        "cognitivemap",
        "counting",
        "deformable",
        "mirror",
        "size",
        "slope",
        "stacking",
        "unobserved_changes",
    }
)


def _row(family: str, name: str, slug: str, q: int, task: str, *, display: str = "", where: str = "tabletop"):
    return Subcategory(family, name, slug, display or name, q, task, task in _HONOURS, where)


SUBCATEGORIES: tuple[Subcategory, ...] = (
    _row("Perceptual Grounding", "View Hallucination", "view_hallucination", 437, "angle_confusion"),
    _row("Perceptual Grounding", "Partial Occlusion", "partial_occlusion", 95, "occlusion"),
    _row("Perceptual Grounding", "Material Transparency", "material_transparency", 218, "transparent"),
    _row("Physical Structure", "Rigid Containment", "rigid_containment", 20, "storage"),
    _row("Physical Structure", "Liquid Volume", "liquid_volume", 136, "pour"),
    _row("Physical Structure", "Deformable", "deformable", 98, "deformable"),
    _row("Physical Dynamics", "Inclined Plane", "inclined_plane", 61, "slope"),
    _row("Physical Dynamics", "Stacking & Stability", "stacking_and_stability", 89, "stacking"),
    _row("Specular Reflection", "Reflection Authoring", "reflection_authoring", 99, "mirror"),
    _row("Specular Reflection", "Spatial Relations", "mirror_spatial_relations", 113, "mirror"),
    _row("Specular Reflection", "Correspondence", "correspondence", 88, "mirror"),
    _row("Spatial Relations", "Linear Alignment", "linear_alignment", 94, "line"),
    _row("Spatial Relations", "Geometric Configuration", "geometric_configuration", 568, "triangle"),
    _row("Spatial Relations", "Physical Contact", "physical_contact", 119, "touching"),
    _row("Metric Comparison", "Dimensional Size", "dimensional_size", 167, "size"),
    _row("Metric Comparison", "Spatial Distance", "spatial_distance", 152, "distance"),
    _row("Cognitive Mapping", "Connectivity", "connectivity", 60, "cognitivemap"),
    _row(
        "Cognitive Mapping", "Traversable Passage", "traversable_passage", 60, "cognitivemap", where="house"
    ),
    _row("Cognitive Mapping", "Regional Boundary", "regional_boundary", 80, "cognitivemap", where="house"),
    _row(
        "Cognitive Mapping", "Long-Term Navigation", "long_term_navigation", 60, "cognitivemap", where="house"
    ),
    _row(
        "Enumerative Perception",
        "Counting w Occlusion",
        "counting_with_occlusion",
        30,
        "counting",
        display="Counting with Occlusion",
    ),
    _row("Enumerative Perception", "Spatial Segmentation", "spatial_segmentation", 30, "counting"),
    _row("Enumerative Perception", "Merged Observation", "merged_observation", 60, "counting"),
    _row("Enumerative Perception", "Category Ambiguity", "category_ambiguity", 60, "counting"),
    _row("Enumerative Perception", "Structural Enclosure", "structural_enclosure", 40, "counting"),
    _row("Enumerative Perception", "Illumination Variability", "illumination_variability", 50, "counting"),
    _row("Temporal Understanding", "Unobserved Change", "unobserved_change", 142, "unobserved_changes"),
    _row("Temporal Understanding", "Agent Observation", "agent_observation", 133, "multiagent"),
    _row("Action Sequencing", "Action Order Inference", "action_order_inference", 77, "action"),
)
"""The paper's 29 subcategories, in Table 5's order."""

FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(s.family for s in SUBCATEGORIES))
"""The ten families in Table 5's order (reports and splits list families in this order)."""

TASK_MODULES: tuple[str, ...] = tuple(sorted({s.task for s in SUBCATEGORIES}))
"""ESI-Bench's 19 task modules."""


def _norm(text: str) -> str:
    return " ".join(text.strip().lower().replace("&", "and").replace("_", " ").replace("-", " ").split())


def find(subcategory: str, family: str = "") -> Subcategory | None:
    """The row for ``subcategory`` (ESI-Bench's name, the display name or the slug) in ``family``.

    Without ``family`` a name that two families use (``Spatial Relations``) is not resolved.
    """
    want = _norm(subcategory)
    if not family and want in {_norm(f) for f in FAMILIES}:
        return None
    hits = [
        s
        for s in SUBCATEGORIES
        if want in (_norm(s.name), _norm(s.display), _norm(s.slug))
        and (not family or _norm(family) == _norm(s.family))
    ]
    return hits[0] if len(hits) == 1 else None


def by_slug(slug: str) -> Subcategory | None:
    """The row whose tabletop/house slug is ``slug``."""
    return next((s for s in SUBCATEGORIES if s.slug == slug), None)


def family_rank(family: str) -> int:
    """Position of ``family`` in :data:`FAMILIES` (unknown families after all known ones)."""
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


def subcategory_rank(family: str, subcategory: str) -> tuple[int, int]:
    """Sort key: family in Table 5's order, then subcategory in Table 5's order (unknown last)."""
    row = find(subcategory, family)
    return family_rank(family), SUBCATEGORIES.index(row) if row else len(SUBCATEGORIES)


@dataclass(frozen=True)
class Table5Order:
    """The report order of the paper's Table 5 (:func:`subcategory_rank`), as the taxonomy that
    the tabletop, house and ESI-Bench benchmarks register (``eval.benchmark.Taxonomy``)."""

    def rank(self, family: str, subcategory: str) -> tuple[int, int]:
        """Family in Table 5's order, then subcategory in Table 5's order (unknown last)."""
        return subcategory_rank(family, subcategory)


ESI_TAXONOMY = Table5Order()
"""ESI-Bench's taxonomy in report order."""


def min_steps(subcategory: str, family: str = "", *, default: int = ESIBENCH_MIN_STEPS) -> int:
    """Steps Single-model must take before a confident stop on this subcategory (ESI-Bench's rule).

    Unknown subcategories get 0 (no minimum), as ESI-Bench's modules that do not apply it.
    """
    row = find(subcategory, family)
    return row.min_steps(default) if row else 0
