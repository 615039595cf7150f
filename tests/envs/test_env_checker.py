"""Every registered environment id passes the Env protocol checker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import eviseek.envs
from eviseek.envs.checker import check_env
from eviseek.types import AnswerContract, Image, Question

# The test plugin registers toy/Reveal-v0 when any test imports it; import it here too so the set
# of ids checked does not depend on which test files were collected first.
from tests.eval import toy_plugin


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


def _esibench() -> Question:
    from eviseek.eval.datasets import load_dataset
    from tests.eval.esibench.conftest import FIXTURES

    return load_dataset(f"esibench:{FIXTURES}")[0]


def _toy() -> Question:
    return toy_plugin.make_questions(1)[0]


def _express() -> Question:
    from eviseek.envs.express import load_express
    from tests.envs.express.conftest import FIXTURE

    return load_express(FIXTURE)[0]


SAMPLES: dict[str, Callable[[], Question]] = {
    "eviseek/Express-v0": _express,
    "eviseek/ESIBench-v0": _esibench,
    "eviseek/House-v0": _house,
    "eviseek/Tabletop-v0": _tabletop,
    "eviseek/ImageZoom-v0": _image,
    toy_plugin.ENV_ID: _toy,
}


@pytest.mark.parametrize("env_id", eviseek.envs.registered())
def test_registered_env_passes_the_checker(
    env_id: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert env_id in SAMPLES, f"add a sample question for {env_id} to SAMPLES so the checker covers it"
    if env_id == "eviseek/ESIBench-v0":  # OmniGibson cannot run here: the stand-in runner can
        from tests.envs.esibench.conftest import forget_standin, standin_checkout

        forget_standin()
        monkeypatch.setenv("ESI_BENCH_ROOT", str(standin_checkout(tmp_path)))
        monkeypatch.setenv("ESI_BENCH_STEPS", str(tmp_path / "steps"))
    kwargs: dict[str, str] = {}
    if env_id == "eviseek/Express-v0":  # habitat-sim cannot run here: its stand-in can
        from tests.envs.express.conftest import STANDIN, forget_standin, scene_root

        forget_standin()
        monkeypatch.syspath_prepend(str(STANDIN))
        kwargs["scene_root"] = str(scene_root(tmp_path))
    try:
        check_env(eviseek.envs.make(env_id, **kwargs), SAMPLES[env_id]())
    finally:
        if env_id == "eviseek/Express-v0":
            forget_standin()
