"""Agent framework overhead, and prompt cost of EviSeek versus Single-model on one trajectory.

Run: ``python benchmarks/agent_overhead.py`` (``--quick`` for fewer episodes).

1. Framework time per decision: whole episodes with a zero-latency scripted model on an
   environment called inline (no worker thread). Time inside ``Model.generate`` and inside the
   environment's methods is measured and subtracted; what is left is the agent itself (prompt
   rendering, reply parsing, intent compilation, records). Goal: under 2 ms per decision.
   Everything runs in one thread, so times are that thread's CPU time (``time.thread_time``):
   other processes on a shared machine do not inflate them. The median of several batches is
   reported.
2. Prompt cost on the same atomic-action trajectory: EviSeek executes a scripted plan of intents
   on the PyBullet tabletop (Linear Alignment); Single-model is scripted to execute exactly the
   same atomic actions, one per call, then answers. Both replies carry short rationales of the
   same length. Reported: calls, prompt words (the scripted model's token count: whitespace
   words of the text parts) and images per episode, plus an estimate of prompt tokens with
   images priced at Qwen-VL's rate for the frame size (one token per 28x28 pixels) and text at
   1.3 tokens per word. All numbers come from one run, side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.agents helpers

from eviseek.agents import make_agent
from eviseek.models import ScriptedModel
from eviseek.types import Action, ChatMessage, Completion, GenerateConfig, Question

REASON = "The current view leaves part of the layout hidden so another angle should help settle it."


class TimedModel:
    """Wraps a model and adds up the time spent inside ``generate``."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.calls = 0

    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None
    ) -> Completion:
        t0 = time.thread_time()
        try:
            return await self.inner.generate(messages, config)
        finally:
            self.seconds += time.thread_time() - t0
            self.calls += 1


class InlineEnv:
    """An async view of a synchronous env that calls it inline and times every call."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.env_id = env.env_id
        self.seconds = 0.0

    def _timed(self, fn: Any, *args: Any, **kw: Any) -> Any:
        t0 = time.thread_time()
        try:
            return fn(*args, **kw)
        finally:
            self.seconds += time.thread_time() - t0

    async def reset(self, **kw: Any) -> Any:
        return self._timed(self.env.reset, **kw)

    async def step(self, action: Action) -> Any:
        return self._timed(self.env.step, action)

    async def legal_actions(self) -> Any:
        return self._timed(self.env.legal_actions)

    async def close(self) -> None:
        self._timed(self.env.close)


# --- the shared trajectory -------------------------------------------------------------------------

PLAN = {
    1: [{"intent": "RISE_TOPDOWN", "args": {"degrees": 45}, "reasoning": REASON}],
    2: [
        {
            "intent": "ORBIT",
            "target": "cube",
            "args": {"direction": "right", "steps": 2},
            "reasoning": REASON,
        },
        {"intent": "SWEEP", "args": {"direction": "left", "turns": 3}, "reasoning": REASON},
    ],
    3: [{"intent": "RETREAT_WIDE", "args": {"steps": 2}, "reasoning": REASON}],
}


def eviseek_replies() -> Any:
    used: dict[int, int] = {}

    def reply(messages: Sequence[ChatMessage], cfg: GenerateConfig) -> str:
        stage = cfg.stage
        if stage == "demands":
            return json.dumps(
                {
                    "demands": [
                        {"text": "all three objects seen together from above"},
                        {"text": "the middle object's offset seen from the side"},
                    ]
                }
            )
        if stage == "plan":
            return json.dumps(
                {
                    "subtasks": [
                        {"goal": "an overhead view of the three objects", "demand": 1},
                        {"goal": "a side view along the line of objects", "demand": 2},
                        {"goal": "a wide view that shows all objects at once", "demand": 1},
                    ]
                }
            )
        if stage == "seek":
            sid = cfg.metadata["subtask"]["id"]
            i = used.get(sid, 0)
            used[sid] = i + 1
            items = PLAN.get(sid, [])
            return json.dumps(items[i] if i < len(items) else {"intent": "DONE", "reasoning": REASON})
        if stage == "keep":
            if cfg.metadata.get("purpose") == "track":
                return json.dumps({"visible": True, "note": "still in view"})
            return json.dumps({"keep": True, "frames": [], "note": "shows the layout of the three objects"})
        return json.dumps({"answer": "yes", "reasoning": REASON})

    return reply


def single_model_replies(actions: list[str]) -> Any:
    def reply(messages: Sequence[ChatMessage], cfg: GenerateConfig) -> str:
        step = int(cfg.metadata["step"])
        if step < len(actions):
            return json.dumps(
                {"action": actions[step], "reasoning": REASON, "answer": "yes", "confidence": 0.5}
            )
        return json.dumps({"action": "stop", "reasoning": REASON, "answer": "yes", "confidence": 0.9})

    return reply


def episode_cost(traj: Any) -> dict[str, Any]:
    words = sum(c.usage.input_tokens or 0 for c in traj.calls)
    images = sum(c.usage.images_sent for c in traj.calls)
    return {
        "steps": len(traj.steps),
        "calls": len(traj.calls),
        "prompt_words": words,
        "images": images,
        "images_in_answer": len(traj.answer_images),
    }


async def compare_costs(width: int, height: int) -> None:
    from eviseek.envs.tabletop import TabletopEnv, sample_question

    question = sample_question(3, subcategories=["linear_alignment"], render_images=False)
    env = TabletopEnv(width=width, height=height)
    try:
        evi = await make_agent("eviseek").run(InlineEnv(env), question, ScriptedModel(eviseek_replies()))
        actions = [s.action.name for s in evi.steps]
        single = await make_agent("single-model").run(
            InlineEnv(env), question, ScriptedModel(single_model_replies(actions))
        )
    finally:
        env.close()
    assert [s.action.name for s in single.steps] == actions, "the two agents must share one trajectory"
    per_image = math.ceil(width / 28) * math.ceil(height / 28)
    rows = {"Single-model": episode_cost(single), "EviSeek": episode_cost(evi)}
    print(
        f"\nPrompt cost on one shared trajectory ({len(actions)} atomic actions, tabletop {width}x{height}):"
    )
    print(
        f"{'agent':<14}{'steps':>6}{'calls':>7}{'prompt words':>14}{'images':>8}{'answer imgs':>13}"
        f"{'est. tokens':>13}"
    )
    est = {}
    for name, r in rows.items():
        est[name] = r["prompt_words"] * 1.3 + r["images"] * per_image
        print(
            f"{name:<14}{r['steps']:>6}{r['calls']:>7}{r['prompt_words']:>14}{r['images']:>8}"
            f"{r['images_in_answer']:>13}{est[name]:>13.0f}"
        )
    s, e = rows["Single-model"], rows["EviSeek"]
    print(
        f"EviSeek / Single-model: prompt words {e['prompt_words'] / s['prompt_words']:.2f}, "
        f"images {e['images'] / s['images']:.2f}, calls {e['calls'] / s['calls']:.2f}, "
        f"estimated prompt tokens {est['EviSeek'] / est['Single-model']:.2f} "
        f"({100 * (1 - est['EviSeek'] / est['Single-model']):.0f}% fewer; image = {per_image} tokens)"
    )


# --- framework overhead ---------------------------------------------------------------------------


def grid_question() -> Question:
    from eviseek.types import AnswerContract

    return Question(
        id="bench",
        text="Is the red cube to the left of the blue box?",
        contract=AnswerContract(kind="option", options=["yes", "no"]),
        guidance="Look from above.",
    )


async def overhead_batches(spec: str, episodes: int, batches: int) -> dict[str, float]:
    """:func:`overhead` over several batches; the batch with the median ms/decision."""
    runs = sorted(
        [await overhead(spec, episodes) for _ in range(batches)], key=lambda r: r["ms_per_decision"]
    )
    return runs[len(runs) // 2]


async def overhead(spec: str, episodes: int) -> dict[str, float]:
    from tests.agents.gridworld import GridWorld

    question = grid_question()
    total = model_s = env_s = 0.0
    calls = decisions = steps = 0
    for _ in range(episodes):
        actions = ["move_up", "turn_down", "turn_left", "move_forward", "turn_right", "move_left"] * 2
        replies = single_model_replies(actions) if spec == "single-model" else eviseek_replies()
        model = TimedModel(ScriptedModel(replies))
        env = InlineEnv(GridWorld())
        t0 = time.thread_time()
        traj = await make_agent(spec).run(env, question, model)
        total += time.thread_time() - t0
        model_s += model.seconds
        env_s += env.seconds
        calls += model.calls
        steps += len(traj.steps)
        decisions += sum(1 for c in traj.calls if c.stage in ("seek", "single_step"))
    framework = total - model_s - env_s
    return {
        "episodes": episodes,
        "calls": calls / episodes,
        "decisions": decisions / episodes,
        "steps": steps / episodes,
        "ms_per_call": 1000 * framework / calls,
        "ms_per_decision": 1000 * framework / decisions,
        "ms_episode": 1000 * framework / episodes,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer episodes")
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    args = parser.parse_args()
    episodes, batches = (5, 3) if args.quick else (20, 5)
    await overhead("eviseek", 2)  # warm-up: templates compiled, schemas cached, imports done
    await overhead("single-model", 2)
    print(
        f"Framework CPU time excluding model and environment (median of {batches} batches of "
        f"{episodes} episodes, grid world):"
    )
    print(
        f"{'agent':<14}{'calls/ep':>9}{'decisions/ep':>14}{'steps/ep':>10}{'ms/decision':>13}{'ms/call':>9}"
    )
    for spec in ("eviseek", "single-model"):
        r = await overhead_batches(spec, episodes, batches)
        print(
            f"{spec:<14}{r['calls']:>9.1f}{r['decisions']:>14.1f}{r['steps']:>10.1f}"
            f"{r['ms_per_decision']:>13.2f}{r['ms_per_call']:>9.2f}"
        )
    print(
        "(a decision is a seek call for EviSeek and a step call for Single-model; ms/decision charges all "
        "framework time of the episode, planning, keeping and answering included, to the decisions)"
    )
    await compare_costs(args.width, args.height)


if __name__ == "__main__":
    asyncio.run(main())
