"""Shared helpers for the tabletop tests: hand-built scenes wrapped as questions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from eviseek.envs.tabletop import SceneSpec, TabletopEnv, get_family
from eviseek.envs.tabletop.families._common import make_board, make_object
from eviseek.types import AnswerContract, Pose, Question


def hand_question(
    scene: SceneSpec,
    slug: str,
    metadata: dict[str, Any],
    *,
    truth: str = "",
    options: list[str] | None = None,
) -> Question:
    """A question for a hand-built scene, hosted by family ``slug`` (which supplies the evidence rule)."""
    fam = get_family(slug)
    return Question(
        id=f"hand-{slug}",
        text="hand-built test question",
        contract=AnswerContract(kind="option", options=options or ["a", "b"]),
        family=fam.family,
        subcategory=fam.subcategory,
        ground_truth=truth,
        scene=scene.model_dump(mode="json"),
        metadata={**metadata, "slug": slug},
    )


def occlusion_scene() -> SceneSpec:
    """A red cube 0.1 m straight behind a tall gray board, seen head-on along +x from x=-0.6."""
    board = make_board("gray_board", "gray", (0.0, 0.0), (0.02, 0.2, 0.2), 0.0)
    cube = make_object("cube", "red", (0.1, 0.0), 0.06, role="target")
    other = make_object("ball", "blue", (0.0, 0.3), 0.05)
    return SceneSpec(objects=[board, cube, other], camera=Pose(x=-0.6, y=0.0, z=0.08, yaw=0.0, pitch=0.0))


@pytest.fixture
def env() -> Iterator[TabletopEnv]:
    e = TabletopEnv()
    yield e
    e.close()
