"""What agents keep in ``Trajectory.plan``, as records: the one declaration of its schema.

Agents still store the plan as a JSON object (``Trajectory.plan`` is a ``dict``); these records
say what its keys mean and are how readers (the viewer, scorers) parse it. Reading is lenient:
unknown keys are kept and missing ones take their defaults, so trajectories saved by older
versions still read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SubtaskStatus = Literal["pending", "active", "done", "timed_out", "blocked"]
SUBTASK_STATUSES: tuple[str, ...] = ("pending", "active", "done", "timed_out", "blocked")
"""The statuses a subtask moves through (anything else is shown as unknown)."""


class PlanDemand(BaseModel):
    """One evidence demand (``plan["demands"][i]``)."""

    model_config = ConfigDict(extra="allow")

    id: int
    text: str = ""


class PlanSubtask(BaseModel):
    """One acquisition subtask serving a demand (``plan["subtasks"][i]``)."""

    model_config = ConfigDict(extra="allow")

    id: int
    goal: str = ""
    demand: int | None = None
    """The demand it serves (``None`` in the no-demands ablation)."""
    status: str = "pending"
    steps: list[int] = Field(default_factory=list)
    """Indexes (``StepRecord.index``) of the atomic actions run for it."""


class EviSeekPlanRecord(BaseModel):
    """EviSeek's plan (and its navigation variant's): demands, subtasks and the decision logs."""

    model_config = ConfigDict(extra="allow")

    demands: list[PlanDemand] = Field(default_factory=list)
    subtasks: list[PlanSubtask] = Field(default_factory=list)
    mode: str = "active"
    """``active``, or ``passive`` when adaptive seeking answered from the first view."""
    initial_frame_id: int = 0
    intents: list[str] = Field(default_factory=list)
    """The intent library offered to the seeker."""
    decisions: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per seeker decision (subtask, intent, arguments, outcome)."""
    coverage: list[dict[str, Any]] = Field(default_factory=list)
    """Coverage-control records: after which subtask, covered demands, decision, note."""
    covered: list[int] = Field(default_factory=list)
    """``eviseek-nav``: the demands its coverage checks judged covered."""


class SingleModelPlanRecord(BaseModel):
    """Single-model's record (its ESI-Bench-prompt variant's too): why the episode ended."""

    model_config = ConfigDict(extra="allow")

    mode: str | None = None
    ended_by: str | None = None
    prompts: str | None = None
    """``esibench`` when ESI-Bench's own prompts were used."""
    esibench_history: list[Any] = Field(default_factory=list)
    """The ESI-Bench-prompt variant's turn history, in ESI-Bench's own form."""


class FrontierPlanRecord(BaseModel):
    """The frontier-exploration baseline's record: its exploration stretches and map summary."""

    model_config = ConfigDict(extra="allow")

    mode: str | None = None
    ended_by: str | None = None
    stretches: list[dict[str, Any]] = Field(default_factory=list)
    map: dict[str, Any] = Field(default_factory=dict)
    """Cell counts of the seen-only map, range scans taken and its resolution."""


class AutoToolPlanRecord(BaseModel):
    """The AutoTool agent's record: the mode it ran in and the image sizes it worked with."""

    model_config = ConfigDict(extra="allow")

    mode: str | None = None
    declared: str | None = None
    """The mode the model declared (``None`` if it declared none)."""
    forced: str | None = None
    shown_size: tuple[int, int] | None = None
    original_size: tuple[int, int] | None = None
