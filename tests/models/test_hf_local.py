"""The ``hf/`` provider generates from an image prompt with a tiny local Qwen3-VL model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eviseek.errors import ConfigError
from eviseek.models import generate_recorded, get_model
from eviseek.models.hf_local import HFLocalModel
from eviseek.models.settings import HFSettings
from eviseek.testing.tiny_vlm import build_tiny_vlm
from eviseek.types import ChatMessage, GenerateConfig, Image


@pytest.fixture(scope="module")
def tiny_path() -> Path:
    return build_tiny_vlm()


def _image(seed: int, w: int = 96, h: int = 64) -> Image:
    rng = np.random.default_rng(seed)
    return Image.from_array(rng.integers(0, 255, size=(h, w, 3), dtype=np.uint8))


def _prompt(img: Image) -> list[ChatMessage]:
    return [
        ChatMessage.system("You answer questions about images."),
        ChatMessage.user(img, "What colour is the small square?"),
    ]


async def test_generates_text_for_an_image_prompt(tiny_path: Path) -> None:
    model = get_model(f"hf/{tiny_path}")
    assert isinstance(model, HFLocalModel)
    cfg = GenerateConfig(temperature=1.0, top_p=0.95, max_tokens=12, seed=3, stage="answer")
    completion, call = await generate_recorded(model, _prompt(_image(0)), cfg)
    assert isinstance(completion.text, str) and completion.text
    assert completion.model == f"hf/{tiny_path}"
    usage = completion.usage
    assert usage.images_sent == 1
    assert usage.output_tokens is not None and 1 <= usage.output_tokens <= 12
    # The prompt holds the chat layout, the text and one token per merged 2x2 patch group:
    # a 96x64 image resized to multiples of 32 gives (96/32)*(64/32)*... image tokens.
    text_only = await model.generate([ChatMessage.system("x"), ChatMessage.user("y")], cfg)
    assert usage.input_tokens is not None and text_only.usage.input_tokens is not None
    assert usage.input_tokens > text_only.usage.input_tokens + 6
    assert completion.latency_s > 0
    assert completion.finish_reason in ("stop", "length")
    assert call.output == completion.text and call.stage == "answer"
    assert any("image-only processor" in n for n in completion.notes)


async def test_seeded_sampling_is_reproducible_and_image_matters(tiny_path: Path) -> None:
    model = HFLocalModel(str(tiny_path))
    cfg = GenerateConfig(temperature=1.0, max_tokens=16, seed=11)
    a = await model.generate(_prompt(_image(1)), cfg)
    b = await model.generate(_prompt(_image(1)), cfg)
    assert a.text == b.text
    # Greedy decoding depends only on the inputs: a different image changes the prompt tokens'
    # pixel features, so over a few images the replies are not all identical.
    greedy = GenerateConfig(max_tokens=16)
    replies = {(await model.generate(_prompt(_image(s)), greedy)).text for s in range(2, 6)}
    assert len(replies) > 1


async def test_stop_strings_and_multi_image(tiny_path: Path) -> None:
    model = HFLocalModel(str(tiny_path), HFSettings(max_pixels=64 * 64))
    msgs = [ChatMessage.user(_image(7, 200, 100), "compare", _image(8, 50, 120), "these")]
    cfg = GenerateConfig(max_tokens=24, temperature=1.0, seed=5)
    full = await model.generate(msgs, cfg)
    assert full.usage.images_sent == 2
    assert len(full.text) >= 6
    stop = full.text[3:6]
    cut = await model.generate(msgs, cfg.merged(GenerateConfig(stop=[stop])))
    assert stop not in cut.text
    assert full.text.startswith(cut.text)
    assert cut.finish_reason == "stop"


def test_bad_paths_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    model = HFLocalModel(str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match=r"no config\.json"):
        model.load()
    with pytest.raises(ConfigError, match="dtype"):
        HFLocalModel.from_spec("x", dtype="float8")
    with pytest.raises(ConfigError, match="needs a model directory"):
        get_model("hf/")
