"""What agents keep in ``Trajectory.plan``: one typed record per kind of agent.

``Trajectory.plan`` holds one of the records of :data:`AgentPlan`; agents write it and readers
(the answerer, replay, scoring, the viewer, AutoTool's scorer) read it by attribute. The saved
JSON is the object agents wrote before the plan was typed, key for key: a record writes a field
only when it was set or no longer holds its default (so an agent that never logged a coverage
check writes no ``coverage`` key), and fields are declared in the order agents fill them.

Reading is lenient, so trajectories saved by older versions and by plugin agents still load:

- which record a saved plan is, is read from its keys (``demands`` or ``subtasks``: EviSeek;
  ``stretches`` or ``map``: the frontier baseline; ``official``: imported ESI-Bench answers;
  AutoTool's ``declared``/``shown_size``; Single-model's ``ended_by``/``prompts``); anything else
  is a :class:`ModePlan`, whose unknown keys are kept as extras and written back unchanged;
- every record keeps keys it does not declare;
- a plan that does not fit its record at all loads as an :class:`UnreadPlan` that keeps the raw
  object and says what was wrong (the viewer shows both), instead of failing the whole load.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
)

SubtaskStatus = Literal["pending", "active", "done", "timed_out", "blocked"]
SUBTASK_STATUSES: tuple[str, ...] = ("pending", "active", "done", "timed_out", "blocked")
"""The statuses a subtask moves through (anything else is shown as unknown)."""


class PlanRecord(BaseModel):
    """Base of the plan records: keeps unknown keys and writes only the fields that were filled.

    A field is written when it was set (at construction or by assignment) or no longer equals its
    default (a list appended to), so the JSON holds exactly the keys the agent filled.
    """

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _filled_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields = type(self).model_fields
        filled = self.model_fields_set
        return {
            key: value
            for key, value in data.items()
            if key not in fields
            or key in filled
            or getattr(self, key) != fields[key].get_default(call_default_factory=True)
        }


# ---------------------------------------------------------------- EviSeek


class Demand(BaseModel):
    """One evidence demand: what the answer needs to see or test."""

    model_config = ConfigDict(extra="allow")

    id: int
    text: str = ""


class Subtask(BaseModel):
    """One acquisition subtask: an observable goal serving one demand."""

    model_config = ConfigDict(extra="allow")

    id: int
    goal: str = ""
    demand: int | None = None
    """The demand it serves (``None`` in the no-demands ablation)."""
    status: str = "pending"
    """One of :data:`SUBTASK_STATUSES` (a string, so a record with another one still loads)."""
    steps: list[int] = Field(default_factory=list)
    """Indexes (``StepRecord.index``) of the atomic actions run for it."""


class SeekerDecision(PlanRecord):
    """One seeker decision: the subtask it served, the intent chosen, and what came of it."""

    index: int
    """1-based count of decisions in the episode (``StepRecord.decision`` points here)."""
    subtask: int
    intent: str
    """The intent named (its canonical name once compiled), or ``DONE``/``BLOCKED``."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The intent's arguments, as the seeker's reply gave them (values are whatever the reply
    held: a reply read as a Python literal may carry tuples, which must not fail the episode)."""
    target: str = ""
    reasoning: str = ""
    fallback: bool = False
    """The seeker's reply was unreadable and the safe default was taken."""
    executed: int = 0
    """Atomic actions run for it."""
    aborted: str | None = None
    """Why the intent was rejected or stopped early, if it was."""
    notes: list[str] = Field(default_factory=list)
    """What compiling the intent changed (a budget cut, a clamped argument)."""
    kept_current: bool = False
    """Split retention: the view the seeker decided on went on the board (written only then)."""


class CoverageCheck(PlanRecord):
    """One coverage check: which demands the evidence covers and what the controller decided.

    The ESI-Bench configuration's check (between subtasks) fills ``after_subtask``, ``covered``,
    ``decision`` and ``note``; the navigation variant's controller also ``trigger``, ``proposed``
    and ``at_step``.
    """

    after_subtask: int | None = None
    """The subtask just closed or being worked on (``None`` once the plan ran out)."""
    trigger: str | None = None
    """Navigation: ``new_evidence``, ``seeker_done``, ``seeker_blocked`` or ``plan_exhausted``."""
    covered: list[int] = Field(default_factory=list)
    decision: str = "continue"
    """The decision taken: ``continue``, ``replan`` or ``stop``."""
    proposed: str | None = None
    """Navigation: the decision the model proposed (the controller may overrule it)."""
    note: str = ""
    at_step: int | None = None


class EviSeekPlan(PlanRecord):
    """EviSeek's plan (and its variants'): demands, subtasks, mode and the decision logs."""

    demands: list[Demand] = Field(default_factory=list)
    subtasks: list[Subtask] = Field(default_factory=list)
    mode: str = "active"
    """``active``, or ``passive`` when adaptive seeking answered from the first view."""
    initial_frame_id: int = 0
    intents: list[str] = Field(default_factory=list)
    """The intent library offered to the seeker."""
    decisions: list[SeekerDecision] = Field(default_factory=list)
    """One entry per seeker decision."""
    coverage: list[CoverageCheck] = Field(default_factory=list)
    """Coverage checks, in order."""
    covered: list[int] = Field(default_factory=list)
    """``eviseek-nav``: the demands its coverage checks judged covered."""
    answered_from: str | None = None
    """``action_frames`` when an action's frames (Inclined Plane's slide) were answered on
    directly instead of the board (paper app. E); unset otherwise."""

    def demand(self, demand_id: int | None) -> Demand | None:
        """The demand with this id, if any."""
        return next((d for d in self.demands if d.id == demand_id), None)

    def next_pending(self) -> Subtask | None:
        """The first subtask not yet started."""
        return next((s for s in self.subtasks if s.status == "pending"), None)

    def decision(self, index: int | None) -> SeekerDecision | None:
        """The decision with this index, if any."""
        return next((d for d in self.decisions if d.index == index), None)


# ---------------------------------------------------------------- the baselines


class ModePlan(PlanRecord):
    """The plan of an agent that records only its mode (Passive, Blind), and the record of any
    saved plan no other record fits (a plugin's): its other keys are kept as extras."""

    mode: str | None = None


class ESIBenchTurn(PlanRecord):
    """One turn of Single-model with ESI-Bench's own prompts, in ESI-Bench's history form."""

    step: int
    action: Any = None
    """The reply's action, answer and reasoning as ESI-Bench's reader returned them."""
    answer: Any = None
    confidence: float = 0.0
    reasoning: Any = None
    image: str = ""
    """The file name the view was saved under for ESI-Bench's prompt."""
    action_result: dict[str, Any] | None = None
    """``operation``, ``success`` and ``reason`` of the executed action (absent when it stopped)."""


class SingleModelPlan(PlanRecord):
    """Single-model's record (its ESI-Bench-prompt variant's too): why the episode ended."""

    mode: str | None = None
    prompts: str | None = None
    """``esibench`` when ESI-Bench's own prompts were used."""
    ended_by: str | None = None
    esibench_history: list[ESIBenchTurn] = Field(default_factory=list)
    """The ESI-Bench-prompt variant's turn history, in ESI-Bench's own form."""


class FrontierStretch(PlanRecord):
    """One exploration stretch of the frontier baseline."""

    index: int
    at_step: int
    target: str
    """Where it headed (a frontier, or why there was none)."""
    actions: int


class FrontierMap(PlanRecord):
    """Cell counts of the frontier baseline's seen-only map at the end, and how it was built."""

    free: int = 0
    occupied: int = 0
    unknown: int = 0
    scans: int = 0
    """Range scans taken."""
    resolution_m: float = 0.0


class FrontierPlan(PlanRecord):
    """The frontier-exploration baseline's record: its stretches, why it ended, its map."""

    mode: str | None = None
    stretches: list[FrontierStretch] = Field(default_factory=list)
    ended_by: str | None = None
    map: FrontierMap | None = None


class AutoToolPlan(PlanRecord):
    """The AutoTool agent's record: the mode it ran in and the image sizes it worked with."""

    mode: str | None = None
    declared: bool = False
    """Whether the model declared its mode itself (false when the mode was forced or inferred)."""
    forced: str | None = None
    """The mode the agent was pinned to (``None`` when the model chose)."""
    shown_size: tuple[int, int] | None = None
    """Width and height of the image as shown to the model."""
    original_size: tuple[int, int] | None = None
    answer_text: str | None = None
    """The ``<answer>`` text as the model wrote it (``None`` when it gave none); the scorer reads
    it. Trajectories saved before it was recorded lack it (see :attr:`answer_recorded`)."""

    @property
    def answer_recorded(self) -> bool:
        """Whether the episode recorded its ``<answer>`` text (older trajectories did not)."""
        return "answer_text" in self.model_fields_set


class ESIBenchOfficialOutcome(PlanRecord):
    """What ESI-Bench's own evaluation recorded for an imported answer."""

    correct: bool | None = None
    soft_score: float | None = None
    stopped_by: str | None = None
    final_answer: dict[str, JsonValue] = Field(default_factory=dict)
    """ESI-Bench's ``final_answer`` object, as it wrote it."""


class ESIBenchOfficialPlan(PlanRecord):
    """An answer imported from ESI-Bench's official evaluation: why it stopped, its verdict."""

    ended_by: str | None = None
    mode: str | None = None
    official: ESIBenchOfficialOutcome = Field(default_factory=ESIBenchOfficialOutcome)


class UnreadPlan(BaseModel):
    """A saved plan that fits no record: kept as it was (and written back unchanged), with why."""

    raw: JsonValue = None
    problems: list[str] = Field(default_factory=list)

    @property
    def mode(self) -> str | None:
        """The plan's ``mode`` when it has a readable one."""
        mode = self.raw.get("mode") if isinstance(self.raw, dict) else None
        return mode if isinstance(mode, str) else None

    @model_serializer(mode="plain")
    def _as_saved(self) -> Any:
        return self.raw


# ---------------------------------------------------------------- the union


def plan_kind(value: Any) -> str:
    """Which record a plan is: the record's class for an instance, read from the keys for JSON."""
    if isinstance(value, BaseModel):
        return _KIND_OF_CLASS.get(type(value), "mode")
    if not isinstance(value, dict):
        return "mode"
    if "demands" in value or "subtasks" in value:
        return "eviseek"
    if "stretches" in value or "map" in value:
        return "frontier"
    if "official" in value:
        return "esibench_official"
    if {"declared", "shown_size", "original_size", "forced", "answer_text"} & value.keys():
        return "autotool"
    if {"ended_by", "prompts", "esibench_history"} & value.keys():
        return "single_model"
    return "mode"


_KIND_OF_CLASS: dict[type, str] = {
    EviSeekPlan: "eviseek",
    FrontierPlan: "frontier",
    ESIBenchOfficialPlan: "esibench_official",
    AutoToolPlan: "autotool",
    SingleModelPlan: "single_model",
    ModePlan: "mode",
    UnreadPlan: "unread",
}

AgentPlan = Annotated[
    Annotated[EviSeekPlan, Tag("eviseek")]
    | Annotated[FrontierPlan, Tag("frontier")]
    | Annotated[ESIBenchOfficialPlan, Tag("esibench_official")]
    | Annotated[AutoToolPlan, Tag("autotool")]
    | Annotated[SingleModelPlan, Tag("single_model")]
    | Annotated[ModePlan, Tag("mode")]
    | Annotated[UnreadPlan, Tag("unread")],
    Discriminator(plan_kind),
]
"""What ``Trajectory.plan`` holds: the record of the agent that ran the episode."""
