"""A multi-turn AutoTool episode against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import numpy as np

from eviseek.agents.autotool import AutoToolAgent
from eviseek.envs import as_async
from eviseek.envs.image.env import ImageZoomEnv
from eviseek.models import get_model
from eviseek.testing.openai_server import OpenAITestServer, request_images
from eviseek.types import AnswerContract, Image, Question

TOOL_CALL = (
    "<tool_on><think>The sign is tiny; zoom in.</think>"
    '<tool_call>{"name": "image_zoom_in_tool", '
    '"arguments": {"bbox_2d": [600, 300, 700, 400], "label": "sign"}}'
    "</tool_call>"
)


def test_tool_call_crop_and_answer_over_http() -> None:
    # 4000x2000 original; shown at 1000x500 (max_pixels 500k): shown box [600,300,700,400]
    # is original [2400,1200,2800,1600], where a 100x100 green patch sits at [2500,1300,2600,1400].
    arr = np.full((2000, 4000, 3), 30, dtype=np.uint8)
    arr[1300:1400, 2500:2600] = (0, 255, 0)
    question = Question(
        id="sign",
        text="What colour is the small sign?\n(A) green\n(B) red",
        contract=AnswerContract(kind="option", options=["green", "red"]),
        ground_truth="green",
        initial_image=Image.from_array(arr),
    )
    replies = [TOOL_CALL, "<think>The zoomed sign is green.</think><answer>A</answer>"]
    with OpenAITestServer(replies) as server:
        model = get_model("openai/test-vlm", base_url=server.base_url, max_pixels=None)
        env = as_async(ImageZoomEnv(max_pixels=500_000))
        traj = asyncio.run(AutoToolAgent().run(env, question, model))
        first, second = server.chat_requests
    assert traj.result is not None and traj.result.answer == "A" and traj.result.mode == "tool_on"
    # First request: system prompt with the tool schema, the shown image at 1000x500.
    assert (
        first["messages"][0]["role"] == "system" and "image_zoom_in_tool" in first["messages"][0]["content"]
    )
    shown = request_images(first)
    assert [im.size for im in shown] == [(1000, 500)]
    for key in ("stage", "response_schema", "metadata"):
        assert key not in first  # eviseek-only fields never reach the server
    # Second request: the model's tool call as an assistant turn, then the crop as a new image turn.
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert "image_zoom_in_tool" in json.dumps(second["messages"][2])
    images = request_images(second)
    assert len(images) == 2 and images[0].size == (1000, 500)
    crop = np.asarray(images[1].convert("RGB"))
    assert crop.shape == (400, 400, 3)  # full-resolution pixels of the original region
    green = (crop[:, :, 1] == 255) & (crop[:, :, 0] == 0)
    assert green.sum() == 100 * 100 and green[100:200, 100:200].all()
    text = " ".join(p.get("text", "") for p in second["messages"][3]["content"] if p["type"] == "text")
    assert "<tool_response>" in text and "600, 300, 700, 400" in text
    assert traj.result.input_tokens is not None and traj.result.calls == 2
