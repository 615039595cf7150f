"""A frontier-exploration baseline in the spirit of Fine-EQA (EXPRESS-Bench's own agent).

Fine-EQA (Jiang et al., 2025) maps the scene from RGB-D, picks frontiers of the explored space
with a vision-language model's help and asks, at each step, whether it has enough information to
answer. This agent keeps those three parts on eviseek's Env protocol:

- the map is a :class:`~eviseek.agents.frontier.occupancy.SeenMap` in the agent's dead-reckoned
  frame, built from the env's range scan (``Observation.metadata["range_scan"]``, a slice of the
  depth image, when the env offers one), the cells the agent stood in and the moves that bumped
  into something; never from the simulator's map;
- before each stretch of movement the model sees the recent views and answers "enough
  information?" (yes: it answers and the episode ends) and, if not, names a direction;
- the next frontier is the nearest one, weighted toward that direction; the agent walks a grid
  path toward it with the env's turn and forward primitives, a few steps per stretch.

Differences from Fine-EQA, all ours: no TSDF or semantic value map (a 2-D grid and the model's
direction hint instead), no teleporting to waypoints (every primitive is charged to the budget,
as for the other agents), and a look-around at the start that Fine-EQA also does in its own way.
"""

from __future__ import annotations

import math
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eviseek.agents.common import build_config, contract_metadata, finish, resolve_answer, start_episode
from eviseek.agents.eviseek.pose import PoseTracker
from eviseek.agents.frontier.occupancy import Frontier, RangeScan, SeenMap
from eviseek.agents.replies import EnoughInfoReply
from eviseek.answers.accept import accept_answer
from eviseek.envs.base import AsyncEnv
from eviseek.envs.budget import NAVIGATION_BUDGET
from eviseek.models.base import Model
from eviseek.types import Action, Image, Observation, Question, Stage, StepRecord, Trajectory
from eviseek.types.plans import FrontierMap, FrontierPlan, FrontierStretch

_HINT_BEARING = {"ahead": 0.0, "left": 90.0, "right": -90.0, "behind": 180.0}


class FrontierConfig(BaseModel):
    """Settings of the frontier-exploration baseline."""

    model_config = ConfigDict(extra="forbid")

    budget: int = Field(NAVIGATION_BUDGET, ge=1)
    """Most atomic actions per episode (120: the EviSeek paper's navigation budget, section 5.5)."""
    stretch_steps: int = Field(6, ge=1)
    """Most actions between two "enough information?" checks."""
    look_around: bool = True
    """Turn a full circle first, so the map and the first check see every side."""
    history_images: int = Field(3, ge=0)
    """Earlier views sent with each check, besides the current one."""
    hint_weight_m: float = Field(2.0, ge=0.0)
    """Extra metres a frontier straight against the model's direction counts as (ours)."""
    min_frontier_cells: int = Field(2, ge=1)
    clearance_cells: int = Field(1, ge=0)
    """Paths keep this many cells from anything seen occupied (the body has a radius; ours)."""
    temperature: float = Field(0.2, ge=0.0)
    top_p: float = Field(0.9, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)
    forced_choice: bool = True


class _Run:
    """The running state of one frontier episode."""

    def __init__(self, traj: Trajectory, pose: PoseTracker, seen: SeenMap, move: float, turn: float) -> None:
        self.traj = traj
        self.pose = pose
        self.seen = seen
        self.move = move
        self.turn = turn
        self.views: list[tuple[int, Image, int]] = []
        self.scans = 0
        self.ended = False
        self.avoid: set[tuple[int, int]] = set()
        self.blocked = False
        """The last forward move was blocked."""
        self.stuck = 0
        """Stretches in a row that moved nowhere."""

    def observe(self, obs: Observation) -> None:
        p = self.pose.pose
        scan = RangeScan.from_metadata(obs.metadata.get("range_scan"))
        if scan is not None:
            self.seen.integrate(p.x, p.y, p.yaw, scan)
            self.scans += 1
        else:
            self.seen.mark_visited(p.x, p.y)
        self.views.append((len(self.traj.steps), obs.image, obs.frame_id))


class FrontierAgent:
    """Map what was seen, ask "enough information?", walk to the next frontier, repeat."""

    kind = "frontier"
    sensors = ("rgb", "depth")
    """An RGB-D agent, as Fine-EQA is: envs that have depth send it (and its range scan)."""

    def __init__(self, config: FrontierConfig | None = None, *, name: str = "frontier", **overrides: Any):
        self.config = build_config(FrontierConfig, config, overrides)
        self.name = name

    # Long because it is one check / explore loop (ask whether the views so far suffice, else walk a
    # stretch to a frontier) between the episode's start and its answer; the loop's state (the map
    # and pose, the last answer and its images, why it ended) is read again after it.
    async def run(self, env: AsyncEnv, question: Question, model: Model, *, seed: int = 0) -> Trajectory:
        """Run one episode and return its trajectory."""
        cfg = self.config
        started = time.perf_counter()
        plan = FrontierPlan(mode="active", stretches=[])
        obs, traj, caller = await start_episode(
            self.name,
            self.kind,
            cfg,
            env,
            question,
            model,
            seed=seed,
            plan=plan,
            sensors=self.sensors,
        )
        legal = await env.legal_actions()
        names = {s.name for s in legal}
        mags = {s.name: float(s.magnitude) for s in legal if s.magnitude}
        run = _Run(
            traj,
            PoseTracker(legal),
            SeenMap(resolution=mags.get("move_forward", 0.25)),
            move=mags.get("move_forward", 0.25),
            turn=mags.get("turn_left", 30.0),
        )
        run.observe(obs)
        if not {"move_forward", "turn_left", "turn_right"} <= names:
            traj.log("no_navigation", "the env has no forward move and turns; answering from the first view")
        elif cfg.look_around:
            n = max(1, round(360.0 / run.turn) - 1)
            await self._walk(env, run, [Action(name="turn_left")] * n, "LOOK_AROUND", 0)
        answer_raw: str | None = None
        images: list[Image] = []
        frames: list[int] = []
        stretch = 0
        ended_by = "budget"
        while True:
            remaining = cfg.budget - len(traj.steps)
            final = remaining <= 0 or run.ended
            frontiers = run.seen.frontiers(
                run.pose.pose.x, run.pose.pose.y, run.pose.pose.yaw, min_size=cfg.min_frontier_cells
            )
            reply, images, frames = await self._check(
                caller, question, run, final=final, frontiers=len(frontiers)
            )
            if reply is not None and reply.answer:
                answer_raw = reply.answer
            if reply is not None and reply.enough and accept_answer(question, reply.answer) is not None:
                ended_by = "enough" if not final else ended_by
                break
            if final:
                break
            stretch += 1
            actions, why = self._stretch(
                run, frontiers, reply.direction if reply else "", min(remaining, cfg.stretch_steps)
            )
            plan.stretches.append(
                FrontierStretch(index=stretch, at_step=len(traj.steps), target=why, actions=len(actions))
            )
            if not actions:
                traj.log(
                    "no_frontier", f"nothing left to explore ({why}); answering", at_step=len(traj.steps)
                )
                ended_by = "explored"
                reply, images, frames = await self._check(caller, question, run, final=True, frontiers=0)
                if reply is not None and reply.answer:
                    answer_raw = reply.answer
                break
            await self._walk(env, run, actions, "FRONTIER", stretch)
        plan.ended_by = ended_by
        plan.map = FrontierMap(**run.seen.counts(), scans=run.scans, resolution_m=run.seen.resolution)
        answer, raw = await resolve_answer(
            caller,
            question,
            answer_raw,
            images=images,
            context="",
            at_step=len(traj.steps),
            enabled=cfg.forced_choice,
        )
        traj.answer_images = images
        traj.answer_frame_ids = frames
        finish(traj, question, answer=answer, raw_answer=raw, mode="active", started=started)
        return traj

    async def _check(
        self, caller: Any, question: Question, run: _Run, *, final: bool, frontiers: int
    ) -> tuple[EnoughInfoReply | None, list[Image], list[int]]:
        cfg = self.config
        previous = run.views[-1 - cfg.history_images : -1] if cfg.history_images else []
        current = run.views[-1]
        images = [*(v[1] for v in previous), current[1]]
        frames = [*(v[2] for v in previous), current[2]]
        step = len(run.traj.steps)
        parsed, _ = await caller.ask_rendered(
            Stage.EXPLORE_CHECK,
            EnoughInfoReply,
            fallback="keep exploring toward the nearest frontier",
            at_step=step,
            metadata={
                **contract_metadata(question),
                "step": step,
                "budget": cfg.budget,
                "frame_ids": frames,
                "final": final,
                "frontiers": frontiers,
            },
            context={
                "question": question,
                "contract": question.contract.describe(),
                "previous": [{"step": v[0], "image": v[1]} for v in previous],
                "current": current[1],
                "step": step,
                "budget": cfg.budget,
                "final": final,
            },
        )
        return parsed.value, images, frames

    def _stretch(
        self, run: _Run, frontiers: list[Frontier], hint: str, limit: int
    ) -> tuple[list[Action], str]:
        """The actions of the next stretch toward the best frontier, and what it aims at."""
        p = run.pose.pose
        here = run.seen.cell(p.x, p.y)
        want = _HINT_BEARING.get(hint)
        candidates = [f for f in frontiers if f.cell not in run.avoid and f.cell != here]

        def score(f: Frontier) -> float:
            if want is None:
                return f.distance_m
            off = abs((f.bearing_deg - want + 180.0) % 360.0 - 180.0)
            return f.distance_m + self.config.hint_weight_m * off / 180.0

        for f in sorted(candidates, key=score):
            # Keep clear of walls where the map allows; squeeze through (e.g. a doorway drawn
            # narrow by the grid) only when no clear path exists.
            path = run.seen.path(here, f.cell, clearance=self.config.clearance_cells) or run.seen.path(
                here, f.cell
            )
            if path is None or len(path) < 2:
                run.avoid.add(f.cell)
                continue
            if len(path) <= limit + 1 or run.stuck >= 2:
                # Reached within this stretch, or aimed at twice without getting anywhere.
                run.avoid.add(f.cell)
            return self._follow(
                run, path, limit
            ), f"frontier {f.cell} at {f.distance_m:.1f} m, {f.bearing_deg:+.0f} deg"
        if want is None and run.scans == 0:
            # Without a range scan there is no map to run out of: walk on, turning right after a bump.
            hint, want = ("right", -90.0) if run.blocked else ("ahead", 0.0)
        if want is not None:
            # No mapped frontier (e.g. an env without a range scan): head where the model points.
            turns = self._turns(want, run.turn)
            return (turns + [Action(name="move_forward")] * limit)[:limit], f"no frontier; heading {hint}"
        return [], "no reachable frontier and no direction given"

    def _follow(self, run: _Run, path: list[tuple[int, int]], limit: int) -> list[Action]:
        """Turns toward a waypoint a few cells down the path, then forward moves to it."""
        p = run.pose.pose
        ahead = path[min(len(path) - 1, 4, max(1, limit - 1))]  # about 1 m: short legs stay on the path
        wx, wy = run.seen.centre(ahead)
        bearing = math.degrees(math.atan2(-(wx - p.x), wy - p.y))
        rel = (bearing - p.yaw + 180.0) % 360.0 - 180.0
        turns = self._turns(rel, run.turn)
        dist = math.hypot(wx - p.x, wy - p.y)
        forward = max(1, round(dist / run.move))
        return (turns + [Action(name="move_forward")] * forward)[:limit]

    @staticmethod
    def _turns(rel_deg: float, quantum: float) -> list[Action]:
        n = round(abs(rel_deg) / quantum)
        return [Action(name="turn_left" if rel_deg > 0 else "turn_right")] * n

    async def _walk(self, env: AsyncEnv, run: _Run, actions: list[Action], label: str, stretch: int) -> None:
        """Run ``actions`` within the budget; a blocked forward move marks the map and ends the stretch."""
        start = (run.pose.pose.x, run.pose.pose.y)
        try:
            await self._run_actions(env, run, actions, label, stretch)
        finally:
            moved = (run.pose.pose.x, run.pose.pose.y) != start
            run.stuck = 0 if moved or label != "FRONTIER" else run.stuck + 1

    async def _run_actions(
        self, env: AsyncEnv, run: _Run, actions: list[Action], label: str, stretch: int
    ) -> None:
        for action in actions:
            if len(run.traj.steps) >= self.config.budget or run.ended:
                return
            before = run.pose.pose
            result = await env.step(action)
            pose = run.pose.apply(action, result.feedback)
            obs = result.observation
            run.traj.steps.append(
                StepRecord.from_step(
                    len(run.traj.steps) + 1, action, result, pose=pose, intent=label, decision=stretch
                )
            )
            run.observe(obs)
            if result.terminated or result.truncated:
                run.ended = True
                return
            if action.name == "move_forward":
                run.blocked = not result.feedback.success
                if run.blocked:
                    run.seen.mark_blocked(before.x, before.y, before.yaw, run.move)
                    return
