"""What agents keep in ``Trajectory.plan``: one typed record per kind of agent.

``Trajectory.plan`` holds one of the records of :data:`AgentPlan`; agents write it and readers
(the answerer, replay, scoring, the viewer, AutoTool's scorer) read it by attribute. A saved
plan starts with its record's ``kind`` tag (``{"kind": "eviseek", ...}``); after it come the keys
the agent filled: a record writes a field only when it was set or no longer holds its default (so
an agent that never logged a coverage check writes no ``coverage`` key), and fields are declared
in the order agents fill them. A plugin agent declares a record of its own (a :class:`PlanRecord`
subclass with a ``plan_kind``) and registers it with :func:`register_plan`.

Reading is lenient, so trajectories saved by older versions and by plugin agents still load:

- which record a saved plan is, is read from its ``kind`` tag. Plans saved before the tag existed
  (legacy) have none; for those only, the record is inferred from the keys (``demands`` or
  ``subtasks``: EviSeek; ``stretches`` or ``map``: the frontier baseline; ``official``: imported
  ESI-Bench answers; AutoTool's ``declared``/``shown_size``; Single-model's
  ``ended_by``/``prompts``), and such a record is written back without a tag, byte for byte as it
  was read. Anything else, and a tag no record claims (a plugin that is not loaded), is a
  :class:`ModePlan`, whose unknown keys (the tag included) are kept as extras and written back
  unchanged;
- every record keeps keys it does not declare;
- a plan that does not fit its record at all loads as an :class:`UnreadPlan` that keeps the raw
  object and says what was wrong (the viewer shows both), instead of failing the whole load.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    Tag,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

SubtaskStatus = Literal["pending", "active", "done", "timed_out", "blocked"]
SUBTASK_STATUSES: tuple[str, ...] = ("pending", "active", "done", "timed_out", "blocked")
"""The statuses a subtask moves through (anything else is shown as unknown)."""


KIND_KEY = "kind"
"""The key of a saved plan that names its record (:attr:`PlanRecord.plan_kind`)."""


class PlanRecord(BaseModel):
    """Base of the plan records: keeps unknown keys and writes only the fields that were filled.

    A field is written when it was set (at construction or by assignment) or no longer equals its
    default (a list appended to), so the JSON holds exactly the keys the agent filled. A record
    that can stand as a whole ``Trajectory.plan`` names itself with :attr:`plan_kind`, written
    first as the ``kind`` key; parts of a record (a decision, a stretch) have none.
    """

    model_config = ConfigDict(extra="allow")

    plan_kind: ClassVar[str | None] = None
    """The record's ``kind`` tag (``None``: a part of a record, never a whole plan)."""
    _legacy: bool = PrivateAttr(default=False)
    # Read from a plan saved before the tag existed: written back without one, as it was read.

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        self._legacy = False  # built by an agent, not read: a new record, written with its tag

    @model_validator(mode="wrap")
    @classmethod
    def _read_kind(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        if cls.plan_kind is None or not isinstance(value, dict):
            return handler(value)
        tagged = KIND_KEY in value
        if tagged and value[KIND_KEY] == cls.plan_kind:
            # The tag is the record's own, not a key to keep; any other value (a plugin record
            # read as a ModePlan) stays as an extra and is written back unchanged.
            value = {key: item for key, item in value.items() if key != KIND_KEY}
        record = handler(value)
        record._legacy = not tagged
        return record

    @model_serializer(mode="wrap")
    def _filled_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields = type(self).model_fields
        filled = self.model_fields_set
        kept = {
            key: value
            for key, value in data.items()
            if key not in fields
            or key in filled
            or getattr(self, key) != fields[key].get_default(call_default_factory=True)
        }
        if self.plan_kind is None or self._legacy:
            return kept
        # The tag goes first; a foreign one (a plugin record read as a ModePlan) is kept as read.
        tag = kept.pop(KIND_KEY, self.plan_kind)
        return {KIND_KEY: tag, **kept}


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

    plan_kind: ClassVar[str | None] = "eviseek"

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

    plan_kind: ClassVar[str | None] = "mode"

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

    plan_kind: ClassVar[str | None] = "single_model"

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

    plan_kind: ClassVar[str | None] = "frontier"

    mode: str | None = None
    stretches: list[FrontierStretch] = Field(default_factory=list)
    ended_by: str | None = None
    map: FrontierMap | None = None


class AutoToolPlan(PlanRecord):
    """The AutoTool agent's record: the mode it ran in and the image sizes it worked with."""

    plan_kind: ClassVar[str | None] = "autotool"

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

    plan_kind: ClassVar[str | None] = "esibench_official"

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
    """Which built-in record a plan is: the record's class for an instance, its ``kind`` tag for
    JSON, and for a legacy plan (saved before the tag) what its keys say."""
    if isinstance(value, BaseModel):
        return _KIND_OF_CLASS.get(type(value), "mode")
    if not isinstance(value, dict):
        return "mode"
    if KIND_KEY in value:
        kind = value[KIND_KEY]
        return kind if isinstance(kind, str) and kind in _BUILT_IN_KINDS else "mode"
    # Legacy plans only: recognised by the keys their agents wrote.
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
_BUILT_IN_KINDS = frozenset(kind for kind in _KIND_OF_CLASS.values() if kind != "unread")

_PLUGIN_PLANS: dict[str, type[PlanRecord]] = {}


def register_plan(record: type[PlanRecord]) -> type[PlanRecord]:
    """Let a plugin agent keep a record of its own in ``Trajectory.plan``.

    ``record`` subclasses :class:`PlanRecord` and names its ``plan_kind`` (not a built-in one);
    saved plans tagged with that kind load as it. Usable as a class decorator. Registering the
    same class again is a no-op; another class under a taken kind is a ``ValueError``.
    """
    kind = record.plan_kind
    if not (isinstance(record, type) and issubclass(record, PlanRecord)) or not kind:
        raise ValueError(f"{record!r}: a plan record subclasses PlanRecord and names its plan_kind")
    taken = _PLUGIN_PLANS.get(kind)
    if kind in _BUILT_IN_KINDS or kind == "unread" or (taken is not None and taken is not record):
        raise ValueError(f"plan kind {kind!r} is already taken")
    _PLUGIN_PLANS[kind] = record
    return record


def plugin_plan(value: Any) -> type[PlanRecord] | None:
    """The registered plugin record a plan is (an instance of it, or JSON tagged with its kind)."""
    if isinstance(value, PlanRecord):
        record = _PLUGIN_PLANS.get(type(value).plan_kind or "")
        return record if record is type(value) else None
    if isinstance(value, dict) and isinstance(value.get(KIND_KEY), str):
        return _PLUGIN_PLANS.get(value[KIND_KEY])
    return None


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
"""What ``Trajectory.plan`` holds: the record of the agent that ran the episode (or a plugin's
record, registered with :func:`register_plan`; ``Trajectory`` reads and writes those itself)."""
