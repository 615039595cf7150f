"""The OpenAI-compatible test server, driven by the real ``openai`` client."""

from __future__ import annotations

import base64
import io
import time

import openai
import pytest
from PIL import Image as PILImage

from eviseek.testing import OpenAITestServer, ServerReply, decode_data_url, request_images, request_texts


def _client(server: OpenAITestServer, timeout: float = 5.0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=timeout)


def _png_url(w: int, h: int) -> str:
    buf = io.BytesIO()
    PILImage.new("RGB", (w, h), (10, 200, 30)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


async def test_text_reply_is_a_chat_completion_with_usage() -> None:
    with OpenAITestServer([ServerReply(text="a red square", reasoning_tokens=7, prompt_tokens=11)]) as srv:
        reply = await _client(srv).chat.completions.create(
            model="m1", messages=[{"role": "user", "content": "what is it?"}], temperature=0.5
        )
    assert reply.choices[0].message.content == "a red square"
    assert reply.model == "m1"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 3)
    assert reply.usage.completion_tokens_details is not None
    assert reply.usage.completion_tokens_details.reasoning_tokens == 7
    (req,) = srv.requests
    assert req["method"] == "POST" and req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == "Bearer test-key"
    assert req["json"]["temperature"] == 0.5
    assert srv.chat_requests == [req["json"]]


async def test_handler_sees_each_request_and_usage_can_be_left_out() -> None:
    def handler(body: dict) -> ServerReply:
        return ServerReply(text=f"you said {request_texts(body)[-1]}", usage=False)

    with OpenAITestServer(handler) as srv:
        reply = await _client(srv).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "ping"}]
        )
    assert reply.choices[0].message.content == "you said ping"
    assert reply.usage is None


async def test_status_headers_raw_body_and_models_route() -> None:
    replies = [
        ServerReply.error(429, "slow down", headers={"Retry-After": "3"}),
        ServerReply(body="{this is not json"),
    ]
    with OpenAITestServer(replies, models=["a", "b"]) as srv:
        client = _client(srv)
        with pytest.raises(openai.RateLimitError) as info:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert info.value.response.headers["retry-after"] == "3"
        assert "slow down" in str(info.value)
        with pytest.raises(ValueError):  # the client cannot parse the body
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        models = await client.models.list()
    assert [m.id for m in models.data] == ["a", "b"]
    assert [r["method"] for r in srv.requests] == ["POST", "POST", "GET"]


async def test_delay_exceeds_a_client_timeout_and_drop_closes_the_connection() -> None:
    with OpenAITestServer([ServerReply(text="late", delay_s=2.0), ServerReply(drop=True)]) as srv:
        client = _client(srv, timeout=0.2)
        start = time.perf_counter()
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert time.perf_counter() - start < 1.5
        with pytest.raises(openai.APIConnectionError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        closing = time.perf_counter()
    # Closing does not wait for the handler still sleeping on the 2 s delay.
    assert time.perf_counter() - closing < 1.0


async def test_in_flight_requests_are_counted() -> None:
    import asyncio

    with OpenAITestServer(lambda body: ServerReply(text="ok", delay_s=0.2)) as srv:
        client = _client(srv)
        await asyncio.gather(
            *[
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
                for _ in range(4)
            ]
        )
    assert srv.max_in_flight == 4
    assert len(srv.requests) == 4


async def test_image_parts_decode_to_pil_images() -> None:
    with OpenAITestServer(["ok"]) as srv:
        await _client(srv).chat.completions.create(
            model="m",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image_url", "image_url": {"url": _png_url(40, 30)}},
                    ],
                }
            ],
        )
    (img,) = request_images(srv.requests[0]["json"])
    assert img.format == "PNG" and img.size == (40, 30)
    assert img.getpixel((0, 0)) == (10, 200, 30)


def test_image_decoding_rejects_bad_urls() -> None:
    with pytest.raises(ValueError, match="not a base64 data URL"):
        decode_data_url("https://example.com/a.png")
    with pytest.raises(ValueError, match="not valid base64"):
        decode_data_url("data:image/png;base64,@@@")
    wrong_mime = _png_url(4, 4).replace("image/png", "image/jpeg")
    body = {
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": wrong_mime}}]}]
    }
    with pytest.raises(ValueError, match="says image/jpeg but the bytes are PNG"):
        request_images(body)


async def test_running_out_of_replies_fails_the_test() -> None:
    server = OpenAITestServer(["only one"])
    with pytest.raises(AssertionError, match="ran out of replies: it was given 1"), server as srv:
        client = _client(srv)
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.InternalServerError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_reply_rejects_two_bodies() -> None:
    with pytest.raises(ValueError, match="at most one of"):
        ServerReply(text="a", body="b")
