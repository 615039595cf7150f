"""Board replay: re-answer a saved EviSeek trajectory with another answer-time memory.

The paper's memory ablations reuse the recorded trajectories and rerun only the answering call,
so that the effect of answer-time memory is measured apart from exploration. ``replay_answer``
does that: it never touches an environment.
"""

from __future__ import annotations

import time
from pathlib import Path

from eviseek.agents.common import StageCaller, finish, load_pixels
from eviseek.agents.eviseek.answerer import answer_episode, answer_from_motion
from eviseek.agents.eviseek.config import EviSeekConfig, Memory
from eviseek.errors import ConfigError
from eviseek.models.base import Model
from eviseek.types import GenerateConfig, Question, Stage, Trajectory
from eviseek.types.plans import EviSeekPlan

_MEMORIES = ("board", "recent", "uniform")


def _known_config(data: dict[str, object]) -> EviSeekConfig:
    fields = EviSeekConfig.model_fields
    return EviSeekConfig.model_validate({k: v for k, v in data.items() if k in fields})


# Long because it copies the recorded episode with only its answering calls removed, reloads every
# image the answer may need, and then asks one of the two answering calls (on an action's frames,
# or from the chosen memory); the docstring spells out what the copy keeps.
async def replay_answer(
    trajectory: Trajectory | str | Path,
    question: Question,
    model: Model,
    memory: Memory = "board",
    *,
    config: EviSeekConfig | None = None,
    agent_name: str | None = None,
) -> Trajectory:
    """Answer ``question`` again from a recorded trajectory, with the answer memory ``memory``.

    ``trajectory`` may be a :class:`Trajectory` (its images in memory) or the directory it was
    saved to (images are loaded from there). The returned trajectory is a copy: the same steps,
    plan and board, the exploration calls kept, the original answering calls replaced by the
    new ones, and a new ``result``. Its agent is ``<agent>/replay-<memory>`` unless named.
    """
    if memory not in _MEMORIES:
        raise ConfigError(f"unknown memory {memory!r}; use one of {', '.join(_MEMORIES)}")
    base_dir: Path | None = None
    if not isinstance(trajectory, Trajectory):
        base_dir = Path(trajectory)
        trajectory = Trajectory.load(base_dir)
    if trajectory.question_id != question.id:
        raise ConfigError(
            f"trajectory is for question {trajectory.question_id!r} but question {question.id!r} was given"
        )
    cfg = config or _known_config(dict(trajectory.config))
    started = time.perf_counter()
    traj = trajectory.model_copy(deep=False)
    traj.agent = agent_name or f"{trajectory.agent}/replay-{memory}"
    traj.model = model.name
    traj.calls = [c for c in trajectory.calls if c.stage not in (Stage.ANSWER, Stage.FORCED_CHOICE)]
    traj.events = list(trajectory.events)
    traj.plan = trajectory.plan.model_copy(deep=True)
    traj.config = {**trajectory.config, "replay_memory": memory, "replayed_from": trajectory.episode_id}
    images = [traj.initial_image] if traj.initial_image is not None else []
    images += [s.image for s in traj.steps if s.image is not None]
    images += [f for s in traj.steps for f in s.action_frames]
    images += [b.item.image for b in traj.board if b.item.image is not None]
    refs = list(question.reference_images) if cfg.reference_images else []
    load_pixels([*images, *refs], base_dir)
    caller = StageCaller(
        model, traj, GenerateConfig(temperature=cfg.temperature, top_p=cfg.top_p, max_tokens=cfg.max_tokens)
    )
    moved = next((s for s in reversed(traj.steps) if s.action_frames), None)
    from_frames = isinstance(traj.plan, EviSeekPlan) and traj.plan.answered_from == "action_frames"
    if from_frames and moved is not None and moved.image is not None:
        # The episode was answered by the task's own interface, on an action's frames (paper
        # app. E); no answer-time memory applies to it, so the replay asks that call again.
        motion = [
            *zip(moved.action_frames, moved.action_frame_ids, strict=True),
            (moved.image, moved.frame_id),
        ]
        answer, raw = await answer_from_motion(
            caller,
            question,
            traj,
            motion,
            references=refs,
            forced_choice=cfg.forced_choice,
            at_step=len(traj.steps),
        )
        mode = trajectory.result.mode if trajectory.result is not None else traj.plan.mode
        finish(traj, question, answer=answer, raw_answer=raw, mode=mode, started=started)
        return traj
    answer, raw = await answer_episode(
        caller,
        question,
        traj,
        memory,
        capacity=cfg.frame_capacity,
        window=cfg.memory_window,
        feedback_chars=cfg.feedback_chars,
        show_demands=not cfg.no_demands,
        references=refs,
        forced_choice=cfg.forced_choice,
        at_step=len(traj.steps),
        guarded=cfg.guarded_answer,
    )
    mode = trajectory.result.mode if trajectory.result is not None else traj.plan.mode
    # wall_time_s counts this replay only: the exploration was not re-run.
    finish(traj, question, answer=answer, raw_answer=raw, mode=mode, started=started)
    return traj
