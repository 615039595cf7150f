"""Honesty on the splits results are reported on, not only on the honesty test's own seed.

The text-only learners and the answer-balance checks (:mod:`eviseek.envs.tabletop.honesty`) run
over ``dev``, ``paper`` and ``test``; the first-view pixel learner runs over ``paper``'s exploring
subcategories and over ``test``'s rebuilt ones. A split already in the cache is read from there (the
CLI and evaluation generate it once); otherwise it is generated here without images (the checks
render what they need). The rest of ``test`` and the fresh seeds go through
``scripts/tabletop_honesty.py`` (minutes); ``docs/tabletop_in_depth.md`` gives its results.
"""

from __future__ import annotations

import pytest

from eviseek.envs.tabletop import honesty
from eviseek.envs.tabletop.generate import (
    SPLITS,
    generate_paper_split,
    generate_questions,
    load_split,
    split_dir,
)
from eviseek.envs.tabletop.honesty import by_subcategory
from eviseek.types import Question

pytestmark = [pytest.mark.slow, pytest.mark.serial]


def split(name: str) -> list[Question]:
    if (split_dir(name) / "questions.jsonl").exists():
        return load_split(name)
    spec = SPLITS[name]
    if spec.paper_weighted:
        return generate_paper_split(spec.seed, render_images=False)
    return generate_questions(
        spec.n_per_subcategory, spec.seed, esi_forms=spec.esi_forms, render_images=False
    )


@pytest.fixture(scope="module")
def sets() -> dict[str, list[Question]]:
    return {name: split(name) for name in ("dev", "paper", "test")}


def test_no_text_shortcut_and_no_unbalanced_answer_on_any_split(sets: dict[str, list[Question]]) -> None:
    failures = []
    for name, qs in sets.items():
        for sub, group in by_subcategory(qs).items():
            failures += [f"{name} {f}" for f in honesty.text_failures(sub, group)]
            failures += [f"{name} {f}" for f in honesty.balance_failures(sub, group)]
    assert not failures, failures


REBUILT = (
    "Partial Occlusion",
    "View Hallucination",
    "Unobserved Change",
    "Agent Observation",
    "Spatial Distance",
    "Connectivity",
    "Reflection Authoring",
    "Spatial Relations",
    "Linear Alignment",
)
"""The subcategories whose first view gave their answer away on ``test`` or a fresh seed before
(versions 9-10) and were rebuilt: the pixel learner runs over these on ``test`` (30 questions
each). All of ``test`` takes minutes; ``scripts/tabletop_honesty.py --split test`` runs the rest."""


def first_view_failures(qs: list[Question], only: tuple[str, ...] | None = None) -> tuple[int, list[str]]:
    failures, checked = [], 0
    for sub, group in by_subcategory(qs).items():
        if sub in honesty.FIRST_VIEW_ANSWERABLE or len(group) < 4 or (only and sub not in only):
            continue
        _, bad = honesty.first_view_failure(sub, group)
        checked += 1
        failures += [bad] if bad else []
    return checked, failures


def test_first_view_statistics_stay_at_chance_on_paper(sets: dict[str, list[Question]]) -> None:
    checked, failures = first_view_failures(sets["paper"])
    assert checked >= 10
    assert not failures, failures


def test_first_view_statistics_stay_at_chance_on_the_rebuilt_subcategories_of_test(
    sets: dict[str, list[Question]],
) -> None:
    checked, failures = first_view_failures(sets["test"], REBUILT)
    assert checked == len(REBUILT)
    assert not failures, failures
