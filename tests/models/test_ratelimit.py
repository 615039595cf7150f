"""Adaptive request limits per base URL: a 429 storm slows every request down, none fails."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from eviseek.errors import ModelError
from eviseek.models import get_model
from eviseek.models.openai_compat import OpenAICompatModel, request_limit
from eviseek.models.ratelimit import AdaptiveLimit
from eviseek.testing import OpenAITestServer, ServerReply
from eviseek.types import ChatMessage


async def test_limit_halves_once_per_burst_and_grows_back() -> None:
    limit = AdaptiveLimit(16)
    tickets = [await limit.acquire() for _ in range(16)]
    assert limit.in_flight == 16
    blocked = asyncio.ensure_future(limit.acquire())
    await asyncio.sleep(0.01)
    assert not blocked.done()  # at the cap
    for t in tickets[:12]:  # a burst of 429s for requests sent before the cut: one cut
        await limit.release(t, throttled=True)
    assert limit.allowed == 8 and limit.cuts == 1
    later = await asyncio.wait_for(blocked, 1)  # sent after the cut
    await limit.release(later, throttled=True)
    assert limit.allowed == 4 and limit.cuts == 2
    for t in tickets[12:]:
        await limit.release(t)  # successes: about +1 per `limit` of them
    assert limit.limit == pytest.approx(4.96, abs=0.05)
    for _ in range(200):
        await limit.release(await limit.acquire())
    assert limit.allowed == 16 and limit.lowest == 4


async def test_a_pause_holds_every_new_request() -> None:
    limit = AdaptiveLimit(4)
    t = await limit.acquire()
    await limit.release(t, throttled=True, pause_s=0.3)
    start = time.monotonic()
    await limit.release(await limit.acquire())
    assert 0.28 <= time.monotonic() - start < 1.0


def _ask() -> list[ChatMessage]:
    return [ChatMessage.user("is it red?")]


async def test_a_429_storm_slows_the_run_and_fails_no_request() -> None:
    storm = 24  # the first 24 requests are refused with 429
    lock = threading.Lock()
    state: dict[str, Any] = {"in_flight": 0, "peak_after_storm": 0, "throttled": 0, "ok": 0}

    def handler(request: dict[str, Any]) -> Any:
        with lock:
            if state["throttled"] < storm:
                state["throttled"] += 1
                return ServerReply.error(429, "slow down")
            state["in_flight"] += 1
            state["peak_after_storm"] = max(state["peak_after_storm"], state["in_flight"])
        time.sleep(0.05)  # a fixed-latency model
        with lock:
            state["in_flight"] -= 1
            state["ok"] += 1
        return "yes"

    with OpenAITestServer(handler) as srv:
        model = get_model(
            "openai/m",
            base_url=srv.base_url,
            api_key="k",
            max_concurrency=16,
            max_retries=1,  # 429s must not use these up
            backoff_base_s=0.1,
        )
        assert isinstance(model, OpenAICompatModel)
        started = time.monotonic()
        replies = await asyncio.gather(*(model.generate(_ask()) for _ in range(48)))
        elapsed = time.monotonic() - started
        limit = request_limit(srv.base_url, 16)
    assert [r.text for r in replies] == ["yes"] * 48 and state["ok"] == 48
    # Each wave of 429s cut the whole server's limit once: 16 -> 8 -> 4 (or lower).
    assert limit.cuts >= 2 and limit.lowest <= 4, (limit.cuts, limit.lowest)
    # It came back up: after the storm, requests overlapped again.
    assert state["peak_after_storm"] >= 3
    assert elapsed < 20


async def test_an_endless_storm_fails_after_the_throttle_budget() -> None:
    with OpenAITestServer(lambda _: ServerReply.error(429)) as srv:
        model = get_model(
            "openai/m", base_url=srv.base_url, api_key="k", max_throttled_s=0.3, backoff_base_s=0.05
        )
        with pytest.raises(ModelError, match=r"kept answering 429 \(rate limited\)"):
            await model.generate(_ask())
