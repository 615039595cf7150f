"""House questions: every kind builds, generation is deterministic, answers are balanced."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from eviseek.answers import score_answer
from eviseek.envs.house import KINDS, HouseSpec, OccupancyGrid, build_question, generate_questions, load_split
from eviseek.envs.house.gymnasium_env import room_routes


@pytest.mark.parametrize("slug", list(KINDS))
def test_every_kind_builds_a_consistent_question(slug: str) -> None:
    q = build_question(slug, 11, 0)
    spec = HouseSpec.from_question(q.scene)
    meta = q.metadata
    assert q.env_id == "eviseek/House-v0" and q.subcategory == KINDS[slug][1]
    assert meta["reference_answer"] == q.ground_truth and meta["evidence"]
    assert score_answer(q, str(q.ground_truth)).correct
    grid = OccupancyGrid(spec)
    assert grid.navigable[grid.cell(spec.start.x, spec.start.y)], "the agent must start on a free cell"
    x, y, _ = meta["target"]["position"]
    walk = grid.geodesic_distance((spec.start.x, spec.start.y), (x, y))
    assert walk == pytest.approx(meta["shortest_path_m"], abs=1e-3)
    assert spec.room_at(spec.start.x, spec.start.y) == meta["start_room"]
    names = [r.name for r in spec.rooms]
    if q.contract.options and q.contract.kind == "option" and slug in ("location", "traversable_passage"):
        assert set(q.contract.options) <= set(names)


def test_generation_is_deterministic() -> None:
    a = [q.model_dump_json() for q in generate_questions(1, 5)]
    b = [q.model_dump_json() for q in generate_questions(1, 5)]
    assert a == b and len(a) == len(KINDS)
    assert generate_questions(1, 6)[0].model_dump_json() != a[0]


def test_cognitive_mapping_answers_follow_the_house() -> None:
    q = build_question("long_term_navigation", 2, 0)
    spec = HouseSpec.from_question(q.scene)
    seq = q.metadata["room_sequence"]
    assert q.ground_truth == " | ".join(seq) and len(seq) >= 3
    assert spec.room_at(spec.start.x, spec.start.y) == seq[0]
    for a, b in itertools.pairwise(seq):
        assert b in spec.neighbours(a), "consecutive rooms must share a doorway"
    assert " | ".join(seq) in room_routes(spec, seq[0], seq[-1])
    # ESI-Bench's format: '|' separated, case and spacing ignored.
    assert score_answer(q, "|".join(s.upper() for s in seq)).correct
    assert not score_answer(q, " | ".join(reversed(seq))).correct
    p = build_question("traversable_passage", 2, 1)
    pspec = HouseSpec.from_question(p.scene)
    assert p.ground_truth in pspec.neighbours(p.metadata["start_room"])
    wrong = [o for o in p.contract.options or [] if o != p.ground_truth]
    assert wrong and not any(o in pspec.neighbours(p.metadata["start_room"]) for o in wrong)


def test_the_false_start_room_is_fixed_and_routes_are_measured_from_the_start_pose() -> None:
    # house-long_term_navigation-s4000-0001 used to start in the doorway, on the bathroom side.
    for i in range(4):
        q = build_question("long_term_navigation", 4000, i)
        spec = HouseSpec.from_question(q.scene)
        x0, y0, x1, y1 = spec.room(q.metadata["start_room"]).rect
        assert x0 + 0.3 <= spec.start.x <= x1 - 0.3 and y0 + 0.3 <= spec.start.y <= y1 - 0.3
        assert f"You are in the {q.metadata['start_room']}." in q.text and "from where you stand" in q.text
        seq = q.metadata["room_sequence"]
        assert len(spec.routes(seq[0], seq[-1])) == 1, (
            "one doorway route: the answer cannot hinge on the start"
        )
        target = tuple(q.metadata["target"]["position"][:2])
        assert OccupancyGrid(spec).room_sequence((spec.start.x, spec.start.y), target) == seq


@pytest.mark.slow
def test_answers_are_balanced_so_a_text_only_guess_stays_near_chance() -> None:
    n = 12
    for slug in (
        "attribute",
        "existence",
        "counting",
        "relation",
        "regional_boundary",
        "traversable_passage",
    ):
        qs = [build_question(slug, 99, i) for i in range(n)]
        answers = Counter(str(q.ground_truth) for q in qs)
        if slug == "traversable_passage":
            # The right option's position in the list is what a text-only agent could exploit.
            answers = Counter(str((q.contract.options or []).index(str(q.ground_truth))) for q in qs)
        k = {"attribute": 9, "existence": 2, "counting": 4, "relation": 8, "regional_boundary": 3}.get(
            slug, 4
        )
        # Balanced by construction: the commonest answer appears at most ceil(n / k) times, so the
        # best fixed guess scores at most ceil(n / k) / n.
        assert max(answers.values()) <= -(-n // k), (slug, answers)


def test_dev_split_is_cached(tmp_path: Path) -> None:
    qs = load_split("dev", cache_dir=tmp_path)
    assert len(qs) == 3 * len(KINDS) and len({q.id for q in qs}) == len(qs)
    again = load_split("dev", cache_dir=tmp_path)
    assert [q.model_dump_json() for q in again] == [q.model_dump_json() for q in qs]
