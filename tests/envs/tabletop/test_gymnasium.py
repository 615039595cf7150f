"""The Gymnasium wrapper passes Gymnasium's own checker and answers end episodes with a score."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env

from eviseek.envs.tabletop import generate_questions
from eviseek.envs.tabletop.gymnasium_env import ANSWER_SLOTS, N_ACTIONS, TabletopGymEnv


def test_registered_env_passes_gymnasiums_checker() -> None:
    env = gymnasium.make("eviseek/Tabletop-v0", width=64, height=48, render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning is a defect of the wrapper, not noise
        check_env(env.unwrapped)
    env.close()


def test_answer_slots_score_and_mask() -> None:
    qs = generate_questions(
        1, 5, subcategories=["linear_alignment", "counting_with_occlusion"], render_images=False
    )
    env = TabletopGymEnv(width=64, height=48, questions=qs)
    try:
        for q in qs:
            obs, info = env.reset(seed=0, options={"question": q})
            assert obs.shape == (48, 64, 3) and obs.dtype == np.uint8
            names = info["action_names"]
            assert len(names) == N_ACTIONS and info["action_mask"].sum() == sum(n is not None for n in names)
            right = names.index(f"answer:{q.ground_truth}")
            _, reward, terminated, truncated, _ = env.step(right)
            assert reward == 1.0 and terminated and not truncated
            env.reset(seed=0, options={"question": q})
            wrong = next(
                i for i, n in enumerate(names) if n and n.startswith("answer:") and n != names[right]
            )
            _, reward, terminated, _, _ = env.step(wrong)
            assert terminated and reward < 1.0
        # A masked slot costs a step but does nothing.
        env.reset(seed=0, options={"question": qs[0]})
        masked = int(np.flatnonzero(env.action_mask() == 0)[0])
        _, reward, terminated, _, info = env.step(masked)
        assert reward == 0.0 and not terminated and not info["success"]
        assert ANSWER_SLOTS >= 10
    finally:
        env.close()
