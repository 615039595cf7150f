"""Single-model: ESI-Bench's own active agent (the paper's appendix D), rebuilt on the Env protocol.

Every step is one model call that returns a JSON object with an action, a tentative answer, a
short rationale and a self-reported confidence. Each call carries the full text history (actions,
their feedback and the model's earlier replies), the task's reference images, up to five earlier
views and the current view, then the task prompt. The episode ends when the confidence reaches the
threshold after a minimum number of steps, on ``stop``, or when the step budget is spent. A final
answer that does not fit the contract gets one forced-choice call at temperature 0.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.agents.actions import describe_action, parse_action
from eviseek.agents.common import build_config, contract_metadata, finish, resolve_answer, start_episode
from eviseek.agents.esibench_stopping import esibench_min_steps
from eviseek.agents.replies import SingleStepReply
from eviseek.answers.accept import accept_answer
from eviseek.envs.base import AsyncEnv
from eviseek.envs.budget import TABLETOP_BUDGET
from eviseek.models.base import Model
from eviseek.types import Action, ActionSpec, Image, Question, Stage, StepRecord, Trajectory
from eviseek.types.plans import SingleModelPlan

_NO_CUT = 1 << 30
"""A feedback summary limit no real feedback reaches."""


class SingleModelConfig(BaseModel):
    """Settings of the Single-model baseline (defaults from the paper and ESI-Bench)."""

    model_config = ConfigDict(extra="forbid")

    budget: int = Field(TABLETOP_BUDGET, ge=1)
    """Most model calls of an episode, counted as ESI-Bench's loop counts its ``max_steps``: the
    call numbered ``budget`` answers without acting, so an episode executes at most
    ``budget - 1`` actions (29 actions in 30 calls)."""
    confidence_threshold: float = Field(0.8, ge=0.0, le=1.0)
    min_steps: int | None = Field(None, ge=0)
    """A confident reply may end the episode from this call on, counted as ESI-Bench's loop counts
    its ``min_steps`` (1-based call numbers: 3 means after 2 executed actions). ``None``:
    ESI-Bench's per-subcategory rule (3 where its task module honours the minimum, else 0; see
    :mod:`eviseek.agents.esibench_stopping`)."""
    require_valid_answer: bool = True
    """Confidence-based stopping also needs a tentative answer that fits the contract."""
    history_images: int = Field(5, ge=0)
    """Earlier views sent with each call, besides the current one."""
    default_action: str = "move_forward"
    """Executed when a reply cannot be read or names no legal action (if legal)."""
    temperature: float = Field(0.2, ge=0.0)
    top_p: float = Field(0.9, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)
    forced_choice: bool = True
    reference_images: bool = True
    esibench_hooks: bool = False
    """Use ESI-Bench's own per-task prompts, reading, stopping and forced choice, called from its
    checkout (``esibench_root`` or ``$ESI_BENCH_ROOT``), to reproduce the official baseline."""
    esibench_root: str | None = None


class SingleModelAgent:
    """The perception-action loop with confidence-based stopping."""

    kind = "single-model"

    def __init__(
        self, config: SingleModelConfig | None = None, *, name: str = "single-model", **overrides: Any
    ):
        self.config = build_config(SingleModelConfig, config, overrides)
        self.name = name

    def _fallback_action(self, legal: list[ActionSpec]) -> Action | None:
        names = [s.name for s in legal if not s.params and s.kind != "control"]
        if self.config.default_action in names:
            return Action(name=self.config.default_action)
        return Action(name=names[0]) if names else None

    # Long (about 140 lines) on purpose: one decide / stop / act loop (the phases are marked inside),
    # whose state (views so far, an action's motion frames, the text history, the last answer and its
    # images, the legal actions, why it ended) every phase reads and writes. Split into methods, that
    # state would travel as ten arguments or live on the agent object instead of the episode.
    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Run one episode and return its trajectory."""
        if self.config.esibench_hooks:
            from eviseek.agents.single_model_esibench import run_with_esibench_hooks

            return await run_with_esibench_hooks(self, env, question, model, seed=seed)
        cfg = self.config
        min_steps = (
            cfg.min_steps
            if cfg.min_steps is not None
            else esibench_min_steps(question.subcategory, question.family)
        )
        started = time.perf_counter()
        plan = SingleModelPlan(mode="active")
        obs, traj, caller = await start_episode(
            self.name, self.kind, cfg, env, question, model, seed=seed, plan=plan
        )
        refs = list(question.reference_images) if cfg.reference_images else []
        # (step index, image, frame id) of every view so far; index 0 is the initial view.
        views: list[tuple[int, Image, int]] = [(0, obs.image, obs.frame_id)]
        history: list[str] = []
        last_answer: str | None = None
        last_images: list[Image] = [*refs, obs.image]
        last_frames: list[int] = [*([-1] * len(refs)), obs.frame_id]
        ended_by = "budget"
        env_over = False
        legal = await env.legal_actions()
        decision = 0
        # The last action's frames (a slide): the next call is its answer call, on them.
        motion: list[tuple[int, Image, int]] = []
        while True:
            step = len(traj.steps)
            previous = views[-1 - cfg.history_images : -1] if cfg.history_images else []
            if motion:
                # Paper app. E: the put invokes an answer call on the physics-frame sequence.
                previous = motion
            current = views[-1]
            images = [*refs, *(v[1] for v in previous), current[1]]
            frames = [*([-1] * len(refs)), *(v[2] for v in previous), current[2]]
            action_lines = [describe_action(s) for s in legal if s.kind != "control"]
            parsed, _completion = await caller.ask_rendered(
                Stage.SINGLE_STEP,
                SingleStepReply,
                fallback=f"execute {cfg.default_action}",
                at_step=step,
                metadata={
                    **contract_metadata(question),
                    "legal_actions": [s.model_dump() for s in legal],
                    "step": step,
                    "budget": cfg.budget,
                    "frame_ids": frames,
                    "guidance": question.guidance,
                    "motion_frames": len(motion) + 1 if motion else 0,
                },
                context={
                    "question": question,
                    "contract": question.contract.describe(),
                    "history": history,
                    "references": refs,
                    "previous": [{"step": v[0], "image": v[1]} for v in previous],
                    "motion": bool(motion),
                    "current": current[1],
                    "step": step,
                    "budget": cfg.budget,
                    "min_steps": min_steps,
                    "actions": action_lines,
                },
            )
            decision += 1
            post_action, motion = bool(motion), []
            reply = parsed.value
            last_images, last_frames = images, frames
            if reply is not None and reply.answer:
                last_answer = reply.answer
            # --- stopping rule ---------------------------------------------------------------
            if reply is not None:
                said_stop = isinstance(reply.action, str) and reply.action.strip().lower().strip("`\"'") in (
                    "stop",
                    "answer",
                    "finish",
                    "done",
                )
                valid = accept_answer(question, reply.answer) is not None
                # The answer call on an action's frames may end the episode before min_steps,
                # as ESI-Bench's post-action query does.
                # ESI-Bench numbers its calls from 1 and compares that number with min_steps and
                # max_steps; ``step`` counts the actions executed before this call.
                call = step + 1
                confident = reply.confidence >= cfg.confidence_threshold and (
                    call >= min_steps or post_action
                )
                if said_stop:
                    ended_by = "stop"
                    break
                if confident and (valid or not cfg.require_valid_answer):
                    ended_by = "action_frames" if post_action else "confidence"
                    break
            if step + 1 >= cfg.budget or env_over:
                break  # the reply above saw the last view: its answer is the final one
            # --- act ---------------------------------------------------------------------------
            action: Action | None
            if reply is None:
                action = self._fallback_action(legal)
                note = "reply unreadable"
            else:
                action, why = parse_action(reply.action, legal)
                note = why or ""
                if action is None:
                    action = self._fallback_action(legal)
                    traj.log(
                        "invalid_action",
                        f"{why}; executing {action.name if action else 'nothing'} instead",
                        stage=Stage.SINGLE_STEP,
                        at_step=step,
                        data={"reply_action": str(reply.action)[:120]},
                    )
            if action is None:
                traj.log("no_action", "no legal camera action to fall back on; ending", at_step=step)
                break
            result = await env.step(action)
            traj.steps.append(StepRecord.from_step(step + 1, action, result, decision=decision))
            views.append((step + 1, result.observation.image, result.observation.frame_id))
            motion = [(step + 1, f.image, f.frame_id) for f in result.observation.action_frames]
            # The whole result goes into the text history: the 220-character cut is EviSeek's own
            # presentation of the shared feedback (paper app. E), not the benchmark's.
            history.append(_history_line(step + 1, action, result.feedback.summary(_NO_CUT), reply, note))
            if any(s.name == action.name and s.kind == "manipulation" for s in legal):
                legal = await env.legal_actions()  # object choices can change after manipulation
            if result.terminated or result.truncated:
                # The environment ended the episode: one more reply on the last view, no more acting.
                env_over, ended_by = True, "env"
        plan.ended_by = ended_by
        answer, raw = await resolve_answer(
            caller,
            question,
            last_answer,
            images=last_images,
            context="\n".join(history[-10:]),
            at_step=len(traj.steps),
            enabled=cfg.forced_choice,
            stop_reason="max_steps" if ended_by == "budget" else ended_by,
        )
        traj.answer_images = list(last_images)
        traj.answer_frame_ids = list(last_frames)
        finish(traj, question, answer=answer, raw_answer=raw, mode="active", started=started)
        return traj


def _history_line(step: int, action: Action, feedback: str, reply: SingleStepReply | None, note: str) -> str:
    if reply is None:
        said = "your reply could not be read, so the default action ran"
    else:
        said = f"you said answer={reply.answer!r}, confidence={reply.confidence:.2f}"
        if reply.reasoning:
            said += f", reasoning: {reply.reasoning}"
    extra = f" ({note})" if note else ""
    return f"Step {step}: action={action.text()}{extra} result=[{feedback}]; {said}"
