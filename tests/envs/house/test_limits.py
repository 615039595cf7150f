"""Bounds on a house from outside (an env server's client writes it), checked before building."""

from __future__ import annotations

import time
from typing import Any

import pytest

from eviseek.envs.house import HouseEnv
from eviseek.envs.house.limits import MAX_COUNTS, checked_house
from eviseek.envs.house.splits import load_split
from eviseek.errors import EnvArgumentError
from tests.envs.house.conftest import hand_question, two_rooms


def _scene() -> dict[str, Any]:
    return two_rooms().model_dump(mode="json")


def test_a_house_of_thousands_of_items_is_refused_before_building(monkeypatch: pytest.MonkeyPatch) -> None:
    scene = _scene()
    scene["items"] = [{**scene["items"][0], "name": f"cup_{i}"} for i in range(5000)]
    built: list[int] = []
    monkeypatch.setattr("eviseek.envs.house.env.HouseSim", lambda *a, **k: built.append(1))
    question = hand_question(two_rooms())
    question.scene = scene
    env = HouseEnv(width=32, height=24)
    started = time.monotonic()
    with pytest.raises(EnvArgumentError, match=f"may have {MAX_COUNTS['items']} items, this one has 5000"):
        env.reset(options={"question": question})
    assert time.monotonic() - started < 0.5 and built == []


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"rooms": [{"name": "x"}] * 40}, "32 rooms"),
        ({"rooms": "nope"}, "carries no house scene"),
        ({"start": {"x": 1e9}}, "within 30 m"),
        ({"camera_height": float("inf")}, "finite"),
    ],
)
def test_each_bound_is_checked(change: dict[str, Any], why: str) -> None:
    with pytest.raises(EnvArgumentError, match=why):
        checked_house({**_scene(), **change}, "q")


def test_every_generated_house_is_within_the_bounds() -> None:
    for question in [*load_split("dev"), *load_split("test")]:
        checked_house(question.scene, question.id)
