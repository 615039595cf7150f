"""Trajectories and episode results: the single source for logs, scoring, reports and viewers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
)

from eviseek.types.atomic import write_atomic
from eviseek.types.image import Image
from eviseek.types.messages import ChatMessage, ImagePart, ModelCall, Usage, total_tokens
from eviseek.types.observation import Action, Feedback, Pose, StepResult
from eviseek.types.plans import AgentPlan, ModePlan, PlanRecord, UnreadPlan, plugin_plan
from eviseek.types.question import Question

DECISION_STAGES = frozenset({"seek", "single_step", "explore_check"})
"""Stages whose call decides what the agent does next (steps per decision counts these)."""


class StepRecord(BaseModel):
    """One executed atomic action and what it produced."""

    index: int
    """1-based step count after this action (steps charged to the budget)."""
    action: Action
    feedback: Feedback
    image: Image | None = None
    frame_id: int = 0
    pose: Pose | None = None
    """The agent's own dead-reckoned pose after the action (never read from the simulator)."""
    true_pose: Pose | None = None
    intent: str | None = None
    subtask: int | None = None
    decision: int | None = None
    """Index of the model decision that produced this step."""
    # Written only when there are frames, so records of other steps stay as they were.
    action_frames: list[Image] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Frames the environment rendered while the action ran (a slide), oldest first; ``image``
    is the frame after them."""
    action_frame_ids: list[int] = Field(default_factory=list, exclude_if=lambda v: not v)

    @classmethod
    def from_step(
        cls,
        index: int,
        action: Action,
        result: StepResult,
        *,
        pose: Pose | None = None,
        intent: str | None = None,
        subtask: int | None = None,
        decision: int | None = None,
        keep_failed_view: bool = True,
    ) -> StepRecord:
        """The record of ``action`` and the ``result`` the environment returned: the one way every
        agent records a step, so each record carries the same fields (the view, its frame id,
        the environment's pose and the frames rendered while the action ran).

        ``pose`` is the agent's own dead-reckoned pose, when it keeps one. With
        ``keep_failed_view=False`` a failed action records no view (frame id -1): for actions
        whose failure returns no new frame (AutoTool's zoom).
        """
        obs = result.observation
        shown = keep_failed_view or result.feedback.success
        return cls(
            index=index,
            action=action,
            feedback=result.feedback,
            image=obs.image if shown else None,
            frame_id=obs.frame_id if shown else -1,
            pose=pose,
            true_pose=obs.pose,
            intent=intent,
            subtask=subtask,
            decision=decision,
            action_frames=[f.image for f in obs.action_frames],
            action_frame_ids=[f.frame_id for f in obs.action_frames],
        )


class EvidenceItem(BaseModel):
    """An item on EviSeek's evidence board, with its provenance."""

    id: int
    frame_id: int
    step_index: int
    image: Image | None = None
    outcome: Feedback | None = None
    intent: str | None = None
    subtask: int | None = None
    demand: int | None = None
    note: str = ""


class BoardEvent(BaseModel):
    """A change to the evidence board."""

    kind: Literal["add", "remove", "bind"] = "add"
    item: EvidenceItem
    at_step: int = 0


class EpisodeEvent(BaseModel):
    """Something worth logging: a parse failure and its fallback, a timeout, a replan."""

    kind: str
    message: str
    stage: str | None = None
    at_step: int = 0
    data: dict[str, Any] = Field(default_factory=dict)


class EpisodeResult(BaseModel):
    """The outcome and cost of one episode: one row of a results table."""

    question_id: str
    agent: str
    model: str = ""
    family: str = ""
    subcategory: str = ""
    answer: str | None = None
    """The final answer after parsing (``None`` when none could be extracted)."""
    raw_answer: str | None = None
    ground_truth: str | list[str] | None = None
    correct: bool | None = None
    score: float | None = None
    """Task score in [0, 1] (equal to ``correct`` for most tasks; soft for counting)."""
    support: float | None = None
    """Visual support grade of the answer-time images, in {0, 0.5, 1}."""
    mode: str | None = None
    """Episode mode, e.g. ``passive``/``active`` for adaptive seeking, ``tool_on``/``tool_off``."""
    steps: int = 0
    calls: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    reasoning_tokens: int | None = 0
    images_in_answer: int = 0
    decisions: int | None = None
    """Decision calls: EviSeek's seek calls, Single-model's step calls, the frontier agent's
    checks (``None`` in records written before this was counted)."""
    wall_time_s: float = 0.0
    error: str | None = None
    """Why the episode failed, if it did; a failed episode still counts as incorrect."""

    @property
    def total_tokens(self) -> int | None:
        """Input + output + reasoning tokens (the paper's count), or None if unknown."""
        return total_tokens(self.input_tokens, self.output_tokens, self.reasoning_tokens)


class Trajectory(BaseModel):
    """Everything that happened in one episode."""

    episode_id: str
    question_id: str
    agent: str
    model: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    initial_image: Image | None = None
    initial_pose: Pose | None = None
    plan: AgentPlan = Field(default_factory=ModePlan)
    """The agent's own record (:mod:`eviseek.types.plans`), e.g. EviSeek's demands and subtasks
    with their statuses."""
    steps: list[StepRecord] = Field(default_factory=list)
    calls: list[ModelCall] = Field(default_factory=list)
    board: list[BoardEvent] = Field(default_factory=list)
    events: list[EpisodeEvent] = Field(default_factory=list)
    answer_images: list[Image] = Field(default_factory=list)
    """Images attached to the answering call, in order."""
    answer_frame_ids: list[int] = Field(default_factory=list)
    """Frame ids of ``answer_images`` (``-1`` for task reference images)."""
    result: EpisodeResult | None = None
    started_at: float = Field(default_factory=time.time)

    @field_validator("plan", mode="wrap")
    @classmethod
    def _plan_or_unread(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """A saved plan that fits no record loads as an :class:`UnreadPlan` (kept, with why)
        rather than making the whole trajectory unreadable. A plugin's registered record
        (:func:`eviseek.types.plans.register_plan`) is read here, outside the built-in union."""
        record = plugin_plan(value)
        try:
            return handler(value) if record is None else record.model_validate(value)
        except ValidationError as exc:
            problems = [
                f"plan.{'.'.join(str(p) for p in err['loc'][1:])}: {err['msg']}" for err in exc.errors()
            ]
            return UnreadPlan(raw=value, problems=problems)

    @field_serializer("plan", mode="wrap")
    def _plan_as_saved(
        self, plan: Any, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        """A plugin's record is written by its own class (the built-in union does not list it)."""
        if isinstance(plan, PlanRecord) and plugin_plan(plan) is not None:
            return plan.model_dump(mode="json" if info.mode_is_json() else "python")
        return handler(plan)

    def log(self, kind: str, message: str, **kw: Any) -> EpisodeEvent:
        """Append an event and return it."""
        event = EpisodeEvent(kind=kind, message=message, **kw)
        self.events.append(event)
        return event

    def total_usage(self) -> Usage:
        """Usage summed over every recorded call (a count stays ``None`` if no call reported it)."""
        total = Usage()
        for call in self.calls:
            total = total + call.usage
        return total

    def make_result(self, question: Question, **fields: Any) -> EpisodeResult:
        """An :class:`EpisodeResult` for this episode.

        Identity (question, agent, model, family) and cost (steps, calls, tokens, answer images)
        come from the trajectory and the question, so every agent and the offline scorer count
        them the same way; ``fields`` set the rest (answer, mode, wall time, verdict...).
        """
        usage = self.total_usage()
        values: dict[str, Any] = {
            "question_id": question.id,
            "agent": self.agent,
            "model": self.model,
            "family": question.family,
            "subcategory": question.subcategory,
            "ground_truth": question.ground_truth,
            "steps": len(self.steps),
            "calls": len(self.calls),
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "reasoning_tokens": usage.reasoning_tokens,
            "images_in_answer": distinct_images(self.answer_images),
            "decisions": sum(call.stage in DECISION_STAGES for call in self.calls),
        }
        values.update(fields)
        return EpisodeResult(**values)

    def all_images(self) -> list[Image]:
        """Every image the trajectory references."""
        imgs: list[Image] = []
        if self.initial_image is not None:
            imgs.append(self.initial_image)
        imgs += [s.image for s in self.steps if s.image is not None]
        imgs += [f for s in self.steps for f in s.action_frames]
        imgs += [b.item.image for b in self.board if b.item.image is not None]
        imgs += list(self.answer_images)
        for call in self.calls:
            for msg in call.messages:
                imgs += msg.images()
        return imgs

    def save(self, directory: str | Path) -> Path:
        """Write ``trajectory.json`` and its images (as files) under ``directory``; atomic."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        saved: set[int] = set()
        for img in self.all_images():
            # The same frame is usually referenced several times (its step, the request that
            # sent it, the answer): one save sets its path for every reference.
            if img.loaded and id(img) not in saved:
                saved.add(id(img))
                img.save(directory)
        from eviseek.types.rundir import TRAJECTORY_FILE

        return write_atomic(directory / TRAJECTORY_FILE, self.model_dump_json(indent=1))

    @classmethod
    def load(cls, directory: str | Path) -> Trajectory:
        """Read a trajectory saved by :meth:`save` (images load lazily from the same folder)."""
        path = Path(directory)
        if path.is_dir():
            from eviseek.types.rundir import TRAJECTORY_FILE

            path = path / TRAJECTORY_FILE
        from eviseek.types.reading import MAX_TRAJECTORY_BYTES, read_text_capped

        return cls.model_validate(json.loads(read_text_capped(path, MAX_TRAJECTORY_BYTES, "a trajectory")))


def message_images(messages: list[ChatMessage]) -> list[Image]:
    """All images in a list of messages, in order."""
    out: list[Image] = []
    for m in messages:
        if not isinstance(m.content, str):
            out += [p.image for p in m.content if isinstance(p, ImagePart)]
    return out


def distinct_images(images: list[Image]) -> int:
    """How many different images a list holds: the paper's images-per-answer statistic counts an
    image attached twice to the answering call once (app. B de-duplicates repeated files).

    Images are the same when their pixel hashes match, or (unhashed) their saved paths do."""
    keys: set[object] = set()
    for i, image in enumerate(images):
        if image.sha256 is not None:
            keys.add(image.sha256)
        elif image.path is not None:
            keys.add(("path", image.path))
        elif image.loaded:
            keys.add(image.digest())
        else:
            keys.add(("unknown", i))
    return len(keys)
