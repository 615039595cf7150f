"""Every registered environment id passes the Env protocol checker."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import eviseek.envs
from eviseek.envs.checker import check_env
from eviseek.types import AnswerContract, Image, Question


def _tabletop() -> Question:
    from eviseek.envs.tabletop import sample_question

    return sample_question(1)


def _image() -> Question:
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 255, size=(300, 400, 3), dtype=np.uint8)
    return Question(
        id="img-1",
        text="What colour is the patch?",
        contract=AnswerContract(kind="option", options=["red", "blue"]),
        initial_image=Image.from_array(arr),
        env_id="eviseek/ImageZoom-v0",
    )


def _house() -> Question:
    from eviseek.envs.house import build_question

    return build_question("attribute", 1, 0)


SAMPLES: dict[str, Callable[[], Question]] = {
    "eviseek/House-v0": _house,
    "eviseek/Tabletop-v0": _tabletop,
    "eviseek/ImageZoom-v0": _image,
}


@pytest.mark.parametrize("env_id", eviseek.envs.registered())
def test_registered_env_passes_the_checker(env_id: str) -> None:
    assert env_id in SAMPLES, f"add a sample question for {env_id} to SAMPLES so the checker covers it"
    check_env(eviseek.envs.make(env_id), SAMPLES[env_id]())
