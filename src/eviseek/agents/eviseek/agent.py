"""The EviSeek agent: demands, a fixed acquisition plan, intent-level seeking, selective retention.

One episode runs: (optional triage) -> demands -> plan -> for each subtask: seek an intent,
compile it into atomic actions, execute them (each one step), let the keeper retain what matters,
until the seeker says DONE or BLOCKED or the subtask times out -> (optional coverage check) ->
next subtask -> answer from the evidence board when the plan is done or the budget is spent.
"""

from __future__ import annotations

import time
from typing import Any

from eviseek.agents.common import build_config, finish, resolve_answer, start_episode
from eviseek.agents.eviseek.answerer import answer_episode, answer_from_motion, feedback_note, informative
from eviseek.agents.eviseek.board import EvidenceBoard
from eviseek.agents.eviseek.config import EviSeekConfig, EviSeekNavConfig
from eviseek.agents.eviseek.control import coverage_check, triage
from eviseek.agents.eviseek.coverage_control import run_with_coverage_control
from eviseek.agents.eviseek.curator import curate, keep_current
from eviseek.agents.eviseek.intents import TRACKING_INTENTS, CompiledIntent, IntentLibrary
from eviseek.agents.eviseek.keeper import review, target_visible
from eviseek.agents.eviseek.planner import Subtask, demands_from_reply, plan_from_reply
from eviseek.agents.eviseek.pose import PoseTracker, describe_pose
from eviseek.agents.eviseek.seeker import BLOCKED, DONE, SeekDecision, decision_record, seek
from eviseek.agents.eviseek.state import Episode, WorkingMemory
from eviseek.agents.replies import DemandsReply, PlanReply
from eviseek.envs.base import AsyncEnv
from eviseek.models.base import Model
from eviseek.types import Question, Stage, StepRecord, Trajectory
from eviseek.types.plans import EviSeekPlan, SeekerDecision


def _abilities(library: IntentLibrary) -> str:
    views = [s.name for s in library.offered() if s.kind != "manipulation"]
    manip = [s.name for s in library.offered() if s.kind == "manipulation"]
    text = "change its viewpoint (" + ", ".join(views) + ")" if views else "look only from where it stands"
    if manip:
        text += "; act on objects (" + ", ".join(manip) + ") and observe the outcome"
    return text


class EviSeekAgent:
    """Evidence-demand planning, evidence seeking with intents, and an evidence board."""

    kind = "eviseek"
    config_class: type[EviSeekConfig] = EviSeekConfig

    def __init__(self, config: EviSeekConfig | None = None, *, name: str | None = None, **overrides: Any):
        self.config = build_config(self.config_class, config, overrides)
        self.name = name or self.kind

    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Run one episode and return its trajectory (``result`` filled, scoring left to the harness)."""
        cfg = self.config
        started = time.perf_counter()
        plan = EviSeekPlan(demands=[], subtasks=[], mode="active")
        obs, traj, caller = await start_episode(
            self.name, self.kind, cfg, env, question, model, seed=seed, plan=plan
        )
        plan.initial_frame_id = obs.frame_id
        legal = await env.legal_actions()
        ep = Episode(
            cfg=cfg,
            question=question,
            env=env,
            caller=caller,
            traj=traj,
            legal=legal,
            library=IntentLibrary(legal, atomic_only=cfg.no_intents, look_up=cfg.look_up),
            view=obs.image,
            frame_id=obs.frame_id,
            plan=plan,
            board=EvidenceBoard(traj),
            pose=PoseTracker(legal, obs.metadata.get("pose_bounds")),
            references=list(question.reference_images) if cfg.reference_images else [],
        )
        plan.intents = ep.library.names()
        if cfg.adaptive:
            decision = await triage(ep)
            if decision.sufficient:
                return await self._answer_passively(ep, decision.answer, started)
        await self._plan(ep)
        await self._execute_plan(ep)
        if ep.motion:
            plan.answered_from = "action_frames"
            answer, raw = await answer_from_motion(
                caller,
                question,
                traj,
                ep.motion,
                references=ep.references,
                forced_choice=cfg.forced_choice,
                at_step=ep.steps_used,
            )
            finish(traj, question, answer=answer, raw_answer=raw, mode=ep.plan.mode, started=started)
            return traj
        answer, raw = await answer_episode(
            caller,
            question,
            traj,
            cfg.memory,
            capacity=cfg.frame_capacity,
            window=cfg.memory_window,
            feedback_chars=cfg.feedback_chars,
            show_demands=not cfg.no_demands,
            references=ep.references,
            forced_choice=cfg.forced_choice,
            board=ep.board,
            at_step=ep.steps_used,
            guarded=cfg.guarded_answer,
        )
        finish(traj, question, answer=answer, raw_answer=raw, mode=ep.plan.mode, started=started)
        return traj

    # --- adaptive seeking ------------------------------------------------------------------------
    async def _answer_passively(self, ep: Episode, raw: str | None, started: float) -> Trajectory:
        ep.plan.mode = "passive"
        images = [*ep.references, ep.view]
        ep.traj.answer_images = images
        ep.traj.answer_frame_ids = [*([-1] * len(ep.references)), ep.frame_id]
        answer, raw_answer = await resolve_answer(
            ep.caller,
            ep.question,
            raw,
            images=images,
            context="",
            at_step=0,
            enabled=self.config.forced_choice,
        )
        finish(ep.traj, ep.question, answer=answer, raw_answer=raw_answer, mode="passive", started=started)
        return ep.traj

    # --- planning ----------------------------------------------------------------------------------
    async def _plan(self, ep: Episode) -> None:
        cfg, q = ep.cfg, ep.question
        abilities = _abilities(ep.library)
        contract = q.contract.describe()
        if cfg.no_demands:
            ep.plan.demands = []
        else:
            parsed, _ = await ep.caller.ask_rendered(
                Stage.DEMANDS,
                DemandsReply,
                fallback="one question-wide demand",
                metadata={
                    **ep.base_metadata(),
                    "max_demands": cfg.max_demands,
                    "guidance": q.guidance,
                    "intents": ep.library.names(),
                },
                context={
                    "question": q,
                    "contract": contract,
                    "references": ep.references,
                    "view": ep.view,
                    "max_demands": cfg.max_demands,
                    "abilities": abilities,
                },
            )
            ep.plan.demands = demands_from_reply(parsed.value, q.text, cfg.max_demands, ep.traj)
        parsed_plan, _ = await ep.caller.ask_rendered(
            Stage.PLAN,
            PlanReply,
            fallback="one subtask per demand",
            metadata={
                **ep.base_metadata(),
                "demands": [d.model_dump() for d in ep.plan.demands],
                "max_subtasks": cfg.max_subtasks,
                "guidance": q.guidance,
                "intents": ep.library.names(),
            },
            context={
                "question": q,
                "contract": contract,
                "view": ep.view,
                "demands": ep.plan.demands,
                "max_subtasks": cfg.max_subtasks,
                "budget": cfg.budget,
                "abilities": abilities,
            },
        )
        ep.plan.subtasks = plan_from_reply(parsed_plan.value, ep.plan.demands, cfg.max_subtasks, ep.traj)

    # --- execution ---------------------------------------------------------------------------------
    async def _execute_plan(self, ep: Episode) -> None:
        cfg = ep.cfg
        if cfg.coverage_control:
            await run_with_coverage_control(ep, self._act)
            self._close_open(ep)
            return
        replans_left = cfg.max_replans
        while ep.remaining > 0 and not ep.ended:
            subtask = ep.plan.next_pending()
            if subtask is None:
                break
            await self._run_subtask(ep, subtask)
            ep.board.bind(subtask.id, None if cfg.no_demands else subtask.demand, ep.steps_used)
            if cfg.coverage and not cfg.no_demands and ep.remaining > 0 and not ep.ended:
                decision = await coverage_check(ep, subtask, replans_left)
                if decision == "replan":
                    replans_left -= 1
                if decision == "stop":
                    ep.traj.log(
                        "early_stop",
                        "coverage check found the evidence sufficient",
                        stage=Stage.COVERAGE,
                        at_step=ep.steps_used,
                    )
                    break
        self._close_open(ep)

    @staticmethod
    def _close_open(ep: Episode) -> None:
        for s in ep.plan.subtasks:
            if s.status == "active":  # defensive: every exit path closes its subtask
                s.status = "timed_out"

    async def _run_subtask(self, ep: Episode, subtask: Subtask) -> None:
        cfg = ep.cfg
        subtask.status = "active"
        memory = ep.working_memory()
        decisions = 0
        while True:
            if ep.remaining <= 0 or ep.ended:
                subtask.status = "timed_out"
                ep.traj.log(
                    "subtask_timed_out",
                    f"subtask {subtask.id}: the step budget is spent"
                    if ep.remaining <= 0
                    else f"subtask {subtask.id}: the environment ended the episode",
                    at_step=ep.steps_used,
                )
                return
            if decisions >= cfg.max_decisions_per_subtask:
                subtask.status = "timed_out"
                ep.traj.log(
                    "subtask_timed_out",
                    f"subtask {subtask.id}: {decisions} decisions without DONE",
                    at_step=ep.steps_used,
                )
                return
            decision = await seek(ep, subtask, memory)
            decisions += 1
            record = decision_record(ep, subtask, decision)
            if keep_current(ep, subtask, decision) is not None:
                record.kept_current = True
            if decision.intent == DONE:
                subtask.status = "done"
                return
            if decision.intent == BLOCKED:
                subtask.status = "blocked"
                return
            cap = decisions >= cfg.max_decisions_per_subtask
            await self._act(ep, subtask, decision, record, memory, cap_reached=cap)

    async def _act(
        self,
        ep: Episode,
        subtask: Subtask,
        decision: SeekDecision,
        record: SeekerDecision,
        memory: WorkingMemory,
        *,
        cap_reached: bool = False,
    ) -> None:
        compiled, why = ep.library.compile(
            decision.intent, decision.args, target=decision.target, remaining=ep.remaining
        )
        if compiled is None:
            ep.traj.log(
                "invalid_intent",
                why or "invalid intent",
                stage=Stage.SEEK,
                at_step=ep.steps_used,
                data={"intent": decision.intent, "args": decision.args},
            )
            record.aborted = why
            args_text = f" {decision.args}" if decision.args else ""
            memory.add(f"{decision.intent}{args_text} was rejected: {why}")
            return
        record.intent = compiled.name
        record.notes = compiled.notes
        if compiled.budget_clamped:
            ep.traj.log(
                "intent_clamped",
                f"{compiled.name} needed {compiled.requested} steps, {len(compiled.actions)} remain",
                stage=Stage.SEEK,
                at_step=ep.steps_used,
            )
        before, before_frame = ep.view, ep.frame_id
        steps, aborted = await self._execute(ep, subtask, compiled, record.index)
        record.executed = len(steps)
        record.aborted = aborted
        refused: list[str] = []
        if not steps:
            kept = []
        elif ep.cfg.retention == "split":
            # No seeker decision will judge this intent's last frame when the budget is spent, the
            # episode ended, or this subtask's decisions ran out with nothing left to plan.
            last_chance = ep.remaining <= 0 or ep.ended or (cap_reached and ep.plan.next_pending() is None)
            kept = await curate(ep, subtask, compiled, steps, memory, last_chance=last_chance)
        else:
            kept = await review(ep, subtask, compiled, before, before_frame, steps, memory, refused)
        outcome = "; ".join(
            feedback_note(s.feedback, ep.cfg.feedback_chars) for s in steps if informative(s.feedback)
        )
        line = f"{compiled.name}{' ' + str(decision.args) if decision.args else ''}: {len(steps)} action(s)"
        if aborted:
            line += f", stopped early ({aborted})"
        if outcome:
            line += f"; outcome: {outcome}"
        line += f"; kept: {kept[0].note or 'yes'}" if kept else "; nothing kept"
        if not kept and refused:
            line += f" ({refused[0]})"
        memory.add(line)
        if compiled.kind == "manipulation":
            # Object choices can change after an intervention; refresh what is on offer.
            ep.legal = await ep.env.legal_actions()
            ep.library = IntentLibrary(ep.legal, atomic_only=ep.cfg.no_intents, look_up=ep.cfg.look_up)
            ep.pose.update_legal(ep.legal)

    async def _execute(
        self, ep: Episode, subtask: Subtask, compiled: CompiledIntent, decision_index: int
    ) -> tuple[list[StepRecord], str | None]:
        """Run the compiled actions one by one; returns the steps and why it stopped early, if it did."""
        steps: list[StepRecord] = []
        n = len(compiled.actions)
        failed: str | None = None
        skipped = 0
        for i, action in enumerate(compiled.actions):
            if ep.cfg.skip_repeated_failures and action.name == failed and not action.args:
                skipped += 1  # the same blocked move would fail the same way and cost a step
                continue
            result = await ep.env.step(action)
            failed = None if result.feedback.success else action.name
            pose = ep.pose.apply(action, result.feedback)
            obs = result.observation
            rec = StepRecord.from_step(
                ep.steps_used + 1,
                action,
                result,
                pose=pose,
                intent=compiled.name,
                subtask=subtask.id,
                decision=decision_index,
            )
            ep.traj.steps.append(rec)
            steps.append(rec)
            subtask.steps.append(rec.index)
            ep.view, ep.frame_id = obs.image, obs.frame_id
            ep.trail.append(
                f"step {rec.index}: {action.text()} -> {describe_pose(pose)} "
                f"[{feedback_note(result.feedback, ep.cfg.feedback_chars)}]"
            )
            if result.terminated or result.truncated:
                ep.ended = True
                return steps, "the environment ended the episode"
            if obs.action_frames:
                # The action set things moving: its frames go straight to an answer call, as the
                # benchmark's put does (paper app. E), and the episode ends.
                ep.motion = [(f.image, f.frame_id) for f in obs.action_frames] + [(obs.image, obs.frame_id)]
                ep.ended = True
                return steps, "the action's frames went to an answer call"
            if not result.feedback.success and compiled.name in TRACKING_INTENTS:
                # Only target-tracking intents stop early (paper app. F); a blocked move cannot
                # bring the target closer. Geometry-complete intents (SWEEP, RISE_TOPDOWN, ...)
                # run to completion: a pitch or height bound reached halfway still leaves the
                # rest of the fan worth taking, and the failure is in the trail and the keeper's
                # outcome text.
                return steps, f"{action.name} failed"
            last = i == n - 1
            if (
                compiled.tracking
                and ep.cfg.track_every
                and not last
                and (i + 1) % ep.cfg.track_every == 0
                and ep.remaining > 0
            ) and not await target_visible(ep, compiled.target):
                ep.traj.log(
                    "intent_aborted",
                    f"{compiled.name}: target {compiled.target!r} lost after {i + 1} of {n} actions",
                    stage=Stage.KEEP,
                    at_step=ep.steps_used,
                )
                return steps, "target lost"
        if skipped:
            ep.traj.log(
                "repeats_skipped",
                f"{compiled.name}: {skipped} repeat(s) of a failed primitive skipped",
                stage="seek",
                at_step=ep.steps_used,
            )
        return steps, None


class EviSeekNavAgent(EviSeekAgent):
    """EviSeek's navigation variant: a 120-step budget and coverage-driven control.

    The same agent as :class:`EviSeekAgent` with :class:`EviSeekNavConfig`'s defaults; the
    intents adapt to the environment's navigation-only interface on their own (no ORBIT,
    RISE_TOPDOWN or RETREAT_WIDE, SWEEP without tilt, 30-degree turns, a longer GOTO).
    """

    kind = "eviseek-nav"
    config_class = EviSeekNavConfig
