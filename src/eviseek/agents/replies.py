"""The reply schema of every agent stage.

Each model call an agent makes names one of these classes: its JSON schema travels in
``GenerateConfig.response_schema`` and the reply is validated against it by
:func:`eviseek.agents.parsing.parse_reply`. Validation is forgiving about form (a number where a
string is expected, ``"rationale"`` for ``"reasoning"``, a percentage confidence) and strict
about content the agent acts on.

Stages, reply models and the structured request metadata each call carries (every metadata
value is also stated in the prompt text; all calls also carry ``question``, ``question_id``,
``answer_kind``, ``options`` and ``format_hint``):

=============== =================== ==========================================================
stage           reply               metadata
=============== =================== ==========================================================
passive         AnswerReply         frame_ids
single_step     SingleStepReply     legal_actions, step, budget, frame_ids, guidance
forced_choice   ForcedChoiceReply   (contract only)
demands         DemandsReply        max_demands, guidance, intents
plan            PlanReply           demands, max_subtasks, guidance, intents
seek            SeekReply           subtask, demand, intents, legal_actions, remaining_steps,
                                    pose, frame_id, working_memory, trail, steps_used,
                                    guidance; with split retention also ask_keep=True
curate          CurateReply         intent, subtask, demand, candidate_frame_ids, outcomes,
                                    working_memory (split retention only)
keep            KeepReply           purpose="keep", intent, target, subtask, demand,
                                    before_frame_id, candidate_frame_ids, outcomes,
                                    working_memory
keep            TrackReply          purpose="track", target, frame_id (template ``track``)
answer          AnswerReply         memory, frame_ids, demands
triage          TriageReply         frame_id
coverage        CoverageReply       demands, closed, remaining, board_frame_ids; in the
                                    navigation variant (control="navigation", template
                                    ``coverage_nav``): trigger, covered_before, active,
                                    remaining, remaining_steps, board_frame_ids
blind           AnswerReply         frame_ids (always empty: no image is sent)
explore_check   EnoughInfoReply     step, budget, frame_ids, final, frontiers
=============== =================== ==========================================================

``frame_ids`` list the frame id of each image in the call, in order (``-1`` for a task
reference image).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator


def _as_text(value: Any) -> Any:
    """Numbers, lists and dicts an answer field received, as readable text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else str(value)
    if isinstance(value, list | tuple):
        return " | ".join(str(_as_text(v)) for v in value)
    return str(value)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class AnswerReply(_Reply):
    """The answering stage (EviSeek's answerer, Passive, replays)."""

    answer: str = Field(validation_alias=AliasChoices("answer", "final_answer", "prediction"))
    reasoning: str = Field(default="", validation_alias=AliasChoices("reasoning", "rationale", "reason"))

    _text = field_validator("answer", "reasoning", mode="before")(_as_text)


class ForcedChoiceReply(_Reply):
    """The forced-choice fallback: one allowed answer, nothing else."""

    answer: str = Field(validation_alias=AliasChoices("answer", "choice", "option", "final_answer"))

    _text = field_validator("answer", mode="before")(_as_text)


class SingleStepReply(_Reply):
    """Single-model's one reply per step: action, tentative answer, rationale, confidence."""

    action: str | dict[str, Any] | None = None
    reasoning: str = Field(
        default="", validation_alias=AliasChoices("reasoning", "rationale", "reason", "thought")
    )
    answer: str | None = None
    confidence: float = 0.0

    _text = field_validator("answer", "reasoning", mode="before")(_as_text)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> Any:
        # Models write 0.85, "0.85", "85%" or 85; all mean the same thing.
        if value is None:
            return 0.0
        if isinstance(value, str):
            text = value.strip().rstrip("%")
            try:
                value = float(text)
            except ValueError:
                return 0.0
        if isinstance(value, int | float) and not isinstance(value, bool):
            v = float(value)
            if v > 1.0:
                v = v / 100.0
            return min(1.0, max(0.0, v))
        return value


class DemandItem(_Reply):
    """One evidence demand as the model wrote it (ids are assigned by the agent)."""

    text: str = Field(validation_alias=AliasChoices("text", "demand", "description", "need"))

    @classmethod
    def _from_any(cls, value: Any) -> Any:
        return {"text": value} if isinstance(value, str) else value


class DemandsReply(_Reply):
    """Evidence-demand planning: what must be observed to answer."""

    _list_field: ClassVar[str] = "demands"
    demands: list[DemandItem]

    @field_validator("demands", mode="before")
    @classmethod
    def _items(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [DemandItem._from_any(v) for v in value]
        return value


class SubtaskItem(_Reply):
    """One acquisition subtask: an observable goal and the demand it serves."""

    goal: str = Field(validation_alias=AliasChoices("goal", "text", "subtask", "description"))
    demand: int | None = Field(default=None, validation_alias=AliasChoices("demand", "demand_id", "serves"))

    @field_validator("demand", mode="before")
    @classmethod
    def _demand(cls, value: Any) -> Any:
        # "d2", "demand 2" and "2" all name demand 2; anything else is left unassigned.
        if isinstance(value, str):
            digits = "".join(ch for ch in value if ch.isdigit())
            return int(digits) if digits else None
        if isinstance(value, list):
            return value[0] if value else None
        return value


def _subtasks(value: Any) -> Any:
    if isinstance(value, list):
        return [{"goal": v} if isinstance(v, str) else v for v in value]
    return value


class PlanReply(_Reply):
    """Acquisition planning: an ordered list of subtasks."""

    _list_field: ClassVar[str] = "subtasks"
    subtasks: list[SubtaskItem] = Field(validation_alias=AliasChoices("subtasks", "plan", "steps"))

    _items = field_validator("subtasks", mode="before")(_subtasks)


class SeekReply(_Reply):
    """Evidence seeking: the intent to execute next (or ``DONE`` / ``BLOCKED`` for the subtask)."""

    intent: str = Field(validation_alias=AliasChoices("intent", "action", "command"))
    args: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("args", "arguments", "params")
    )
    target: str = ""
    reasoning: str = Field(default="", validation_alias=AliasChoices("reasoning", "rationale", "reason"))
    keep: bool = Field(default=False, validation_alias=AliasChoices("keep", "keep_view", "retain"))
    """Split retention only: keep the current view on the evidence board (absent means no)."""
    keep_note: str = Field(default="", validation_alias=AliasChoices("keep_note", "note"))

    _text = field_validator("target", "reasoning", "keep_note", mode="before")(_as_text)

    @field_validator("keep", mode="before")
    @classmethod
    def _keep(cls, value: Any) -> Any:
        return False if value is None else value

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        return {} if value is None else value


class KeepReply(_Reply):
    """Retention: keep the new view(s) and outcome on the evidence board or not."""

    keep: bool = Field(validation_alias=AliasChoices("keep", "retain", "save"))
    frames: list[int] = Field(default_factory=list)
    """1-based positions among the candidate views shown; empty means the last one."""
    note: str = ""

    _text = field_validator("note", mode="before")(_as_text)

    @field_validator("frames", mode="before")
    @classmethod
    def _frames(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, int):
            return [value]
        return value


class CurateReply(_Reply):
    """Split retention's curator: which intermediate frames of an intent go on the board."""

    frames: list[int] = Field(
        default_factory=list, validation_alias=AliasChoices("frames", "keep", "selected")
    )
    """1-based positions among the frames shown; empty keeps none."""
    note: str = ""

    _text = field_validator("note", mode="before")(_as_text)

    @field_validator("frames", mode="before")
    @classmethod
    def _frames(cls, value: Any) -> Any:
        if value is None or value is False:
            return []
        if isinstance(value, int) and not isinstance(value, bool):
            return [value]
        return value


class TrackReply(_Reply):
    """A short check during APPROACH or ORBIT: is the target still in view?"""

    visible: bool = Field(validation_alias=AliasChoices("visible", "in_view", "target_visible"))
    note: str = ""

    _text = field_validator("note", mode="before")(_as_text)


class CoverageReply(_Reply):
    """Coverage-driven control: which demands the board covers and what to do next."""

    covered: list[int] = Field(default_factory=list)
    decision: Literal["continue", "replan", "stop"] = "continue"
    subtasks: list[SubtaskItem] = Field(default_factory=list)
    """New remaining subtasks when ``decision`` is ``replan``."""
    note: str = ""

    _text = field_validator("note", mode="before")(_as_text)
    _items = field_validator("subtasks", mode="before")(_subtasks)

    @field_validator("decision", mode="before")
    @classmethod
    def _decision(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("covered", mode="before")
    @classmethod
    def _covered(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, int):
            return [value]
        return value


class TriageReply(_Reply):
    """Adaptive seeking's first decision: does the initial view already settle the question?"""

    sufficient: bool = Field(validation_alias=AliasChoices("sufficient", "enough", "answerable"))
    answer: str | None = None
    reasoning: str = Field(default="", validation_alias=AliasChoices("reasoning", "rationale", "reason"))

    _text = field_validator("answer", "reasoning", mode="before")(_as_text)


class EnoughInfoReply(_Reply):
    """The frontier baseline's check before each stretch: enough to answer, and where to look."""

    enough: bool = Field(validation_alias=AliasChoices("enough", "sufficient", "answerable"))
    answer: str = ""
    direction: Literal["left", "ahead", "right", "behind", ""] = ""
    reasoning: str = Field(default="", validation_alias=AliasChoices("reasoning", "rationale", "reason"))

    _text = field_validator("answer", "reasoning", mode="before")(_as_text)

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: Any) -> Any:
        if value is None:
            return ""
        text = str(value).strip().lower()
        for word in ("left", "ahead", "right", "behind"):
            if text.startswith(word):
                return word
        return {"forward": "ahead", "front": "ahead", "back": "behind", "none": ""}.get(text, "")
