"""How often the initial view alone already shows all the decisive evidence, per subcategory.

The benchmark is meant to need active observation, so this share should be low. It is computed by
replaying each question's initial view in the environment and grading frame 0.
"""

from __future__ import annotations

from pydantic import BaseModel

from eviseek.envs.tabletop.env import TabletopEnv
from eviseek.types import Question


class InitialSupportRow(BaseModel):
    """One subcategory's first-view support statistics."""

    subcategory: str
    n: int
    full_share: float
    """Share of questions whose initial view has support 1."""
    mean_support: float


def initial_support_table(
    questions: list[Question], *, width: int = 320, height: int = 240
) -> list[InitialSupportRow]:
    """First-view support per subcategory, in the order subcategories first appear."""
    env = TabletopEnv(width=width, height=height)
    grades: dict[str, list[float]] = {}
    try:
        for q in questions:
            env.reset(options={"question": q})
            grades.setdefault(q.subcategory, []).append(env.visual_support([0]))
    finally:
        env.close()
    return [
        InitialSupportRow(
            subcategory=sub,
            n=len(g),
            full_share=sum(x == 1.0 for x in g) / len(g),
            mean_support=sum(g) / len(g),
        )
        for sub, g in grades.items()
    ]
