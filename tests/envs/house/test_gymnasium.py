"""The Gymnasium wrapper passes Gymnasium's own checker; answer slots end episodes with a score."""

from __future__ import annotations

import warnings

import gymnasium
from gymnasium.utils.env_checker import check_env

from eviseek.envs.house import build_question
from eviseek.envs.house.gymnasium_env import HouseGymEnv


def test_registered_env_passes_gymnasiums_checker() -> None:
    env = gymnasium.make("eviseek/House-v0", width=64, height=48, render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a defect of the wrapper, not noise
        check_env(env.unwrapped)
    env.close()


def test_answer_slots_score() -> None:
    qs = [build_question("counting", 3, 0), build_question("long_term_navigation", 3, 0)]
    env = HouseGymEnv(width=64, height=48)
    try:
        for q in qs:
            _, info = env.reset(seed=0, options={"question": q})
            names = info["action_names"]
            right = names.index(f"answer:{q.ground_truth}")
            _, reward, terminated, _, _ = env.step(right)
            assert reward == 1.0 and terminated
        _, info = env.reset(seed=0, options={"question": qs[0]})
        _, reward, terminated, _, info = env.step(0)
        assert reward == 0.0 and not terminated and "move_forward" in info["feedback"]
    finally:
        env.close()
