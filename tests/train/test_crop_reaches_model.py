"""The zoom crop of a tool-on trace reaches the model's answer, in the warm-up and in evaluation.

A guard for the learning run's diagnosis (docs/autotool_learning_in_depth.md): the warmed model answers
need-zoom questions at chance with ``<tool_on>`` forced. These tests pin the plumbing that was
ruled out: the crop is encoded as a second image with its own grid and image tokens, the answer's
logits change with the crop's pixels, and held-out evaluation feeds the model exactly the tokens
and pixels the warm-up trained on.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
from PIL import Image

from eviseek.testing.tiny_vlm import build_tiny_vlm
from eviseek.train.frames import ImageFrame
from eviseek.train.policy_eval import evaluate_policy
from eviseek.train.tag_grid import COLOURS, TagGridConfig, tag_grid_row
from eviseek.train.tiny_model import TinyVLMConfig, load_tiny_vlm
from eviseek.train.trl_autotool.environment import ZoomToolEnvironment
from eviseek.train.trl_autotool.warmup import ideal_conversation

GRID = TagGridConfig(size=512, grid=4, tag_size=24)


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, Any]:
    return load_tiny_vlm(build_tiny_vlm(config=TinyVLMConfig(max_image_pixels=4096, min_image_pixels=1024)))


def _tool_on(processor: Any) -> tuple[list[dict[str, Any]], ZoomToolEnvironment, ImageFrame]:
    frame = ImageFrame.from_processor(processor)
    env = ZoomToolEnvironment("shown", frame)
    row = tag_grid_row(3, GRID, needs_zoom=True)
    return ideal_conversation(row, env, "shown", frame, "tool_on", compact=True), env, frame


def _encode(processor: Any, convo: list[dict[str, Any]], env: ZoomToolEnvironment) -> Any:
    return processor.apply_chat_template(
        convo, tools=[env.image_zoom_in_tool], tokenize=True, return_dict=True, return_tensors="pt"
    )


def test_the_crop_is_a_second_image_with_its_own_tokens(tiny: tuple[Any, Any]) -> None:
    _, processor = tiny
    convo, env, _ = _tool_on(processor)
    enc = _encode(processor, convo, env)
    grids = enc["image_grid_thw"]
    assert grids.shape[0] == 2  # the question's image and the crop of the tool reply
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    merge = processor.image_processor.merge_size
    assert int((enc["input_ids"] == pad).sum()) == int(grids.prod(-1).sum()) // merge**2
    assert enc["pixel_values"].shape[0] == int(grids.prod(-1).sum())


def test_the_answer_logits_depend_on_the_crop_pixels(tiny: tuple[Any, Any]) -> None:
    model, processor = tiny
    convo, env, _ = _tool_on(processor)
    answer_id = processor.tokenizer.convert_tokens_to_ids("<answer>")

    def answer_logits(c: list[dict[str, Any]]) -> torch.Tensor:
        enc = _encode(processor, c, env)
        pos = int((enc["input_ids"][0] == answer_id).nonzero()[-1])
        with torch.no_grad():
            return model(**enc).logits[0, pos]

    real = answer_logits(convo)
    assert torch.equal(real, answer_logits(copy.deepcopy(convo)))  # deterministic: a change is the crop's
    for rgb in COLOURS.values():
        solid = copy.deepcopy(convo)
        for part in solid[3]["content"]:
            if part.get("type") == "image":
                part["image"] = Image.new("RGB", part["image"].size, rgb)
        assert float((answer_logits(solid) - real).abs().max()) > 1e-4


def test_evaluation_feeds_the_tokens_and_pixels_the_warm_up_trained_on(
    tiny: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, processor = tiny
    convo, env, frame = _tool_on(processor)
    enc = _encode(processor, convo, env)
    # The random model writes no tool call; script its first reply to be the warm-up's own.
    first_reply = processor.tokenizer.encode(
        convo[2]["content"].removeprefix("<tool_on>") + "<|im_end|>", add_special_tokens=False
    )
    seen: list[dict[str, torch.Tensor]] = []

    def scripted(**inputs: Any) -> torch.Tensor:
        seen.append(inputs)
        reply = first_reply if len(seen) == 1 else processor.tokenizer.encode("<|im_end|>")
        return torch.cat([inputs["input_ids"], torch.tensor([reply])], dim=1)

    monkeypatch.setattr(model, "generate", scripted)
    row = tag_grid_row(3, GRID, needs_zoom=True)
    out = evaluate_policy(
        model, processor, [row], coordinates="shown", frame=frame, env=env, force_mode="tool_on", compact=True
    )
    assert out.rollouts[0].valid_calls == 1 and len(seen) == 2
    second = seen[1]
    n = second["input_ids"].shape[1]
    assert torch.equal(second["input_ids"][0], enc["input_ids"][0, :n])
    assert torch.equal(second["image_grid_thw"], enc["image_grid_thw"])
    assert torch.allclose(second["pixel_values"], enc["pixel_values"])
