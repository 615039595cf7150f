"""The reference policy reads houses from pixels: rooms by their floors, small objects by colour
and silhouette, and house questions by their wording; it never touches the simulator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eviseek.envs.house import KINDS, HouseEnv, build_question
from eviseek.envs.house.sim import HouseSim
from eviseek.models.reference.house import FLOOR_LOOKS, read_ask, read_view, solve_house
from eviseek.models.reference.vision import analyse_array
from eviseek.types import Pose
from tests.envs.house.conftest import two_rooms


@pytest.mark.parametrize("slug", list(KINDS))
def test_every_house_question_is_read(slug: str) -> None:
    q = build_question(slug, 21, 0)
    ask = read_ask(q.text, list(q.contract.options or []))
    assert ask is not None and ask.kind == slug
    assert ask.room is None or ask.room in FLOOR_LOOKS
    # Other questions are left to the tabletop reader.
    assert read_ask("In which room is the red cube?", ["kitchen", "office"]) is None
    assert read_ask("What colour is the ball in the room?", ["red"]) is None


def test_blind_guesses_from_the_text_alone() -> None:
    q = build_question("attribute", 21, 1)
    ask = read_ask(q.text, list(q.contract.options or []))
    assert ask is not None
    v = solve_house(ask, [])
    assert v.confidence == 0.0 and v.answer in (q.contract.options or [])
    assert solve_house(ask, []).answer == v.answer  # the same text, the same guess


def test_the_floor_tells_the_room_and_the_object_its_colour() -> None:
    spec = two_rooms()
    sim = HouseSim(spec, width=320, height=240)
    try:
        views = []
        # A turn on the spot in the bedroom's far corner: the desk with the red cup, the doorway.
        for k in range(12):
            frame = sim.render(Pose(x=7.2, y=0.8, z=1.5, yaw=30.0 * k, pitch=0.0))
            views.append(analyse_array(frame.rgb))
    finally:
        sim.close()
    seen = [read_view(v) for v in views]
    assert {s.room for s in seen} <= {"bedroom", None}
    cups = [o for s in seen for o in s.objects if o.category == "cup"]
    assert cups and {o.colour for o in cups} == {"red"} and {o.room for o in cups} == {"bedroom"}
    assert any("kitchen" in s.floor_x for s in seen), "the kitchen shows through the doorway"
    ask = read_ask("What colour is the cup in the bedroom?", ["red", "blue", "green"])
    assert ask is not None
    verdict = solve_house(ask, views)
    assert verdict.answer == "red" and verdict.confidence >= 0.9
    passage = read_ask(
        "Which of these rooms can you walk into directly from the bedroom, through a doorway?",
        ["office", "kitchen", "hallway", "bathroom"],
    )
    assert passage is not None and solve_house(passage, views).answer == "kitchen"


def test_the_reader_sees_only_pixels() -> None:
    # A frame with no floor colour and no objects says nothing about rooms.
    blank = analyse_array(np.full((240, 320, 3), 128, dtype=np.uint8))
    s = read_view(blank)
    assert s.room is None and not s.rooms and not s.objects


def test_a_full_turn_in_the_named_room_settles_existence() -> None:
    env = HouseEnv(width=320, height=240)
    try:
        q = build_question("existence", 21, 0)
        ask = read_ask(q.text, list(q.contract.options or []))
        assert ask is not None
        obs, _ = env.reset(options={"question": q})
        views = [analyse_array(obs.image.array())]
        from eviseek.types import Action

        for _ in range(11):
            obs = env.step(Action(name="turn_left")).observation
            views.append(analyse_array(obs.image.array()))
        verdict = solve_house(ask, views)
        assert verdict.answer in ("yes", "no")
        assert math.isfinite(verdict.confidence)
    finally:
        env.close()
