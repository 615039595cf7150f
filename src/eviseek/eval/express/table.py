"""EXPRESS-Bench's results table in the paper's shape: methods as rows; C, C*, E_path, d_T."""

from __future__ import annotations

from collections.abc import Sequence

from eviseek.eval.express.metrics import ExpressRow
from eviseek.eval.tables import Cell, Table, fmt

DASH = "—"


def ended_text(ended: dict[str, int]) -> str:
    """``demands covered 12, budget spent 3``: how an agent's episodes ended."""
    return ", ".join(f"{k} {n}" for k, n in ended.items())


def express_table(rows: Sequence[ExpressRow]) -> Table:
    """C, C* and E_path on a 0-100 scale and d_T in metres (the paper's Table 4), plus our columns.

    A question-only system (no movement, no image) gets a dash for grounding-dependent columns,
    as the paper prints for Blind.
    """
    t = Table(
        key="express",
        title="EXPRESS-Bench metrics",
        caption=(
            "C = mean 100·g·s/5, C* = mean 100·s/5, E_path = mean C·l/max(p, l), d_T = mean geodesic "
            "distance (m) from the end point to the target; judge grades from express.jsonl "
            "(`eviseek judge --protocol express`). 'exact' scores closed-form answers exactly (ours); "
            "'graded' counts episodes the judge graded; 'ended' says how episodes ended (ours)."
        ),
        columns=["Method", "C ↑", "C* ↑", "E_path ↑", "d_T ↓", "exact %", "n", "graded", "ended"],
    )
    for r in rows:
        blind = r.question_only
        t.add(
            [
                Cell(r.agent, numeric=False),
                Cell(DASH if blind else fmt(r.C, 2)),
                Cell(fmt(r.C_star, 2)),
                Cell(DASH if blind else fmt(r.E_path, 2)),
                Cell(DASH if blind else fmt(r.d_T, 2) + (f" (n={r.n_d_T})" if r.n_d_T < r.n else "")),
                Cell(fmt(r.exact, 1)),
                Cell(str(r.n)),
                Cell(str(r.graded)),
                Cell(ended_text(r.ended), numeric=False),
            ]
        )
    return t
