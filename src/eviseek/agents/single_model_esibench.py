"""Single-model with ESI-Bench's own per-task prompts, reading, stopping and forced choice.

With ``SingleModelConfig.esibench_hooks`` on, each call is assembled by the official runner's
``collect_contents`` around the task's own system prompt, each reply is read by the task's
``parse_model_output``, the episode stops by the task's ``should_stop``, and the final answer comes
from the task's ``resolve_final_answer`` with its forced-choice prompt when the task asks for it
(at temperature 0), all called from the ESI-Bench checkout at run time (``$ESI_BENCH_ROOT``).
This reproduces the official baseline through eviseek's runner, model providers and records.
What stays eviseek's: the environment (any Env; on ESI-Bench, the bridge), the model call and its
record, and one system line asking for a JSON reply. A reply that is not JSON falls back to
``move_forward`` with an abstention, as the official runner does.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from eviseek.agents.common import finish, start_episode
from eviseek.agents.esibench_stopping import ESIBENCH_MIN_STEPS
from eviseek.envs.base import AsyncEnv, task_hooks
from eviseek.models.base import Model
from eviseek.types import Action, ActionSpec, ChatMessage, Image, Question, StepRecord, Trajectory
from eviseek.types.plans import ESIBenchTurn, SingleModelPlan

_SYSTEM = "Reply with a single JSON object and no other text."
_FALLBACK = {"action": "move_forward", "answer": "not sure", "confidence": 0.0, "reasoning": "reply not JSON"}


class AnyJSONReply(BaseModel):
    """Any JSON object: the task's own reader decides what its fields mean."""

    model_config = ConfigDict(extra="allow")


def _message(items: list[str | Path]) -> ChatMessage:
    parts: list[str | Image] = [Image.open(i) if isinstance(i, Path) else i for i in items]
    return ChatMessage.user(*parts)


def _to_action(command: str, legal: list[ActionSpec]) -> Action:
    names = {s.name for s in legal}
    text = command.strip()
    if text in names and not next(s for s in legal if s.name == text).params:
        return Action(name=text)
    # Anything else is the task's own phrase ("pick up the mug", "pour A into B"): it goes to the
    # task as written, as the official runner passes it. The bridge reads a free phrase from
    # physical(command=...) whether or not it offers that action; the task answers a phrase it
    # does not know with a failed feedback.
    return Action(name="physical", args={"command": text})


# Long because it replays ESI-Bench's own episode loop step for step (save the view, ask with the
# benchmark's prompt, read, stop rule, act, record the turn in its history form), then its forced
# choice; keeping the sequence in one place is what makes it comparable with the official code.
async def run_with_esibench_hooks(
    agent: Any, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0
) -> Trajectory:
    """One Single-model episode driven by the question's ESI-Bench task hooks."""
    cfg = agent.config
    started = time.perf_counter()
    hooks = task_hooks(
        "esibench",
        question,
        cfg.esibench_root,
        max_steps=cfg.budget,
        min_steps=cfg.min_steps if cfg.min_steps is not None else ESIBENCH_MIN_STEPS,  # its own default
        threshold=cfg.confidence_threshold,
    )
    plan = SingleModelPlan(mode="active", prompts="esibench")
    obs, traj, caller = await start_episode(
        agent.name,
        agent.kind,
        cfg,
        env,
        question,
        model,
        seed=seed,
        plan=plan,
    )
    folder = Path(tempfile.mkdtemp(prefix="esibench-views-"))
    references: list[Path] = []
    if cfg.reference_images:
        for i, ref in enumerate(question.reference_images):
            references.append(folder / f"reference_{i}.png")
            ref.to_pil().save(references[-1])
    history: list[dict[str, Any]] = []
    legal = await env.legal_actions()
    stop_reason, current, image = "max_steps", obs, folder / "step_001.png"
    for step in range(1, cfg.budget + 1):
        image = folder / f"step_{step:03d}.png"
        current.image.to_pil().save(image)
        contents = hooks.contents(image, history, hooks.system_prompt(), references)
        parsed_reply, _ = await caller.ask(
            "single_step",
            [ChatMessage.system(_SYSTEM), _message(contents)],
            AnyJSONReply,
            fallback="move_forward, answer not sure",
            at_step=step - 1,
        )
        reply = parsed_reply.value.model_dump() if parsed_reply.value is not None else dict(_FALLBACK)
        parsed = hooks.read(reply)
        stop, why = hooks.should_stop(parsed, history, step)
        entry: dict[str, Any] = {
            "step": step,
            "action": parsed.get("action"),
            "answer": parsed.get("answer"),
            "confidence": float(parsed.get("confidence") or 0.0),
            "reasoning": parsed.get("reasoning"),
            "image": image.name,
        }
        history.append(entry)
        if stop:
            stop_reason = why
            break
        action = _to_action(str(parsed.get("action") or "move_forward"), legal)
        result = await env.step(action)
        entry["action_result"] = {
            "operation": result.feedback.operation,
            "success": result.feedback.success,
            "reason": result.feedback.reason,
        }
        traj.steps.append(StepRecord.from_step(len(traj.steps) + 1, action, result, decision=step))
        current = result.observation
        if any(s.name == action.name and s.kind == "manipulation" for s in legal):
            legal = await env.legal_actions()
        if result.terminated or result.truncated:
            stop_reason = "env"
            break
    answer, _ = hooks.final_answer(history)
    if hooks.needs_forced_choice(answer, stop_reason):
        contents = hooks.contents(image, history, hooks.forced_choice_prompt(), references)
        forced, _ = await caller.ask(
            "forced_choice",
            [ChatMessage.system(_SYSTEM), _message(contents)],
            AnyJSONReply,
            fallback="keep the abstention",
            at_step=len(traj.steps),
            temperature=0.0,
            top_p=1.0,
        )
        reply = forced.value.model_dump() if forced.value is not None else {"answer": "not sure"}
        answer = hooks.read({"action": "stop", "confidence": 0.0, **reply}).get("answer", "not sure")
        stop_reason += "_forced_choice"
    plan.ended_by = stop_reason
    plan.esibench_history = [ESIBenchTurn.model_validate(turn) for turn in history]
    traj.answer_images = [current.image]
    traj.answer_frame_ids = [current.frame_id]
    text = None if answer is None else str(answer)
    finish(traj, question, answer=text, raw_answer=text, mode="active", started=started)
    return traj
