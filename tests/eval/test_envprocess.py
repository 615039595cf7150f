"""Environment worker processes: a call past its timeout, and how fast a pool stops."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from eviseek.errors import EnvError
from eviseek.eval.envprocess import ProcessEnvProvider
from eviseek.types import Action
from tests.eval.toy_plugin import make_questions

PLUGIN = str(Path(__file__).with_name("toy_plugin.py"))


async def test_a_call_past_its_timeout_fails_and_its_worker_restarts() -> None:
    slow, fast = make_questions(2, special={"q000": {"scene": {"step_delay_s": 30.0}}})
    pool = ProcessEnvProvider(1, plugins=[PLUGIN], call_timeout_s=1.0)
    await pool.start()
    try:
        env = await pool.lease(slow)
        await env.reset(seed=0, options={"question": slow})
        old_pid = env.worker.process.pid  # type: ignore[attr-defined]
        started = time.perf_counter()
        with pytest.raises(EnvError, match=r"toy/Reveal-v0.step took longer than 1s; .* was restarted"):
            await env.step(Action(name="look"))
        assert time.perf_counter() - started < 10
        await pool.release(env, healthy=False)
        # The next lease gets a fresh worker, which answers at once.
        env = await pool.lease(fast)
        obs, _ = await env.reset(seed=0, options={"question": fast})
        result = await env.step(Action(name="look"))
        assert result.observation.frame_id == 1 and obs.frame_id == 0
        assert env.worker.process.pid != old_pid and pool.restarts == 1  # type: ignore[attr-defined]
        await pool.release(env, healthy=True)
    finally:
        await pool.close()


async def test_a_cancelled_call_leaves_the_worker_serving_the_next() -> None:
    import asyncio

    slow, fast = make_questions(2, special={"q000": {"scene": {"step_delay_s": 0.5}}})
    pool = ProcessEnvProvider(1, plugins=[PLUGIN], call_timeout_s=30.0)
    await pool.start()
    try:
        env = await pool.lease(slow)
        await env.reset(seed=0, options={"question": slow})
        task = asyncio.create_task(env.step(Action(name="look")))
        await asyncio.sleep(0.1)
        task.cancel()  # an episode timeout: the reply that comes later is dropped
        with pytest.raises(asyncio.CancelledError):
            await task
        other = await pool.lease(fast)
        obs, _ = await other.reset(seed=0, options={"question": fast})
        assert obs.frame_id == 0 and pool.restarts == 0
        await pool.release(env, healthy=False)
        await pool.release(other, healthy=True)
    finally:
        await pool.close()


async def test_stopping_the_pool_ends_its_workers_at_once() -> None:
    pool = ProcessEnvProvider(2, plugins=[PLUGIN])
    await pool.start()
    questions = make_questions(4)
    envs = [await pool.lease(q) for q in questions]
    for env, q in zip(envs, questions, strict=True):
        await env.reset(seed=0, options={"question": q})
        await pool.release(env, healthy=True)
    processes = [w.process for w in pool._workers if w is not None]
    started = time.perf_counter()
    await pool.close()
    # Workers skip the interpreter's teardown once their environments are closed.
    assert time.perf_counter() - started < 5
    assert [p.returncode for p in processes] == [0, 0]


async def test_frames_arrive_as_png_and_decode_to_the_pixels_the_env_made() -> None:
    from eviseek.eval.envpool import ThreadEnvProvider

    (question,) = make_questions(1)
    frames = {}
    for name, pool in (("process", ProcessEnvProvider(1, plugins=[PLUGIN])), ("local", ThreadEnvProvider())):
        await pool.start()
        try:
            env = await pool.lease(question)
            obs, _ = await env.reset(seed=0, options={"question": question})
            step = await env.step(Action(name="look"))
            frames[name] = [obs.image, step.observation.image]
            await pool.release(env, healthy=True)
        finally:
            await pool.close()
    for sent, made in zip(frames["process"], frames["local"], strict=True):
        # The worker kept the pixels and sent the frame's PNG and hash: a few KB, not H x W x 3.
        assert sent.loaded and sent.sha256 is not None and sent._pixels is None
        assert sent.digest() == made.digest()
        assert (sent.array() == made.array()).all()
        assert sent.encoded("png") == made.encoded("png")
