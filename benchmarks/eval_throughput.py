"""Evaluation harness throughput and per-episode overhead.

Episodes here are as cheap as an episode can be (reset a tiny environment, one model call,
answer), so what is measured is the harness: scheduling, environment proxies, scoring, saving
the trajectory (fsynced) and committing the row (SQLite WAL, synchronous=FULL).

1. Throughput: ``--episodes`` episodes at ``--concurrency`` with a scripted model that answers
   after ``--delay`` seconds. The ideal is ``concurrency / delay`` episodes per second; the
   script prints the measured rate as a share of it (goal: at least 85% at concurrency 32),
   with environments in threads and in worker processes.
2. Overhead: the same episodes with no model delay at concurrency 1, through the harness and,
   side by side, as a bare loop calling the same agent, environment and model directly. The
   difference per episode is the harness overhead (excluding model and environment).

    python benchmarks/eval_throughput.py [--episodes 640] [--concurrency 32] [--delay 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from eviseek.envs.base import AsyncEnv, ThreadedEnv, question_from_options
from eviseek.envs.registry import register
from eviseek.eval.config import RunConfig
from eviseek.eval.runner import evaluate, make_env_provider, register_agent
from eviseek.models.base import Model, generate_recorded
from eviseek.models.scripted import ScriptedModel
from eviseek.types import (
    ActionSpec,
    AnswerContract,
    ChatMessage,
    EpisodeResult,
    GenerateConfig,
    Image,
    Observation,
    Question,
    StepResult,
    Trajectory,
)

ENV_ID = "bench/Still-v0"


class StillEnv:
    """A fixed 32x32 view; no actions."""

    env_id = ENV_ID

    def __init__(self) -> None:
        self._image = np.full((32, 32, 3), 120, dtype=np.uint8)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
        q = question_from_options(options)
        arr = self._image.copy()
        arr[0, 0, 0] = hash(q.id if q else "") % 256  # distinct frames, as real episodes have
        return Observation(image=Image.from_array(arr)), {}

    def step(self, action: Any) -> StepResult:
        raise NotImplementedError("the benchmark agent never steps")

    def legal_actions(self) -> list[ActionSpec]:
        return []

    def close(self) -> None:
        pass


register(ENV_ID, StillEnv)


class OneCallAgent:
    """Reset, one model call with the view, answer with the reply."""

    name = "one-call"

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        obs, _ = await env.reset(seed=seed, options={"question": question})
        traj = Trajectory(episode_id=question.id, question_id=question.id, agent=self.name, model=model.name)
        cfg = GenerateConfig(stage="answer", metadata={"options": question.contract.options})
        completion, call = await generate_recorded(model, [ChatMessage.user(obs.image, question.text)], cfg)
        traj.calls.append(call)
        traj.answer_images = [obs.image]
        traj.answer_frame_ids = [obs.frame_id]
        traj.result = EpisodeResult(question_id=question.id, agent=self.name, raw_answer=completion.text)
        return traj


register_agent("one-call", lambda **_: OneCallAgent())


def _model(delay: float) -> ScriptedModel:
    return ScriptedModel(lambda m, c: "yes", name="scripted/bench", delay_s=delay)


def _questions(n: int) -> list[Question]:
    return [
        Question(
            id=f"b{i:05d}",
            text="Is the square grey?",
            contract=AnswerContract(kind="yes_no", options=["yes", "no"]),
            ground_truth="yes",
            env_id=ENV_ID,
        )
        for i in range(n)
    ]


async def _harness(
    n: int, concurrency: int, delay: float, env_workers: int, root: Path
) -> tuple[float, float]:
    """Wall time of the run, and (before it) of starting the env worker processes."""
    run = root / f"run-{concurrency}-{delay}-{env_workers}"
    cfg = RunConfig(
        agents=["one-call"],
        model="scripted/bench",
        dataset="generated",
        concurrency=concurrency,
        env_workers=env_workers,
        plugins=[__file__] if env_workers else [],
    )
    model = _model(delay)
    questions = _questions(n)
    envs = make_env_provider(cfg)
    start = time.perf_counter()
    await envs.start()  # a fixed cost per run, reported apart from the throughput
    startup = time.perf_counter() - start
    start = time.perf_counter()
    out = await evaluate(cfg, run, questions=questions, model=model, envs=envs, progress=False)
    wall = time.perf_counter() - start
    assert out.ran == n and out.failed == 0, (out.ran, out.failed)
    assert out.summary.agents[0].overall.correct == n
    return wall, startup


async def _bare(n: int) -> float:
    """The same episodes without the harness: agent, env and model called in a plain loop."""
    agent, model, env = OneCallAgent(), _model(0.0), ThreadedEnv(StillEnv())
    questions = _questions(n)
    start = time.perf_counter()
    for q in questions:
        await agent.run(env, q, model)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=640)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.5, help="model reply delay in seconds")
    parser.add_argument("--overhead-episodes", type=int, default=300)
    parser.add_argument("--env-workers", type=int, default=2, help="worker processes for the second run")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="eviseek-bench-"))
    try:
        ideal = args.concurrency / args.delay
        print(
            f"throughput: {args.episodes} episodes, concurrency {args.concurrency}, model delay "
            f"{args.delay}s, ideal {ideal:.1f} episodes/s"
        )
        for workers, label in (
            (0, "envs in threads"),
            (args.env_workers, f"{args.env_workers} env processes"),
        ):
            wall, startup = asyncio.run(_harness(args.episodes, args.concurrency, args.delay, workers, root))
            rate = args.episodes / wall
            print(
                f"  {label:18s} {wall:6.2f}s  {rate:6.1f} episodes/s  = {100 * rate / ideal:5.1f}% of ideal"
                f"  (+{startup:.2f}s to start the workers, before the run)"
            )

        n = args.overhead_episodes
        bare = asyncio.run(_bare(n))
        harness, _ = asyncio.run(_harness(n, 1, 0.0, 0, root))
        print(f"overhead: {n} episodes, no model delay, concurrency 1")
        print(f"  bare agent+env+model loop   {1000 * bare / n:7.2f} ms/episode")
        print(f"  through the harness         {1000 * harness / n:7.2f} ms/episode")
        print(
            f"  harness overhead            {1000 * (harness - bare) / n:7.2f} ms/episode "
            "(scoring, trajectory save + fsync, SQLite commit, scheduling)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
