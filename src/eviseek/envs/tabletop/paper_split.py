"""The ``paper`` split: subcategories drawn in the proportions of ESI-Bench's question counts.

ESI-Bench's overall accuracy is question-weighted (the paper's Tables 5 and 6: "Overall is
question-weighted"), so a subcategory with 568 questions (Geometric Configuration) counts 19
times as much as one with 30 (Counting w Occlusion). The ``dev`` and ``test`` splits hold
the same number of questions per subcategory, which weights every subcategory equally. The
``paper`` split holds, per subcategory, a tenth of the paper's #Q (largest remainders, at least
one), so its plain overall accuracy is weighted like the paper's.

The three Cognitive Mapping subcategories that need a house (Traversable Passage, Regional
Boundary, Long-Term Navigation; 200 of the paper's 3,436 questions) have no tabletop family:
they are left out, and the split's weights are the paper's renormalised over the other 3,236
questions. They live in the house splits (``house:dev`` / ``house:test``).
"""

from __future__ import annotations

import math

from eviseek.types.taxonomy import SUBCATEGORIES

PAPER_QUESTIONS: dict[str, int] = {s.slug: s.paper_questions for s in SUBCATEGORIES if s.where == "tabletop"}
"""ESI-Bench's questions per subcategory (the paper's Table 5, #Q column), by tabletop slug."""

HOUSE_ONLY: dict[str, int] = {s.name: s.paper_questions for s in SUBCATEGORIES if s.where == "house"}
"""The paper's subcategories with no tabletop family (#Q from the same table)."""

PAPER_SCALE = 0.1
"""The split holds this fraction of the paper's questions (ours: 324 questions, a size a CPU
run finishes; every subcategory keeps at least one)."""


def paper_counts(scale: float = PAPER_SCALE, slugs: list[str] | None = None) -> dict[str, int]:
    """Questions per subcategory slug: ``scale`` times the paper's #Q, rounded by largest
    remainders so the total is ``round(scale * sum)``, and at least one each.

    ``slugs`` restricts the split to the families that exist (others are dropped before the
    rounding, so their share goes to the rest).
    """
    table = {s: n for s, n in PAPER_QUESTIONS.items() if slugs is None or s in slugs}
    if not table:
        return {}
    exact = {s: scale * n for s, n in table.items()}
    counts = {s: max(1, math.floor(x)) for s, x in exact.items()}
    left = round(sum(exact.values())) - sum(counts.values())
    for s in sorted(exact, key=lambda s: (-(exact[s] - math.floor(exact[s])), s))[: max(0, left)]:
        counts[s] += 1
    return counts
