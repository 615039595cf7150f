"""House questions: every kind builds, generation is deterministic, answers are balanced."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from eviseek.answers import score_answer
from eviseek.envs.house import (
    KINDS,
    HouseSpec,
    ItemSpec,
    OccupancyGrid,
    build_question,
    generate_questions,
    load_split,
)
from eviseek.envs.house.catalogue import SMALL_OBJECTS
from eviseek.envs.house.gymnasium_env import room_routes
from eviseek.envs.house.questions import EXPRESS_KINDS, FREE_TEXT
from eviseek.types import Question


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
    if slug == "traversable_passage":
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
    sizes = {
        "object": 8,
        "existence": 2,
        "counting": 4,
        "state": 2,
        "knowledge": 8,
        "location": 2,
        "regional_boundary": 3,
        "traversable_passage": 4,
    }
    for slug, k in sizes.items():
        qs = [build_question(slug, 99, i) for i in range(n)]
        answers = Counter(str(q.ground_truth) for q in qs)
        if slug == "traversable_passage":
            # The right option's position in the list is what a text-only agent could exploit.
            answers = Counter(str((q.contract.options or []).index(str(q.ground_truth))) for q in qs)
        if slug == "location":
            # The room names two surfaces; which of the two (in name order) is what is balanced.
            spec_kinds = [sorted(_surface_kinds(q)) for q in qs]
            answers = Counter(
                str(kinds.index(str(q.ground_truth))) for kinds, q in zip(spec_kinds, qs, strict=True)
            )
        # Balanced by construction: the commonest answer appears at most ceil(n / k) times, so the
        # best fixed guess scores at most ceil(n / k) / n.
        assert max(answers.values()) <= -(-n // k), (slug, answers)
    # Attributes alternate colour and size questions, each balanced on its own.
    qs = [build_question("attribute", 99, i) for i in range(4 * 9)]
    colours = Counter(str(q.ground_truth) for q in qs[0::2])
    sizes_asked = Counter(str(q.ground_truth) for q in qs[1::2])
    assert set(colours.values()) == {2} and sizes_asked == Counter({"big": 9, "small": 9})


def _surface_kinds(q: Question) -> set[str]:
    spec = HouseSpec.from_question(q.scene)
    room = q.metadata["target"]["room"]
    return {it.category for it in spec.items if it.room == room and it.category in SURFACE_CATEGORIES}


SURFACE_CATEGORIES = {
    "tv stand",
    "coffee table",
    "counter",
    "kitchen table",
    "nightstand",
    "sink cabinet",
    "dining table",
    "sideboard",
    "desk",
    "shoe cabinet",
    "washing machine",
    "laundry shelf",
}
"""Furniture small objects stand on, written out here rather than read from the catalogue."""
USE_OF = {
    "cup": "drinking",
    "vase": "flowers",
    "book": "reading",
    "ball": "playing",
    "box": "storage",
    "bottle": "pouring",
    "lamp": "light",
    "laptop": "computing",
}
USUAL_HEIGHT = {
    "cup": 0.13,
    "vase": 0.32,
    "book": 0.05,
    "ball": 0.2,
    "box": 0.2,
    "bottle": 0.3,
    "lamp": 0.45,
    "laptop": 0.03,
}


def _truth_from_spec(q: Question) -> str:
    """The answer the house itself gives, read from its spec by the question's own words (not
    through the generator's builders)."""
    spec = HouseSpec.from_question(q.scene)
    items = spec.items

    def only(found: list[ItemSpec]) -> ItemSpec:
        assert len(found) == 1, (q.text, [it.name for it in found])
        return found[0]

    def on_named(furniture: str, room: str) -> list[ItemSpec]:
        tops = {it.name for it in items if it.category == furniture and it.room == room}
        return [it for it in items if it.on in tops]

    if m := re.fullmatch(r"What is standing on the (.+) in the (.+)\?", q.text):
        return only(on_named(*m.groups())).category
    if m := re.fullmatch(r"Is there an? (.+) in the (.+)\?", q.text):
        return "yes" if any(it.category == m[1] and it.room == m[2] for it in items) else "no"
    if m := re.fullmatch(r"What colour is the (.+) in the (.+)\?", q.text):
        return only([it for it in items if it.category == m[1]]).color
    if m := re.fullmatch(r"Is the (.+) in the (.+) big or small for an? .+\?", q.text):
        obj = only([it for it in items if it.category == m[1]])
        return "big" if obj.size[2] > USUAL_HEIGHT[m[1]] else "small"
    if m := re.fullmatch(r"Where in the (.+) is the (\w+) (.+)\?", q.text):
        obj = only([it for it in items if it.category == m[3] and it.color == m[2] and it.room == m[1]])
        return spec.item(str(obj.on)).category
    if m := re.fullmatch(r"Is the TV in the (.+) on or off\?", q.text):
        return str(only([it for it in items if it.category == "tv stand" and it.room == m[1]]).state)
    if m := re.fullmatch(r"What is the (\w+) thing on the (.+) in the (.+) used for\?", q.text):
        return USE_OF[only([it for it in on_named(m[2], m[3]) if it.color == m[1]]).category]
    if m := re.fullmatch(r"How many (.+) are there in the (.+)\?", q.text):
        plural = {o.plural: c for c, o in SMALL_OBJECTS.items()}[m[1]]
        return str(sum(1 for it in items if it.category == plural and it.room == m[2]))
    raise AssertionError(f"unread question {q.text!r}")


@pytest.mark.parametrize("slug", EXPRESS_KINDS)
def test_every_express_kind_answers_what_the_house_shows(slug: str) -> None:
    for i in range(6):
        q = build_question(slug, 77, i)
        assert _truth_from_spec(q) == q.ground_truth, q.id
        # Free text: the prompt lists no answers, and a sentence naming the answer scores.
        assert q.contract.describe() == FREE_TEXT and not q.contract.lettered
        reply = {"yes": "Yes, there is one.", "no": "No, I did not see any."}.get(
            str(q.ground_truth), f"I think it is {q.ground_truth}, from what I saw."
        )
        assert score_answer(q, reply).correct, (q.id, reply)


def test_dev_split_is_cached(tmp_path: Path) -> None:
    qs = load_split("dev", cache_dir=tmp_path)
    assert len(qs) == 3 * len(KINDS) and len({q.id for q in qs}) == len(qs)
    again = load_split("dev", cache_dir=tmp_path)
    assert [q.model_dump_json() for q in again] == [q.model_dump_json() for q in qs]
