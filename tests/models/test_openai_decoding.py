"""Provider decoding options the EviSeek paper used (app. A): a thinking budget on Gemini's
OpenAI-compatible endpoint, reasoning effort on OpenAI reasoning models, and the Responses API
with low effort for the support judge. Tested against the real client and a local server."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eviseek.errors import ConfigError
from eviseek.models import get_model
from eviseek.models.openai_compat import OpenAICompatModel
from eviseek.testing import OpenAITestServer, ServerReply, request_images, request_texts
from eviseek.types import ChatMessage, GenerateConfig, Image

KEY = "sk-test-decoding-0123456789"


def _model(server: OpenAITestServer, **kwargs: Any) -> OpenAICompatModel:
    model = get_model("openai/test-vlm", base_url=server.base_url, api_key=KEY, backoff_base_s=0.01, **kwargs)
    assert isinstance(model, OpenAICompatModel)
    return model


def _picture() -> Image:
    rng = np.random.default_rng(3)
    return Image.from_array(rng.integers(0, 255, (48, 64, 3), dtype=np.uint8))


async def test_thinking_budget_and_reasoning_effort_reach_the_chat_request() -> None:
    with OpenAITestServer(["ok", "ok"]) as srv:
        gemini = _model(srv, thinking_budget=512)
        await gemini.generate([ChatMessage.user("hi")], GenerateConfig(temperature=0.2, top_p=0.9))
        openai_r = _model(srv, reasoning_effort="low")
        await openai_r.generate([ChatMessage.user("hi")])
    first, second = srv.chat_requests
    # Gemini's endpoint reads its options from a body field named extra_body.
    assert first["extra_body"] == {"google": {"thinking_config": {"thinking_budget": 512}}}
    assert first["temperature"] == 0.2 and first["top_p"] == 0.9 and "reasoning_effort" not in first
    assert second["reasoning_effort"] == "low" and "extra_body" not in second


async def test_responses_api_with_low_effort_images_and_usage() -> None:
    reply = ServerReply(text='{"reason": "visible", "grade": 1}', prompt_tokens=300, reasoning_tokens=40)
    with OpenAITestServer([reply]) as srv:
        model = _model(srv, api="responses", reasoning_effort="low", image_format="jpeg", jpeg_quality=90)
        messages = [ChatMessage.system("grade it"), ChatMessage.user("image 1:", _picture())]
        completion = await model.generate(messages, GenerateConfig(max_tokens=4096, json_mode=True))
    assert srv.chat_requests == []
    (body,) = srv.responses_requests
    assert body["reasoning"] == {"effort": "low"} and body["max_output_tokens"] == 4096
    assert body["text"] == {"format": {"type": "json_object"}}
    # Temperature and top-p are not overridden (the paper's judge setting).
    assert "temperature" not in body and "top_p" not in body and "max_tokens" not in body
    assert request_texts(body) == ["grade it", "image 1:"]
    (pil,) = request_images(body)
    assert pil.format == "JPEG" and pil.size == (64, 48)
    assert completion.text == '{"reason": "visible", "grade": 1}' and completion.finish_reason == "stop"
    # Reasoning is inside the Responses API's output_tokens; it is counted once.
    assert completion.usage.input_tokens == 300 and completion.usage.reasoning_tokens == 40
    assert completion.usage.output_tokens == 4 and completion.usage.total_tokens == 344  # 4 words


async def test_a_cut_off_responses_reply_reads_as_length() -> None:
    with OpenAITestServer([ServerReply(text='{"grade":', finish_reason="length")]) as srv:
        completion = await _model(srv, api="responses").generate([ChatMessage.user("x")])
    assert completion.finish_reason == "length" and completion.text == '{"grade":'


def test_bad_decoding_options_are_one_line_errors() -> None:
    with pytest.raises(ConfigError, match="reasoning_effort 'lots'"):
        OpenAICompatModel.from_spec("m", base_url="http://127.0.0.1:1/v1", reasoning_effort="lots")
    with pytest.raises(ConfigError, match="api 'completions'"):
        OpenAICompatModel.from_spec("m", base_url="http://127.0.0.1:1/v1", api="completions")
    with pytest.raises(ConfigError, match="thinking_budget"):
        OpenAICompatModel.from_spec("m", base_url="http://127.0.0.1:1/v1", thinking_budget=-1)
