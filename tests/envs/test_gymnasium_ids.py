"""``import eviseek`` registers its Gymnasium ids the way Gymnasium 1.x packages do: without
loading PyBullet, whatever the import order, and in spawned vector-env workers too."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
from gymnasium.utils.env_checker import check_env

from eviseek.types import AnswerContract, Image, Question

SRC = Path(__file__).resolve().parents[2] / "src"


def _python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_eviseek_then_gymnasium_registers_both_ids_without_pybullet() -> None:
    printed = _python(
        "import sys, eviseek\n"
        "assert 'gymnasium' not in sys.modules  # import eviseek stays light\n"
        "import gymnasium as gym\n"
        "gym.register_envs(eviseek)\n"
        "print(sorted(k for k in gym.registry if k.startswith('eviseek/')), 'pybullet' in sys.modules)\n"
    )
    assert printed == "['eviseek/House-v0', 'eviseek/ImageZoom-v0', 'eviseek/Tabletop-v0'] False"


def test_import_gymnasium_first_then_eviseek_registers_and_makes() -> None:
    printed = _python(
        "import sys, gymnasium as gym, eviseek\n"
        "env = gym.make('eviseek/Tabletop-v0', width=32, height=24)\n"
        "obs, info = env.reset(seed=0)\n"
        "print(obs.shape, 'pybullet' in sys.modules)\n"
        "env.close()\n"
    )
    assert printed.splitlines()[-1] == "(24, 32, 3) True"


def test_spawned_async_vector_env_workers_find_the_id() -> None:
    # Workers started with "spawn" import nothing of the parent's state: only what they unpickle.
    printed = _python(
        "import eviseek, gymnasium as gym\n"
        "if __name__ == '__main__':\n"
        "    envs = gym.make_vec('eviseek/Tabletop-v0', num_envs=2, vectorization_mode='async',\n"
        "                        vector_kwargs={'context': 'spawn'}, width=32, height=24)\n"
        "    obs, _ = envs.reset(seed=0)\n"
        "    print(obs.shape)\n"
        "    envs.close()\n"
    )
    assert printed.splitlines()[-1] == "(2, 24, 32, 3)"


def _image_question() -> Question:
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 255, size=(600, 800, 3), dtype=np.uint8)
    arr[500:560, 700:780] = (250, 20, 20)
    return Question(
        id="img-1",
        text="What colour is the patch in the corner?",
        contract=AnswerContract(kind="option", options=["red", "blue"]),
        ground_truth="red",
        initial_image=Image.from_array(arr),
        env_id="eviseek/ImageZoom-v0",
    )


def test_image_zoom_env_passes_gymnasiums_checker_and_scores_answers() -> None:
    import gymnasium as gym

    import eviseek

    gym.register_envs(eviseek)
    env = gym.make("eviseek/ImageZoom-v0", questions=[_image_question()], width=64, height=48,
                   render_mode="rgb_array")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    obs, info = env.reset(seed=0)
    assert obs.shape == (48, 64, 3) and info["view_size"] == (64, 48)
    assert info["answers"] == ["red", "blue"] and info["action_mask"].tolist()[:4] == [1, 1, 1, 0]
    obs, reward, terminated, _, info = env.step({"kind": 0, "box": np.array([0.85, 0.8, 1.0, 0.95])})
    assert info["success"] and not terminated and reward == 0.0
    assert obs[24, 32, 0] > 200 and obs[24, 32, 1] < 60  # the crop shows the red patch
    _, reward, terminated, _, _ = env.step({"kind": 1, "box": np.zeros(4)})
    assert terminated and reward == 1.0
    env.close()
