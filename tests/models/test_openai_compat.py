"""The ``openai/`` provider against a real HTTP server on 127.0.0.1 and the real ``openai`` client.

Every test asserts on what the server *received*, not only on what came back.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eviseek.errors import ConfigError, ModelConfigError, ModelError
from eviseek.models import generate_recorded, get_model
from eviseek.models.openai_compat import OpenAICompatModel, fit_pixels
from eviseek.testing import OpenAITestServer, ServerReply, chat_completion, request_images, request_texts
from eviseek.types import ChatMessage, GenerateConfig, Image

KEY = "sk-test-Zq81secretKEY"


def _model(server: OpenAITestServer, **kwargs: Any) -> OpenAICompatModel:
    """A model on ``server`` with tiny backoff delays so retry tests stay fast."""
    opts: dict[str, Any] = {"base_url": server.base_url, "api_key": KEY, "backoff_base_s": 0.01}
    opts.update(kwargs)
    model = get_model("openai/test-vlm", **opts)
    assert isinstance(model, OpenAICompatModel)
    return model


def _ask(text: str = "what colour is it?") -> list[ChatMessage]:
    return [ChatMessage.system("be brief"), ChatMessage.user(text)]


def _gradient(width: int, height: int) -> Image:
    x = np.linspace(0, 255, width, dtype=np.uint8)[None, :, None]
    y = np.linspace(0, 255, height, dtype=np.uint8)[:, None, None]
    arr = np.concatenate(
        [
            np.broadcast_to(x, (height, width, 1)),
            np.broadcast_to(y, (height, width, 1)),
            np.full((height, width, 1), 90, np.uint8),
        ],
        axis=2,
    )
    return Image.from_array(arr)


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- normal replies ----------------------------------------------------------------------------


async def test_normal_reply_usage_latency_and_what_was_sent() -> None:
    reply = ServerReply(text="It is red.", prompt_tokens=42, completion_tokens=9, reasoning_tokens=5)
    with OpenAITestServer([reply]) as srv:
        model = _model(srv)
        cfg = GenerateConfig(
            temperature=0.2,
            top_p=0.9,
            max_tokens=64,
            seed=7,
            stop=["\n\n"],
            json_mode=True,
            stage="answer",
            response_schema={"type": "object"},
            metadata={"options": ["red", "blue"]},
        )
        completion = await model.generate(_ask(), cfg)
    assert completion.text == "It is red."
    assert completion.usage.input_tokens == 42
    # OpenAI's convention: reasoning inside completion_tokens (total = 42 + 9); taken out of output.
    assert completion.usage.output_tokens == 4
    assert completion.usage.reasoning_tokens == 5
    assert completion.usage.total_tokens == 51
    assert completion.finish_reason == "stop"
    assert completion.model == "openai/test-vlm"
    assert 0 < completion.latency_s < 5
    assert completion.notes == []
    (body,) = srv.chat_requests
    assert body["model"] == "test-vlm"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "what colour is it?"}]},
    ]
    assert body["temperature"] == 0.2 and body["top_p"] == 0.9 and body["max_tokens"] == 64
    assert body["seed"] == 7 and body["stop"] == ["\n\n"]
    assert body["response_format"] == {"type": "json_object"}
    # eviseek's own fields never reach the server.
    assert set(body) == {
        "model",
        "messages",
        "temperature",
        "top_p",
        "max_tokens",
        "seed",
        "stop",
        "response_format",
    }
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


async def test_unset_sampling_params_are_not_sent_and_defaults_merge() -> None:
    with OpenAITestServer(["a", "b"]) as srv:
        model = _model(srv, default_config=GenerateConfig(temperature=0.3, max_tokens=10))
        await model.generate(_ask())
        await model.generate(_ask(), GenerateConfig(temperature=0.0))
    first, second = srv.chat_requests
    assert set(first) == {"model", "messages", "temperature", "max_tokens"}
    assert first["temperature"] == 0.3
    assert second["temperature"] == 0.0 and second["max_tokens"] == 10


async def test_usage_the_server_does_not_report_is_unknown_not_zero() -> None:
    with OpenAITestServer([ServerReply(text="ok", usage=False), ServerReply(text="ok")]) as srv:
        model = _model(srv)
        missing = await model.generate(_ask())
        no_details = await model.generate(_ask())
    assert missing.usage.input_tokens is None
    assert missing.usage.output_tokens is None
    assert missing.usage.reasoning_tokens is None
    assert missing.usage.total_tokens is None
    # Token counts reported, reasoning not: the latter stays unknown.
    assert no_details.usage.output_tokens == 1 and no_details.usage.reasoning_tokens is None


async def test_reasoning_reported_on_top_of_the_output_is_added_once() -> None:
    # Gemini's OpenAI-compatible endpoint: thinking tokens are not in completion_tokens, and
    # total_tokens adds them; the paper's total is input + output + reasoning either way.
    body = chat_completion("Red.", prompt_tokens=100, completion_tokens=2)
    body["usage"] = {
        "prompt_tokens": 100,
        "completion_tokens": 2,
        "total_tokens": 100 + 2 + 300,
        "completion_tokens_details": {"reasoning_tokens": 300},
    }
    with OpenAITestServer([ServerReply(json=body)]) as srv:
        completion = await _model(srv).generate(_ask())
    assert completion.usage.output_tokens == 2 and completion.usage.reasoning_tokens == 300
    assert completion.usage.total_tokens == 402


# -- retries -----------------------------------------------------------------------------------


async def test_429_waits_for_retry_after_then_succeeds() -> None:
    replies = [ServerReply.error(429, "rate limited", headers={"Retry-After": "1"}), "fine"]
    with OpenAITestServer(replies) as srv:
        completion = await _model(srv).generate(_ask())
    assert completion.text == "fine"
    first, second = srv.requests
    # The header asked for 1 s; our own backoff would have been ~0.01 s.
    assert 0.95 <= second["time"] - first["time"] < 2.0
    assert "succeeded after 1 retry" in completion.notes


async def test_retry_after_is_capped() -> None:
    replies = [ServerReply.error(429, headers={"Retry-After": "120"}), "fine"]
    with OpenAITestServer(replies) as srv:
        completion = await _model(srv, retry_after_cap_s=0.05).generate(_ask())
    assert completion.text == "fine"
    assert srv.requests[1]["time"] - srv.requests[0]["time"] < 1.0


async def test_500_then_success() -> None:
    with OpenAITestServer([ServerReply.error(500, "boom"), ServerReply.error(503), "recovered"]) as srv:
        completion = await _model(srv).generate(_ask())
    assert completion.text == "recovered"
    assert len(srv.chat_requests) == 3
    # Every attempt sent the same request.
    assert srv.chat_requests[0] == srv.chat_requests[2]


async def test_5xx_until_retries_run_out_raises_model_error() -> None:
    server = OpenAITestServer([ServerReply.error(502, "bad gateway")] * 3)
    with (
        server as srv,
        pytest.raises(ModelError, match=r"3 attempt\(s\), last: HTTP 502: bad gateway") as info,
    ):
        await _model(srv, max_retries=2).generate(_ask())
    assert not isinstance(info.value, ModelConfigError)
    assert len(srv.chat_requests) == 3


async def test_reply_slower_than_the_timeout_is_retried() -> None:
    with OpenAITestServer([ServerReply(text="late", delay_s=1.5), "on time"]) as srv:
        completion = await _model(srv, timeout_s=0.25).generate(_ask())
    assert completion.text == "on time"
    first, second = srv.requests
    # Gave up on the slow reply after about the timeout instead of waiting 1.5 s for it.
    assert 0.2 <= second["time"] - first["time"] < 1.0


async def test_per_call_timeout_overrides_the_model_default() -> None:
    with OpenAITestServer([ServerReply(text="late", delay_s=1.5), "on time"]) as srv:
        model = _model(srv, timeout_s=30)
        completion = await model.generate(_ask(), GenerateConfig(timeout_s=0.25))
    assert completion.text == "on time" and len(srv.chat_requests) == 2


async def test_body_that_is_not_json_is_retried_then_fails_clearly() -> None:
    with OpenAITestServer([ServerReply(body="{oops"), "good"]) as srv:
        completion = await _model(srv).generate(_ask())
    assert completion.text == "good" and len(srv.chat_requests) == 2

    with (
        OpenAITestServer([ServerReply(body="<html>proxy error</html>", content_type="text/html")] * 2) as srv,
        pytest.raises(ModelError, match="not a chat completion"),
    ):
        await _model(srv, max_retries=1).generate(_ask())
    assert len(srv.chat_requests) == 2

    server = OpenAITestServer([ServerReply(body="{oops")] * 2)
    with server as srv, pytest.raises(ModelError, match="not valid JSON"):
        await _model(srv, max_retries=1).generate(_ask())


async def test_dropped_connection_is_retried() -> None:
    with OpenAITestServer([ServerReply(drop=True), "after the drop"]) as srv:
        completion = await _model(srv).generate(_ask())
    assert completion.text == "after the drop"
    assert len(srv.chat_requests) == 2


async def test_connection_refused_says_the_server_is_unreachable() -> None:
    url = f"http://127.0.0.1:{_dead_port()}/v1"
    model = OpenAICompatModel.from_spec(
        "m", base_url=url, api_key=KEY, backoff_base_s=0.01, max_connect_retries=1
    )
    model._client()  # import openai before timing
    start = time.perf_counter()
    with pytest.raises(ModelError, match="unreachable") as info:
        await model.generate(_ask())
    assert url in str(info.value) and "--base-url" in str(info.value)
    assert time.perf_counter() - start < 3


# -- errors that are not retried ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "API key was rejected: check the key in the variable named by --api-key-env"),
        (403, "access denied: check that the API key may use model 'test-vlm'"),
        (404, "check the model name 'test-vlm'"),
        (400, "the request was rejected"),
    ],
)
async def test_client_errors_raise_once_with_what_to_check(status: int, expected: str) -> None:
    server = OpenAITestServer([ServerReply.error(status, f"scripted {status} reason")])
    with server as srv, pytest.raises(ModelConfigError) as info:
        await _model(srv).generate(_ask())
    message = str(info.value)
    assert expected in message
    assert f"HTTP {status}" in message and f"scripted {status} reason" in message
    assert len(message.splitlines()) == 1
    assert len(srv.chat_requests) == 1  # no retry


# -- parameters the server refuses -------------------------------------------------------------


async def test_refused_parameter_is_dropped_retried_once_and_remembered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refusal = ServerReply.error(
        400,
        "Unsupported value: 'temperature' does not support 0.2 with this model. "
        "Only the default (1) value is supported.",
        param="temperature",
    )
    with OpenAITestServer([refusal, "ok", "again"]) as srv:
        model = _model(srv)
        cfg = GenerateConfig(temperature=0.2, top_p=0.9)
        with caplog.at_level(logging.WARNING, logger="eviseek.models.openai"):
            first = await model.generate(_ask(), cfg)
        second = await model.generate(_ask(), cfg)
    sent = srv.chat_requests
    assert len(sent) == 3
    assert sent[0]["temperature"] == 0.2 and sent[0]["top_p"] == 0.9
    assert "temperature" not in sent[1] and sent[1]["top_p"] == 0.9
    assert "temperature" not in sent[2]
    assert first.text == "ok"
    assert first.notes == ["server refused parameter 'temperature'; dropped it and retried once"]
    assert second.notes == ["not sent (refused earlier by the server): temperature"]
    assert any("refused parameter 'temperature'" in r.getMessage() for r in caplog.records)


async def test_refusal_named_only_in_the_message_and_a_second_refusal_is_fatal() -> None:
    # Gemini-style: no "param" field, the name is quoted in the message.
    replies = [
        ServerReply.error(400, 'Invalid JSON payload received. Unknown name "seed": Cannot find field.'),
        ServerReply.error(400, "Invalid JSON payload received. Something else is wrong."),
    ]
    server = OpenAITestServer(replies)
    with server as srv, pytest.raises(ModelConfigError, match="Something else is wrong"):
        await _model(srv).generate(_ask(), GenerateConfig(seed=3, temperature=0.1))
    first, second = srv.chat_requests
    assert first["seed"] == 3 and "seed" not in second and second["temperature"] == 0.1


async def test_400_about_a_value_we_did_not_send_is_not_a_refusal() -> None:
    refusal = ServerReply.error(
        400, "Unsupported parameter: 'top_p' is not supported with this model.", param="top_p"
    )
    with OpenAITestServer([refusal]) as srv, pytest.raises(ModelConfigError, match="top_p"):
        await _model(srv).generate(_ask(), GenerateConfig(temperature=0.5))
    assert len(srv.chat_requests) == 1


async def test_max_tokens_is_renamed_when_the_server_asks_for_max_completion_tokens() -> None:
    refusal = ServerReply.error(
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        param="max_tokens",
    )
    with OpenAITestServer([refusal, "ok"]) as srv:
        completion = await _model(srv).generate(_ask(), GenerateConfig(max_tokens=33))
    first, second = srv.chat_requests
    assert first["max_tokens"] == 33
    assert "max_tokens" not in second and second["max_completion_tokens"] == 33
    assert "max_completion_tokens" in completion.notes[0]


# -- images ------------------------------------------------------------------------------------


async def test_images_are_downscaled_data_urls_in_message_order() -> None:
    big = _gradient(800, 600)
    small = _gradient(40, 30)
    with OpenAITestServer(["seen"]) as srv:
        model = _model(srv, max_pixels=200 * 150)
        msg = ChatMessage.user("first", big, "then", small, "end")
        completion, call = await generate_recorded(model, [msg], GenerateConfig(stage="seek"))
    (body,) = srv.chat_requests
    kinds = [p["type"] for p in body["messages"][0]["content"]]
    assert kinds == ["text", "image_url", "text", "image_url", "text"]
    assert body["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    sent_big, sent_small = request_images(body)
    assert sent_big.format == "PNG" and sent_big.size == (200, 150)
    assert sent_small.size == (40, 30)  # under the budget: never enlarged
    # The small image went through losslessly, pixel for pixel.
    assert np.array_equal(np.asarray(sent_small.convert("RGB")), small.array())
    # The downscaled one is the same picture: left-to-right red ramp, top-to-bottom green ramp.
    arr = np.asarray(sent_big.convert("RGB")).astype(int)
    assert arr[75, 5, 0] < 20 and arr[75, 195, 0] > 235 and arr[5, 100, 1] < 20 and arr[145, 100, 1] > 235
    assert completion.usage.images_sent == 2 and call.usage.images_sent == 2
    assert request_texts(body) == ["first", "then", "end"]


async def test_jpeg_images_keep_the_aspect_ratio() -> None:
    with OpenAITestServer(["seen"]) as srv:
        model = _model(srv, max_pixels=10_000, image_format="jpeg", jpeg_quality=80)
        await model.generate([ChatMessage.user(_gradient(1000, 250), "wide")])
    url = srv.chat_requests[0]["messages"][0]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    (img,) = request_images(srv.chat_requests[0])
    assert img.format == "JPEG" and img.size == (200, 50)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 4_000_000))
def test_fit_pixels_respects_the_budget_and_never_enlarges(w: int, h: int, budget: int) -> None:
    nw, nh = fit_pixels(w, h, budget)
    assert 1 <= nw <= w and 1 <= nh <= h
    if w * h <= budget:
        assert (nw, nh) == (w, h)
    else:
        assert nw * nh <= max(budget, max(nw, nh))  # only a 1-pixel-wide strip may exceed a tiny budget
        if min(nw, nh) >= 20:  # aspect kept to within rounding
            assert abs(nw / nh - w / h) / (w / h) < 0.1


# -- concurrency -------------------------------------------------------------------------------


async def test_concurrency_limit_per_base_url_is_honoured() -> None:
    with OpenAITestServer(lambda body: ServerReply(text="ok", delay_s=0.15)) as srv:
        limited = _model(srv, max_concurrency=3)
        await asyncio.gather(*[limited.generate(_ask()) for _ in range(8)])
        assert srv.max_in_flight == 3
        assert len(srv.chat_requests) == 8
    with OpenAITestServer(lambda body: ServerReply(text="ok", delay_s=0.15)) as srv:
        wide = _model(srv, max_concurrency=8)
        await asyncio.gather(*[wide.generate(_ask()) for _ in range(8)])
        assert srv.max_in_flight > 3  # the limit above was the semaphore, not the server


async def test_models_sharing_a_base_url_share_one_limit(caplog: pytest.LogCaptureFixture) -> None:
    with OpenAITestServer(lambda body: ServerReply(text="ok", delay_s=0.15)) as srv:
        first = _model(srv, max_concurrency=2)
        second = _model(srv, max_concurrency=5)
        with caplog.at_level(logging.WARNING, logger="eviseek.models.openai"):
            await asyncio.gather(*[m.generate(_ask()) for m in (first, second) * 3])
    assert srv.max_in_flight == 2
    warnings = [r.getMessage() for r in caplog.records if "concurrency limit 5" in r.getMessage()]
    assert len(warnings) == 1  # said once, not on every call


# -- keys and configuration --------------------------------------------------------------------


async def test_the_api_key_appears_in_no_log_record_or_error(caplog: pytest.LogCaptureFixture) -> None:
    replies = [
        ServerReply.error(500, f"upstream said the key {KEY} is odd"),
        ServerReply(text=f"echo {KEY[:6]}"),
        ServerReply.error(401, f"Incorrect API key provided: {KEY}"),
    ]
    with caplog.at_level(logging.DEBUG), OpenAITestServer(replies) as srv:
        model = _model(srv)
        _, call = await generate_recorded(model, _ask(), GenerateConfig(temperature=0.0))
        with pytest.raises(ModelConfigError) as info:
            await generate_recorded(model, _ask())
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # it was sent...
    assert KEY not in str(info.value) and "***" in str(info.value)  # ...and is redacted from errors
    assert KEY not in call.model_dump_json()
    assert KEY not in repr(model)
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records)
    assert "retrying" in logged  # the 500 was logged...
    assert KEY not in logged  # ...without the key


def test_local_server_without_a_key_gets_a_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with OpenAITestServer(["ok"]) as srv:
        model = OpenAICompatModel.from_spec("m", base_url=srv.base_url)
        asyncio.run(model.generate(_ask()))
        assert srv.requests[0]["headers"]["authorization"] == "Bearer EMPTY"
    with pytest.raises(ModelConfigError, match="export OPENAI_API_KEY"):
        OpenAICompatModel("gpt-4o-mini")  # OpenAI itself needs a real key


def test_base_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAITestServer(["ok"]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url + "/")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        model = get_model("openai/Qwen/Qwen3-VL-8B-Instruct")
        asyncio.run(model.generate(_ask()))
    assert model.name == "openai/Qwen/Qwen3-VL-8B-Instruct"
    assert srv.chat_requests[0]["model"] == "Qwen/Qwen3-VL-8B-Instruct"
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_bad_settings_say_what_is_wrong() -> None:
    with pytest.raises(ConfigError, match="http:// or https://"):
        OpenAICompatModel.from_spec("m", base_url="localhost:8000/v1")
    with pytest.raises(ConfigError, match="max_concurrency"):
        OpenAICompatModel.from_spec("m", base_url="http://127.0.0.1:1/v1", max_concurrency=0)
    with pytest.raises(ConfigError, match="image_format"):
        OpenAICompatModel.from_spec("m", base_url="http://127.0.0.1:1/v1", image_format="webp")
    with pytest.raises(ConfigError, match="needs a model name"):
        get_model("openai/", base_url="http://127.0.0.1:1/v1")


async def test_a_key_echoed_in_the_reply_is_redacted_from_the_completion_and_its_record() -> None:
    # A server (or a model told the key by a prompt injection) may repeat the key in its reply.
    def echo(body: dict[str, Any]) -> ServerReply:
        return ServerReply(text=f"You sent {KEY}.\nAnswer: A")

    with OpenAITestServer(echo) as srv:
        completion, call = await generate_recorded(_model(srv), _ask())
    assert KEY not in completion.text and "***" in completion.text
    assert completion.text.endswith("Answer: A")  # the rest of the reply is untouched
    assert KEY not in call.model_dump_json()
