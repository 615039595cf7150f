"""eviseek/ImageZoom-v0 follows the Env protocol; bad zooms are feedback, not exceptions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eviseek.envs import Env, make, registered
from eviseek.envs.image.env import ImageZoomEnv
from eviseek.errors import EnvError
from eviseek.types import Action, Image, Question


def _question(width: int = 4000, height: int = 3000) -> Question:
    arr = np.zeros((height, width, 3), dtype=np.uint8)
    arr[1000:1100, 2000:2100] = (255, 0, 0)
    return Question(id="q", text="What colour is the square?", initial_image=Image.from_array(arr))


def test_registered_and_satisfies_protocol() -> None:
    assert "eviseek/ImageZoom-v0" in registered()
    env = make("eviseek/ImageZoom-v0", max_pixels=200_000)
    assert isinstance(env, Env)
    assert env.max_pixels == 200_000


def test_reset_shows_a_capped_copy_and_zoom_crops_the_original() -> None:
    env = ImageZoomEnv(max_pixels=120_000, max_steps=3)
    obs, info = env.reset(options={"question": _question()})
    sw, sh = info["shown_size"]
    assert sw * sh <= 120_000 and info["original_size"] == [4000, 3000]
    assert obs.image.width == sw and obs.frame_id == 0
    names = [a.name for a in env.legal_actions()]
    assert names == ["image_zoom_in_tool", "answer"]
    # Shown-frame box around the red square (original 2000..2100 x 1000..1100).
    s = sw / 4000
    box = [1990 * s, 990 * s, 2110 * s, 1110 * s]
    res = env.step(Action(name="image_zoom_in_tool", args={"bbox_2d": json.dumps(box), "label": "square"}))
    assert res.feedback.success, res.feedback
    crop = res.observation.image.array()
    assert res.observation.frame_id == 1
    assert crop.shape[0] >= 100 and crop.shape[1] >= 100  # full resolution of the region
    assert (crop[:, :, 0] == 255).sum() == 100 * 100  # the whole square, pixel-exact
    assert res.feedback.state["box_original"][0] <= 2000


def test_bad_zoom_is_feedback_and_steps_truncate() -> None:
    env = ImageZoomEnv(max_pixels=None, max_steps=2)
    env.reset(options={"question": _question(400, 300)})
    bad = env.step(Action(name="image_zoom_in_tool", args={"bbox_2d": "[5, 5, 3, 3]"}))
    assert not bad.feedback.success and "reversed" in bad.feedback.reason
    assert not bad.truncated
    junk = env.step(Action(name="image_zoom_in_tool", args={"bbox_2d": "{not json"}))
    assert not junk.feedback.success and junk.truncated
    unknown = env.step(Action(name="rotate", args={}))
    assert not unknown.feedback.success and "unknown action" in unknown.feedback.reason
    done = env.step(Action(name="answer", args={"text": "red"}))
    assert done.terminated


def test_usage_errors_raise() -> None:
    env = ImageZoomEnv()
    with pytest.raises(EnvError):
        env.step(Action(name="answer"))
    with pytest.raises(EnvError, match="initial_image"):
        env.reset(options={"question": Question(id="x", text="?")})
    with pytest.raises(EnvError, match="question"):
        env.reset()
    with pytest.raises(EnvError):
        ImageZoomEnv(max_pixels=10)
